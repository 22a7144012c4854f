-- Over budget on purpose (tests/e2e/lab.sh): asks for half of the halo set as cache, filled
-- with the highest-degree halo nodes (lab 3 allows 10%, lab 4 25%).
return {
    name = "cache_too_big",
    cache_init = function(ctx)
        local k = math.floor(0.5 * ctx.halo.n)
        local _, top = ctx.halo.deg:topk(k)
        return { capacity = k, ids = ctx.halo.ids:gather(top) }
    end,
}
