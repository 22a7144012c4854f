-- Cache policies replayed on a recorded access trace (docs/experiments.md): hit rate against
-- capacity, with each policy's share of Belady's hit rate as a derived column.
return {
    name = "tiny_trace",
    title = "Tiny trace: hit rate against cache capacity",
    mode = "trace",
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    partition = { parts = 2 },
    run = { epochs = 2, batch = 300, fanouts = "5,10" },
    trace = { capacities = "0.1,0.25,0.5", policies = "belady,lru,massivegnn" },
    measures = { "hit_rate", "remote_mb" },
    derive = { of_belady = { of = "hit_rate", baseline = { ["trace.policy"] = "belady" },
                             op = "value/baseline" } },
    plot = { kind = "line", x = "trace.capacity", y = "hit_rate", series = "trace.policy",
             xlabel = "capacity (fraction of the halo set)", ylabel = "hit rate" },
}
