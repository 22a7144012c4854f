-- belady.lua: the offline optimum (Belady's MIN with bypass), the bound other policies are
-- measured against. Sampling is deterministic, so the runtime pre-samples the run and, because
-- this policy declares `hint = "next_use"`, writes into the score arrays before every hook the
-- step of each node's next use (math.huge = never): ctx.halo.score per halo node, and
-- ctx.cache.score per slot (math.huge for an empty slot). The cache starts with the nodes used
-- first; after each batch it keeps the `capacity` nodes with the nearest next use among those
-- cached and this batch's misses (cachelib.keep_best; any tie rule is optimal).
-- Admissions are this batch's misses only (no prefetch), so no demand policy can beat its hits.
local lib = require "cachelib"

return {
    name = "belady",
    description = "offline optimum: keep the nodes whose next use is nearest (needs look-ahead)",
    params = { f = 0.25, hint = "next_use" },

    cache_init = function(ctx)
        local k = math.floor(ctx.params.f * ctx.halo.n)
        local first, pos = ctx.halo.score:topk(k, true)   -- earliest first use
        return { capacity = k, ids = ctx.halo.ids:gather(pos:filter(first:lt(math.huge))) }
    end,

    cache_batch = function(ctx, b)
        return (lib.keep_best(ctx, b, ctx.halo.score:gather(b.miss_halo), ctx.cache.score, true))
    end,
}
