-- default.lua: halo's built-in choices written out, a starting point for new policies.
-- Every hook here returns exactly what halo does when the hook is left out.
local halo = require "halo"

return {
    name = "default",
    description = "halo's defaults: METIS (nodes, train), fanouts 10,25, synchronous, no cache",

    -- Parameters: override with `--set fanout1=15` (declared names only, typed by their default).
    params = { fanout1 = 10, fanout2 = 25 },

    partition = function(g)
        return { method = "metis", constraints = { "nodes", "train" }, imbalance = 1.05,
                 objective = "cut" }
    end,

    fanout = function(ctx)
        return { ctx.params.fanout1, ctx.params.fanout2 }
    end,

    pipeline = function(ctx)
        return { depth = 0, sampler_threads = 1 }
    end,

    cache_init = function(ctx)
        return { capacity = 0 }
    end,
}
