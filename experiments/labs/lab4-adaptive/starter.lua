-- Lab 4 starter: epoch_end + cache hooks for `halo lab check 4` / `halo lab grade 4`.
-- It runs and scores low: it starts with no cache and no pipeline (DistDGL's behaviour) and
-- its epoch_end only reads the statistics. Make it adapt: grow or refill a prefetch buffer
-- from what ctx.last_epoch reports, score halo nodes, or deepen the pipeline when the
-- fetches dominate. Capacity at most floor(0.25 * ctx.halo.n) per rank; fanouts stay 10,25.
return {
    name = "lab4-starter",
    params = { f = 0.0 },

    cache_init = function(ctx)
        return { capacity = math.floor(ctx.params.f * ctx.halo.n) }
    end,

    epoch_end = function(ctx)
        local e = ctx.last_epoch
        local misses = e.cache_misses
        local hits = e.cache_hits
        -- a student's policy would decide something here
        return nil
    end,
}
