-- v2_ablation.lua measured: real training (`mpirun -np 4 halo train`) on 4 ranks of this
-- machine, the ranks standing for 2 machines x 2 GPUs, with an emulated network between them
-- (--netem lat=2ms,bw=1Gbit: every exchange waits out 2 ms plus its bytes at 1 Gbit/s).
-- products-like x0.02 with features (halo train needs them), flat METIS into 4 parts against
-- the two-level partition (2 machines, then 2 trainers each), pipeline depth 0, 1, 2, 4.
local pts, quick = {}, {}
for _, method in ipairs({ "metis", "multilevel" }) do
    for _, depth in ipairs({ 0, 1, 2, 4 }) do
        -- partition.parts is an axis only so that the speedup has a by-axis common to all points
        local p = { ["partition.method"] = method, ["run.depth"] = depth, ["partition.parts"] = 4 }
        if method == "multilevel" then
            p["partition.machines"] = 2
            p["partition.trainers_per_part"] = 2
        end
        pts[#pts + 1] = p
        if depth == 0 or depth == 4 then
            quick[#quick + 1] = p
        end
    end
end

return {
    name = "v2_ablation_run",
    title = "DistDGLv2 ablation measured on 4 ranks (emulated 2 ms, 1 Gbit/s network)",
    caption = "Measured epoch time (slowest rank, mean of epochs 1-2 of 3, mean of 3 runs) of halo train on 4 " ..
        "ranks of this 2-core machine (1 compute thread each) with --netem lat=2ms,bw=1Gbit, " ..
        "products-like x0.02, GraphSAGE fanouts 10,25, batch 100 per rank (10 mini-batches per " ..
        "rank and epoch), policies/distdglv2.lua with the depth overridden. metis at depth 0 is " ..
        "the synchronous DistDGL baseline. The README reports depth 4 1.9x faster than depth 0 " ..
        "in this setting; the paper reports 2-3x for DistDGLv2 over DistDGL.",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL (arXiv 2112.15345)",
        ranges = { { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" } },
    },
    mode = "run",
    repeats = 3, -- measured on a shared machine: the mean of 3 runs per point
    graph = { preset = "products", scale = 0.02 },
    run = { epochs = 3, batch = 100, threads = 1, netem = "lat=2ms,bw=1Gbit",
            policy = "policies/distdglv2.lua" },
    points = pts,
    quick = {
        title = "DistDGLv2 ablation measured on 4 ranks (quick: depths 0 and 4, 1 run)",
        repeats = 1,
        run = { epochs = 2 }, points = quick,
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "compute_s", "allreduce_s", "wait_s",
                 "remote_mb", "edge_cut", "test_acc" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["partition.method"] = "metis", ["run.depth"] = 0 },
                    by = { "partition.parts" } },
    },
    plots = {
        { kind = "bars", x = "run.depth", y = "epoch_s", series = "partition.method",
          title = "epoch time", xlabel = "pipeline depth (0 = synchronous)",
          ylabel = "epoch time, slowest rank (s)" },
        { kind = "bars", x = "run.depth", y = "speedup", series = "partition.method",
          title = "speedup over metis at depth 0", xlabel = "pipeline depth (0 = synchronous)",
          ylabel = "speedup" },
    },
}
