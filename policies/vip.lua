-- vip.lua: SALIENT++'s static cache (Kaler et al., MLSys 2023): the halo nodes with the highest
-- vertex inclusion probability, i.e. the probability that a node is an input node of one of this
-- rank's mini-batches, propagated from the rank's seeds through the fanouts. The propagation is
-- a C mechanism (halo_cache_vip); `hint = "vip"` asks the runtime to put the probabilities into
-- ctx.halo.score before cache_init. Chosen once, never replaced.
return {
    name = "vip",
    description = "static cache of the halo nodes of highest inclusion probability (SALIENT++)",
    params = { f = 0.25, hint = "vip" },

    cache_init = function(ctx)
        local k = math.floor(ctx.params.f * ctx.halo.n)
        local _, top = ctx.halo.score:topk(k)      -- highest probability first, ties lower position
        return { capacity = k, ids = ctx.halo.ids:gather(top) }
    end,
}
