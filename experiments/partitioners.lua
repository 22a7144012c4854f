-- Partitioners side by side (docs/partition.md): edge cut, replication factor and the remote
-- traffic of one counted epoch as the parts grow, for `halo partition --method` metis (DistDGL),
-- multilevel (DistDGLv2: METIS across machines of 4 parts, then across each machine's parts;
-- 1 x 2 and 2 x 2 below 8 parts), random and stream (one-pass LDG, the --stream default; the
-- Fennel heuristic is a --stream option, not a method, and is left out). products-like x0.1.
-- The remote MB are counted by `halo sim` without a profile (policies' defaults: fanouts 10,25,
-- batch 100 per part, no cache), summed over the parts.
local function points(parts_list)
    local pts = {}
    for _, m in ipairs({ "metis", "multilevel", "random", "stream" }) do
        for _, p in ipairs(parts_list) do
            local pt = { ["partition.method"] = m, ["partition.parts"] = p }
            if m == "multilevel" then
                local g = p >= 8 and 4 or 2
                pt["partition.machines"] = p // g
                pt["partition.trainers_per_part"] = g
            end
            pts[#pts + 1] = pt
        end
    end
    return pts
end

return {
    name = "partitioners",
    title = "Partitioners: edge cut, replication and remote traffic vs parts",
    caption = "products-like x0.1 (245k nodes, 12M stored edges) split into 2 to 64 parts by " ..
        "METIS (nodes, train, edges balanced, tolerance 1.05), DistDGLv2's two-level METIS " ..
        "(machines of 4 parts), random hashing and one-pass streaming LDG. Edge cut: fraction " ..
        "of edges whose endpoints lie in different parts; replication: (owned + halo nodes) / " ..
        "nodes; remote MB: bytes received from other parts in one epoch of sampling (fanouts " ..
        "10,25) and feature pulls (400-byte rows), batch 100 per part, summed over parts. The " ..
        "README reports METIS 3.5% against random 75.0% at 4 parts (products-like x0.05); " ..
        "DistDGL motivates METIS by exactly this gap.",
    paper = "DistDGL partitions with METIS to minimise the edge cut under balance constraints; " ..
        "it publishes no cut or traffic figure to compare with",
    mode = "partition",
    graph = { preset = "products", scale = 0.1, no_features = true },
    run = { epochs = 1, batch = 100, fanouts = { 10, 25 } },
    points = points({ 2, 4, 8, 16, 32, 64 }),
    quick = {
        title = "Partitioners: edge cut, replication and remote traffic vs parts (quick: products x0.02)",
        graph = { scale = 0.02 },
        run = { batch = 25 },
        points = points({ 2, 8, 32 }),
    },
    measures = { "edge_cut", "replication", "remote_mb", "balance_nodes", "balance_train",
                 "partition_s", "partition_rss_mb" },
    plots = {
        { kind = "bars", x = "partition.parts", y = "edge_cut", series = "partition.method",
          title = "edge cut", xlabel = "parts", ylabel = "fraction of edges cut" },
        { kind = "bars", x = "partition.parts", y = "replication", series = "partition.method",
          title = "replication factor", xlabel = "parts", logy = true,
          ylabel = "(owned + halo) / nodes" },
        { kind = "bars", x = "partition.parts", y = "remote_mb", series = "partition.method",
          title = "remote traffic of one epoch", xlabel = "parts", logy = true,
          ylabel = "remote MB per epoch (all parts)" },
    },
}
