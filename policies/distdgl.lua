-- distdgl.lua: DistDGL's choices (Zheng et al. 2020; the baseline of DistDGLv2 and MassiveGNN).
--   partition: METIS, minimum edge cut, balancing nodes, training nodes and edges per part
--   sampling:  GraphSAGE fanouts 10,25 (DGL order: input layer first)
--   pipeline:  none (depth 0: sample, fetch and compute one batch after the other)
--   cache:     none (every remote feature is pulled on each mini-batch)
return {
    name = "distdgl",
    description = "DistDGL: METIS (nodes, train, edges), fanout 10,25, depth 0, no cache",
    params = { fanout_in = 10, fanout_out = 25, imbalance = 1.03 },

    partition = function(g)
        return {
            method = "metis",
            constraints = { "nodes", "train", "edges" },
            imbalance = g.params.imbalance,
            objective = "cut",
        }
    end,

    fanout = function(ctx)
        return { ctx.params.fanout_in, ctx.params.fanout_out }
    end,

    pipeline = function(ctx)
        return { depth = 0, sampler_threads = 1 }
    end,
}
