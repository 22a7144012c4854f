-- fifo.lua: first in, first out, batch-granular. Like lru.lua, but a hit does not refresh a slot:
-- the occupied slots inserted earliest are evicted (ties to the lower slot).
local lib = require "cachelib"

return {
    name = "fifo",
    description = "batch-granular FIFO over this batch's misses",
    params = { f = 0.25 },

    cache_init = function(ctx)
        return { capacity = math.floor(ctx.params.f * ctx.halo.n) }
    end,

    cache_batch = function(ctx, b)
        return lib.demand_replace(ctx, b, ctx.cache.inserted)
    end,
}
