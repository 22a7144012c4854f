-- cachelib.lua: vector building blocks shared by the cache policies (lru, fifo, lfu, belady).
-- No per-node Lua: every step is one vector method over a whole array. Once the cache is full
-- (the steady state) the slot arrays are used as they are: no pass to list the occupied slots.
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
        if ctx.cache.used == C then              -- full: the position in key is the slot
            local _
            _, evict = key:topk(need, true)
        else
            local occ = ctx.cache.id:ge(0):where()
            local _, order = key:gather(occ):topk(need, true)
            evict = occ:gather(order)
        end
    end
    local miss = b.miss_halo
    if n < b.n_miss then
        miss = miss:slice(0, n)
    end
    return { evict = evict, admit = ctx.halo.ids:gather(miss) }
end

-- Keeps the `capacity` best nodes among those cached and this batch's misses. miss_value[k] is
-- the value of miss k (b.miss_halo order), slot_value[s] the value of the node in slot s; the
-- best are the smallest values when `smallest`, else the largest. Only the excess is selected
-- (drop the worst n_occupied + n_miss - capacity), over candidates listed misses first then
-- occupied slots in slot order, ties dropping the lower position: so on a tie a cached node
-- stays and an earlier miss is dropped first. Returns the decision (nil when nothing changes),
-- the slots the admitted nodes will occupy (the evicted slots, then the empty ones) and the
-- halo positions of the admitted nodes.
function M.keep_best(ctx, b, miss_value, slot_value, smallest)
    local C = ctx.cache.capacity
    if b.n_miss == 0 or C == 0 then
        return nil
    end
    local m = b.n_miss
    local full = ctx.cache.used == C
    local occ, empty, n_occ = nil, nil, C
    if not full then
        occ = ctx.cache.id:ge(0):where()
        empty = ctx.cache.id:lt(0):where()
        n_occ = occ:len()
    end
    local excess = n_occ + m - C
    if excess <= 0 then                           -- (never when full: excess = m > 0)
        return { admit = ctx.halo.ids:gather(b.miss_halo) }, empty:slice(0, m), b.miss_halo
    end
    local cand = miss_value:concat(full and slot_value or slot_value:gather(occ))
    local dropped = cand:topk_mask(excess, not smallest)
    local admit_pos = b.miss_halo:filter(dropped:slice(0, m):lnot())
    if admit_pos:len() == 0 then
        return nil
    end
    local gone = dropped:slice(m)
    local evict, slots
    if full then
        evict = gone:where()
        slots = evict
    else
        evict = occ:filter(gone)
        slots = evict:concat(empty)
    end
    return { evict = evict, admit = ctx.halo.ids:gather(admit_pos) }, slots, admit_pos
end

-- Halo positions of the nodes in the given (occupied) slots: a gather of ctx.cache.pos, or a
-- search of the halo ids where the caller does not provide it.
function M.slot_pos(ctx, slots)
    local pos = ctx.cache.pos
    if pos then
        return pos:gather(slots)
    end
    return ctx.halo.ids:search(ctx.cache.id:gather(slots))
end

return M
