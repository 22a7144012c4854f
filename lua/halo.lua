---@meta halo
-- LuaLS annotations of the `halo` module and of the hooks' arguments, for editors (completion,
-- type checks). Not loaded at run time: halo provides the module itself (`require "halo"` or the
-- global `halo`). Point your editor at it, e.g. in .luarc.json:
--   { "workspace.library": ["<halo>/lua"], "runtime.version": "Lua 5.4" }
-- The reference of record is `halo policy doc`; lua/README.md explains with examples.

---@alias halo.type "int32"|"int64"|"float32"|"float64"|"bool"

---An array of C memory: zero-copy views of the runtime's arrays (valid during the hook call
---that made them) or arrays the policy creates. Indices are 0-based. Methods run in C over the
---whole array; mutating methods work in place and return the array itself.
---@class halo.array
---@operator len: integer
local array = {}

---@return integer
function array:len() end
---@return halo.type
function array:type() end
---Element i (0-based); for small use, not in loops.
---@param i integer
---@return number|boolean
function array:get(i) end
---@param i integer
---@param v number|boolean
---@return halo.array self
function array:set(i, v) end
---@param v number|boolean
---@return halo.array self
function array:fill(v) end
---A new copy; with src, copies src (same type and length) into self and returns self.
---@param src? halo.array
---@return halo.array
function array:copy(src) end
---A new array of the elements [i, j).
---@param i integer
---@param j? integer
---@return halo.array
function array:slice(i, j) end
---@param b halo.array
---@return halo.array
function array:concat(b) end
---@param t halo.type
---@return halo.array
function array:astype(t) end
---The elements [i, j) as a Lua sequence.
---@param i? integer
---@param j? integer
---@return (number|boolean)[]
function array:to_table(i, j) end
---@param s number
---@return halo.array self
function array:scale(s) end
---@param x number|halo.array
---@return halo.array self
function array:add(x) end
---@param x number|halo.array
---@return halo.array self
function array:sub(x) end
---@param x number|halo.array
---@return halo.array self
function array:mul(x) end
---Float arrays only.
---@param x number|halo.array
---@return halo.array self
function array:div(x) end
---self[i] = max(self[i], x) (a NaN in self stays, one in x is ignored).
---@param x number|halo.array
---@return halo.array self
function array:maximum(x) end
---self[i] = min(self[i], x).
---@param x number|halo.array
---@return halo.array self
function array:minimum(x) end
---Scatter-add: self[idx[k]] += x (or x[k]); repeated indices accumulate.
---@param idx halo.array int32 or int64 positions
---@param x number|halo.array
---@return halo.array self
function array:add_at(idx, x) end
---@param idx halo.array
---@param x number|halo.array
---@return halo.array self
function array:scale_at(idx, x) end
---self[idx[k]] /= x (or x[k]); float arrays only.
---@param idx halo.array
---@param x number|halo.array
---@return halo.array self
function array:div_at(idx, x) end
---@param idx halo.array
---@param x number|boolean|halo.array
---@return halo.array self
function array:set_at(idx, x) end
---A new array: self[idx[0]], self[idx[1]], ...
---@param idx halo.array
---@return halo.array
function array:gather(idx) end
---Positions (int32) of the true / nonzero elements.
---@return halo.array
function array:where() end
---@param mask halo.array bool, same length
---@return halo.array
function array:filter(mask) end
---The k largest (smallest) elements and their positions, best first, ties by lower position.
---@param k integer
---@param smallest? boolean
---@return halo.array values
---@return halo.array positions
function array:topk(k, smallest) end
---Bool mask, true at the k positions topk(k, smallest) returns (the set only: cheaper).
---@param k integer
---@param smallest? boolean
---@return halo.array mask
function array:topk_mask(k, smallest) end
---Stable order of positions (int32).
---@param descending? boolean
---@return halo.array
function array:argsort(descending) end
---@param descending? boolean
---@return halo.array
function array:sort(descending) end
---@return halo.array
function array:unique() end
---Position of each value in self (sorted ascending), -1 if absent.
---@param values halo.array
---@return halo.array
function array:search(values) end
---@return number
function array:sum() end
---@return number?
function array:mean() end
---@return number? value
---@return integer? position
function array:min() end
---@return number? value
---@return integer? position
function array:max() end
---@return integer
function array:count() end
---@param x number|halo.array
---@return halo.array mask
function array:lt(x) end
---@param x number|halo.array
---@return halo.array mask
function array:le(x) end
---@param x number|halo.array
---@return halo.array mask
function array:gt(x) end
---@param x number|halo.array
---@return halo.array mask
function array:ge(x) end
---@param x number|boolean|halo.array
---@return halo.array mask
function array:eq(x) end
---@param x number|boolean|halo.array
---@return halo.array mask
function array:ne(x) end
---@param m halo.array
---@return halo.array mask
function array:land(m) end
---@param m halo.array
---@return halo.array mask
function array:lor(m) end
---@return halo.array mask
function array:lnot() end

