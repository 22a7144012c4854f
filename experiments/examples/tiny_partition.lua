-- Partitioners side by side (docs/experiments.md): edge cut and replication of metis, random
-- and streaming partitions as the part count grows, and the remote traffic of a counted epoch.
return {
    name = "tiny_partition",
    title = "Tiny partition: edge cut by method and parts",
    mode = "partition",
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    run = { epochs = 1, batch = 300, fanouts = "5,10" },
    sweep = { ["partition.method"] = { "metis", "random", "stream" },
              ["partition.parts"] = { 2, 4 } },
    measures = { "edge_cut", "replication", "balance_nodes", "remote_mb" },
    plots = {
        { kind = "bars", x = "partition.parts", y = "edge_cut", series = "partition.method" },
        { kind = "heatmap", x = "partition.method", y = "partition.parts", z = "remote_mb" },
    },
}
