-- pagraph.lua: PaGraph's static cache (Lin et al., SoCC 2020) applied to remote features: the
-- halo nodes of highest in-degree, chosen once before training and never replaced.
--   capacity: floor(f * |halo set|) rows; ties in degree go to the lower halo position.
return {
    name = "pagraph",
    description = "static cache of the top in-degree halo nodes (PaGraph)",
    params = { f = 0.25 },

    cache_init = function(ctx)
        local k = math.floor(ctx.params.f * ctx.halo.n)
        local _, top = ctx.halo.deg:topk(k)        -- positions of the k highest in-degrees
        return { capacity = k, ids = ctx.halo.ids:gather(top) }
    end,
}
