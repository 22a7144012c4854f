-- distdglv2.lua: DistDGLv2's choices (Zheng et al., KDD 2022, arXiv 2112.15345).
--   partition: two-level METIS: first across machines, then each machine's part across its
--              trainers (GPUs), minimum edge cut, balancing nodes, training nodes and edges
--   sampling:  GraphSAGE fanouts 10,25 (DGL order: input layer first)
--   pipeline:  asynchronous, `depth` mini-batches prepared ahead of the one computing
--              (sampling, feature pulls and host-to-device copies overlap the compute)
--   cache:     none (every remote feature is pulled on each mini-batch)
-- Override with --set, e.g. `--set depth=2 --set trainers_per_machine=2`.
return {
    name = "distdglv2",
    description = "DistDGLv2: two-level METIS (nodes, train, edges), fanout 10,25, depth 4, no cache",
    params = {
        depth = 4,                -- mini-batches in flight ahead of the compute (0 = synchronous)
        sampler_threads = 1,      -- threads of the sampling stage
        trainers_per_machine = 4, -- GPUs per machine: the second partitioning level
        fanout_in = 10,
        fanout_out = 25,
        imbalance = 1.03,
    },

    partition = function(g)
        local t = g.params.trainers_per_machine
        -- one machine per part when the parts do not split evenly into machines of t trainers
        local machines = g.parts
        if t >= 1 and g.parts >= t and g.parts % t == 0 then
            machines = g.parts // t
        end
        return {
            method = "multilevel",
            machines = machines,
            constraints = { "nodes", "train", "edges" },
            imbalance = g.params.imbalance,
            objective = "cut",
        }
    end,

    fanout = function(ctx)
        return { ctx.params.fanout_in, ctx.params.fanout_out }
    end,

    pipeline = function(ctx)
        return { depth = ctx.params.depth, sampler_threads = ctx.params.sampler_threads }
    end,
}
