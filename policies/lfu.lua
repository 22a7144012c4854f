-- lfu.lua: least frequently used ("perfect" LFU), batch-granular. Every halo node counts its
-- accesses (hits + misses), kept across evictions: ctx.cache.score holds the count of each cached
-- node, ctx.halo.score the count of the others. After each batch the cache holds the `capacity`
-- nodes of highest count among those cached and this batch's misses (cachelib.keep_best: on a
-- tie a cached node stays).
local lib = require "cachelib"

return {
    name = "lfu",
    description = "batch-granular LFU with access counts kept across evictions",
    params = { f = 0.25 },

    cache_init = function(ctx)
        ctx.halo.score:fill(0)
        return { capacity = math.floor(ctx.params.f * ctx.halo.n), score = 0 }
    end,

    cache_batch = function(ctx, b)
        local SC, HC = ctx.cache.score, ctx.halo.score
        SC:add_at(b.hit_slots, 1)
        HC:add_at(b.miss_halo, 1)
        local d, slots, admit_pos = lib.keep_best(ctx, b, HC:gather(b.miss_halo), SC, false)
        if d == nil then
            return nil
        end
        if d.evict then   -- evicted nodes keep their count
            HC:set_at(lib.slot_pos(ctx, d.evict), SC:gather(d.evict))
        end
        SC:set_at(slots, HC:gather(admit_pos))
        return d
    end,
}
