-- Lab 3 starter: cache_init / cache_batch for `halo lab check 3` / `halo lab grade 3`.
-- It runs and scores low: first in, first out. The cache takes 10% of the halo set, admits
-- each batch's misses and evicts the slots that entered longest ago, whether they are still
-- used or not. Keep the capacity at floor(0.1 * ctx.halo.n): more is refused.
return {
    name = "lab3-starter",

    cache_init = function(ctx)
        return { capacity = math.floor(0.1 * ctx.halo.n) }
    end,

    cache_batch = function(ctx, b)
        local C = ctx.cache.capacity
        if b.n_miss == 0 or C == 0 then
            return nil
        end
        local n = math.min(b.n_miss, C)
        local need = n - (C - ctx.cache.used)
        local evict = nil
        if need > 0 then
            -- the `need` occupied slots with the smallest insertion step; empty slots
            -- (id -1) are never chosen because the cache is full when need > 0 and all
            -- slots are occupied
            local occ = ctx.cache.id:ge(0):where()
            local _, order = ctx.cache.inserted:gather(occ):topk(need, true)
            evict = occ:gather(order)
        end
        local miss = b.miss_halo
        if n < b.n_miss then
            miss = miss:slice(0, n)
        end
        return { evict = evict, admit = ctx.halo.ids:gather(miss) }
    end,
}
