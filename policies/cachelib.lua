-- cachelib.lua: vector building blocks shared by the cache policies (lru, fifo, lfu, belady).
-- No per-node Lua: every step is one vector method over a whole array.
local halo = require "halo"
local M = {}

-- Demand replacement: admit this batch's misses (the first `capacity` in input order) and evict,
-- among occupied slots, the ones of lowest key (ties to the lower slot) to make room.
function M.demand_replace(ctx, b, key)
    local C = ctx.cache.capacity
    if b.n_miss == 0 or C == 0 then
        return nil
    end
    local n = math.min(b.n_miss, C)
    local need = n - (C - ctx.cache.used)
    local evict = nil
    if need > 0 then
        local occ = ctx.cache.id:ge(0):where()
        local _, order = key:gather(occ):topk(need, true)
        evict = occ:gather(order)
    end
    return { evict = evict, admit = ctx.halo.ids:gather(b.miss_halo:slice(0, n)) }
end

-- Keeps the `capacity` best nodes among those cached and this batch's misses. miss_value[k] is
-- the value of miss k (b.miss_halo order), slot_value[s] the value of the node in slot s; the
-- best are the smallest values when `smallest`, else the largest. Only the excess is selected
-- (drop the worst n_occupied + n_miss - capacity), over candidates listed misses first then
-- occupied slots in slot order, ties dropping the lower position: so on a tie a cached node
-- stays and an earlier miss is dropped first. Returns the decision (nil when nothing changes)
-- and the slots the admitted nodes will occupy (the evicted slots, then the empty ones).
function M.keep_best(ctx, b, miss_value, slot_value, smallest)
    local C = ctx.cache.capacity
    if b.n_miss == 0 or C == 0 then
        return nil
    end
    local occ = ctx.cache.id:ge(0):where()
    local empty = ctx.cache.id:lt(0):where()
    local excess = occ:len() + b.n_miss - C
    if excess <= 0 then
        return { admit = ctx.halo.ids:gather(b.miss_halo) }, empty:slice(0, b.n_miss)
    end
    local cand = miss_value:concat(slot_value:gather(occ))
    local _, drop = cand:topk(excess, not smallest)
    local dropped = halo.array("bool", cand:len())
    dropped:set_at(drop, true)
    local admit = ctx.halo.ids:gather(b.miss_halo:filter(dropped:slice(0, b.n_miss):lnot()))
    local evict = occ:filter(dropped:slice(b.n_miss))
    if admit:len() == 0 then
        return nil
    end
    return { evict = evict, admit = admit }, evict:concat(empty)
end

return M
