-- Epoch time as the graph grows on a fixed cluster: products-like graphs from x0.01 (24k nodes)
-- to x0.2 (490k nodes, 24M stored edges), simulated on 4 Perlmutter machines x 4 A100, DistDGL
-- (synchronous) against DistDGLv2 (pipeline depth 4), both on the same METIS partition into 16.
-- The batch stays 50 seeds per GPU, so the mini-batches per epoch grow with the graph
-- (from 3 to 50 per GPU): the pipeline has more batches to overlap.
local pts = {}
for _, s in ipairs({ 0.01, 0.02, 0.05, 0.1, 0.2 }) do
    for _, pol in ipairs({ "policies/distdgl.lua", "policies/distdglv2.lua" }) do
        pts[#pts + 1] = { ["graph.scale"] = s, ["run.policy"] = pol }
    end
end
local quick = {}
for _, s in ipairs({ 0.01, 0.02 }) do
    for _, pol in ipairs({ "policies/distdgl.lua", "policies/distdglv2.lua" }) do
        quick[#quick + 1] = { ["graph.scale"] = s, ["run.policy"] = pol }
    end
end

return {
    name = "graph_scale",
    title = "Epoch time vs graph size, 16 GPUs (simulated, Perlmutter)",
    caption = "Simulated epoch time (slowest GPU, epochs 1-2 of 3) of DistDGL and DistDGLv2 on 4 " ..
        "Perlmutter machines x 4 GPUs as the products-like graph grows from x0.01 to x0.2 of " ..
        "ogbn-products (METIS into 16 parts, fanouts 10,25, hidden 256, batch 50 per GPU: 3 to " ..
        "50 mini-batches per GPU and epoch). Left: epoch time (log-log); right: DistDGLv2's " ..
        "speedup. The epoch time grows about linearly with the graph; the paper reports " ..
        "DistDGLv2 2-3x faster than DistDGL at full scale.",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL (ogbn-products, papers100M at full scale)",
        ranges = { { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" } },
    },
    mode = "sim",
    graph = { preset = "products", no_features = true },
    run = { cluster = "perlmutter", machines = 4, epochs = 3, batch = 50, hidden = 256 },
    points = pts,
    quick = {
        title = "Epoch time vs graph size, 16 GPUs (quick: x0.01 and x0.02; simulated, Perlmutter)",
        points = quick,
        run = { epochs = 1 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "compute_s", "allreduce_s", "wait_s",
                 "batches", "remote_mb" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["run.policy"] = "policies/distdgl.lua" },
                    by = { "graph.scale" } },
    },
    plots = {
        { kind = "line", x = "graph.scale", y = "epoch_s", series = "run.policy", logx = true,
          logy = true, title = "epoch time", xlabel = "graph scale (fraction of ogbn-products)",
          ylabel = "epoch time, slowest GPU (s)" },
        { kind = "bars", x = "graph.scale", y = "speedup", series = "run.policy",
          title = "speedup over DistDGL", xlabel = "graph scale (fraction of ogbn-products)",
          ylabel = "speedup" },
    },
}
