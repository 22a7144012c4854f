-- DistDGLv2's ablation (arXiv 2112.15345): what the two-level partition and the asynchronous
-- pipeline each buy, simulated at 64 GPUs (16 Perlmutter machines x 4 A100) on the products-like
-- graph x0.1. Every point runs policies/distdglv2.lua with its pipeline depth overridden
-- (depth 0 is DistDGL's synchronous loop: same fanouts, no cache), on either a flat METIS
-- partition into 64 parts (the baseline) or the two-level one (METIS across the 16 machines,
-- then each machine's part across its 4 GPUs: `halo partition --method multilevel`).
-- v2_ablation_run.lua measures the same grid on 4 ranks of this machine.
local pts, quick = {}, {}
for _, method in ipairs({ "metis", "multilevel" }) do
    for _, depth in ipairs({ 0, 1, 2, 4 }) do
        local p = { ["partition.method"] = method, ["run.depth"] = depth }
        pts[#pts + 1] = p
        if depth == 0 or depth == 4 then
            quick[#quick + 1] = p
        end
    end
end

return {
    name = "v2_ablation",
    title = "DistDGLv2 ablation at 64 GPUs: two-level partition and pipeline depth (simulated)",
    caption = "Simulated epoch time at 64 GPUs (Perlmutter profile, 16 machines x 4 GPUs), " ..
        "products-like x0.1, GraphSAGE fanouts 10,25, hidden 256, batch 100 per GPU (4 " ..
        "mini-batches per GPU and epoch), 3 epochs (the last 2 timed). Bars: flat METIS " ..
        "(64 parts) or the two-level partition (16 machines, then 4 GPUs each), at pipeline " ..
        "depth 0 (synchronous, DistDGL) and 1, 2, 4 (DistDGLv2's asynchronous pipeline). " ..
        "metis at depth 0 is the baseline; multilevel at depth 0 adds the two-level " ..
        "partition; the other multilevel bars add the pipeline. The paper attributes DistDGLv2's " ..
        "2-3x over DistDGL to these optimisations together (and GPU sampling, which halo does " ..
        "not model).",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL from two-level partitioning + the asynchronous " ..
            "pipeline",
        ranges = { { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" } },
    },
    mode = "sim",
    graph = { preset = "products", scale = 0.1, no_features = true },
    partition = { parts = 64 },
    run = { cluster = "perlmutter", epochs = 3, batch = 100, hidden = 256,
            policy = "policies/distdglv2.lua" },
    points = pts,
    quick = {
        title = "DistDGLv2 ablation at 16 GPUs (quick: products x0.02; simulated)",
        graph = { scale = 0.02 },
        partition = { parts = 16 },
        run = { epochs = 1, batch = 25 },
        points = quick,
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s",
                 "wait_s", "remote_mb", "edge_cut" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["partition.method"] = "metis", ["run.depth"] = 0 } },
    },
    plots = {
        { kind = "bars", x = "run.depth", y = "epoch_s", series = "partition.method",
          title = "epoch time", xlabel = "pipeline depth (0 = synchronous)",
          ylabel = "epoch time, slowest GPU (s)" },
        { kind = "bars", x = "run.depth", y = "speedup", series = "partition.method",
          title = "speedup over metis at depth 0 (DistDGL)",
          xlabel = "pipeline depth (0 = synchronous)", ylabel = "speedup" },
    },
}