---@class halo.stats
---@field epoch integer
---@field batch integer
---@field batches integer
---@field seeds integer
---@field input_nodes integer
---@field sampled_edges integer
---@field remote_nodes integer
---@field cache_hits integer
---@field cache_misses integer
---@field bytes_remote integer
---@field loss number
---@field time_s number
---@field sample_s number
---@field fetch_s number
---@field compute_s number
---@field wait_s number

---@class halo.graph_summary
---@field nodes integer
---@field edges integer
---@field feat_dim integer
---@field classes integer
---@field train_nodes integer

---@class halo.part_summary
---@field parts integer
---@field id integer
---@field nodes integer
---@field edges integer
---@field train_nodes integer

---This rank's halo set: nodes of other parts that are sources of its in-edges.
---@class halo.halo_set
---@field n integer
---@field ids halo.array int32[n], sorted ascending (read-only)
---@field deg halo.array int32[n] in-degree (read-only)
---@field owner halo.array int32[n] owning part (read-only)
---@field misses halo.array int64[n] cache misses so far (read-only)
---@field score halo.array float64[n], writable, owned by the policy

---@class halo.cache
---@field capacity integer
---@field used integer
---@field id halo.array int32[capacity] node in each slot, -1 empty (read-only)
---@field hits halo.array int64[capacity] (read-only)
---@field last_hit halo.array int64[capacity] step of the last hit, -1 none (read-only)
---@field inserted halo.array int64[capacity] step the node entered (read-only)
---@field score halo.array float64[capacity], writable, owned by the policy
---@field pos halo.array|nil int32[capacity] halo position of each slot's node, -1 empty (read-only; nil when the caller keeps none)

---@class halo.ctx
---@field rank integer
---@field ranks integer
---@field epoch integer
---@field epochs integer
---@field batch integer
---@field batches integer
---@field step integer
---@field batch_size integer
---@field params table<string, number|boolean|string>
---@field graph halo.graph_summary
---@field part halo.part_summary
---@field halo halo.halo_set
---@field cache halo.cache
---@field last_batch halo.stats
---@field last_epoch halo.stats

---@class halo.batch
---@field epoch integer
---@field batch integer
---@field step integer
---@field n_input integer
---@field input halo.array? int32[n_input] global ids
---@field n_hit integer
---@field hit_slots halo.array int32[n_hit] slots hit
---@field n_miss integer
---@field miss_halo halo.array int32[n_miss] positions in ctx.halo.ids

---@class halo.graph_info
---@field name string
---@field nodes integer
---@field edges integer
---@field feat_dim integer
---@field classes integer
---@field train_nodes integer
---@field parts integer
---@field indptr halo.array? int64[nodes+1]
---@field indices halo.array? int32[edges]
---@field params table<string, number|boolean|string>

---@class halo.partition_choice
---@field method? "metis"|"multilevel"|"random"|"stream"|"custom"
---@field parts? integer
---@field machines? integer
---@field constraints? ("nodes"|"train"|"edges")[]
---@field imbalance? number
---@field objective? "cut"|"vol"
---@field seed? integer
---@field assign? halo.array|integer[]

---@class halo.cache_plan
---@field capacity integer
---@field ids? halo.array|integer[]
---@field score? number

---@class halo.cache_decision
---@field evict? halo.array|integer[]
---@field admit? halo.array|integer[]

---@class halo.policy
---@field name? string
---@field description? string
---@field params? table<string, number|boolean|string>
---@field partition? fun(g: halo.graph_info): halo.partition_choice
---@field fanout? fun(ctx: halo.ctx): integer[]|halo.array
---@field pipeline? fun(ctx: halo.ctx): {depth?: integer, sampler_threads?: integer}|integer
---@field cache_init? fun(ctx: halo.ctx): halo.cache_plan
---@field cache_batch? fun(ctx: halo.ctx, b: halo.batch): halo.cache_decision|nil
---@field epoch_end? fun(ctx: halo.ctx)

---@class halo
halo = {}
---halo's version.
---@type string
halo.version = ""

---New array of n elements, all 0/false or value.
---@param type halo.type
---@param n integer
---@param value? number|boolean
---@return halo.array
function halo.array(type, n, value) end
---@param type halo.type
---@param t (number|boolean)[]
---@return halo.array
function halo.from_table(type, t) end
---0, 1, ..., n-1.
---@param n integer
---@param type? halo.type
---@return halo.array
function halo.range(n, type) end
---@param x any
---@return boolean
function halo.is_array(x) end
---Prints a line to halo's log.
---@param ... any
function halo.log(...) end

return halo
