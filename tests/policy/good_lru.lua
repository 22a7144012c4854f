-- good_lru.lua: a least-recently-hit cache (the README's example), kept full: up to 64 of each
-- batch's misses replace the slots hit longest ago.
return {
    name = "lru",
    params = { fraction = 0.25, per_batch = 64 },

    cache_init = function(ctx)
        local k = math.floor(ctx.params.fraction * ctx.halo.n)
        local _, top = ctx.halo.deg:topk(k)
        return { capacity = k, ids = ctx.halo.ids:gather(top) }
    end,

    cache_batch = function(ctx, b)
        local n = math.min(b.n_miss, ctx.params.per_batch, ctx.cache.used)
        if n == 0 then return nil end
        local _, old = ctx.cache.last_hit:topk(n, true)  -- smallest last_hit first
        return { evict = old, admit = ctx.halo.ids:gather(b.miss_halo:slice(0, n)) }
    end,
}
