-- lru.lua: least recently used, batch-granular. The cache starts empty; every batch admits its
-- missed halo nodes (the first `capacity` of them, in input order, when there are more) and frees
-- room by evicting the occupied slots used longest ago: recency = max(last hit, insertion step),
-- ties to the lower slot. Admissions are this batch's misses, so they cost no extra bytes.
local lib = require "cachelib"

return {
    name = "lru",
    description = "batch-granular LRU over this batch's misses",
    params = { f = 0.25 },

    cache_init = function(ctx)
        return { capacity = math.floor(ctx.params.f * ctx.halo.n) }
    end,

    cache_batch = function(ctx, b)
        local recency = ctx.cache.last_hit:copy():maximum(ctx.cache.inserted)
        return lib.demand_replace(ctx, b, recency)
    end,
}
