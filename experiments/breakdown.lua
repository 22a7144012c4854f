-- Where an epoch goes, stage by stage, for the three systems halo reproduces: DistDGL
-- (policies/distdgl.lua: METIS, synchronous), DistDGLv2 (policies/distdglv2.lua: two-level METIS,
-- pipeline depth 4) and MassiveGNN (policies/massivegnn.lua, f = 0.25: METIS, a buffer of remote
-- features, look-ahead of one batch), simulated on 4 Perlmutter machines x 4 A100, products-like
-- x0.1. breakdown_run.lua measures the same three on 4 ranks of this machine.
-- DistDGL comes last: the shortest stack, under the legend (which the driver puts top right).
-- run.machines is an axis only so that the speedup has a by-axis common to all points.
local function points()
    return {
        { ["run.policy"] = "policies/distdglv2.lua", ["partition.method"] = "multilevel",
          ["run.machines"] = 4 },
        { ["run.policy"] = "policies/massivegnn.lua", ["run.set.f"] = 0.25, ["run.machines"] = 4 },
        { ["run.policy"] = "policies/distdgl.lua", ["run.machines"] = 4 },
    }
end

return {
    name = "breakdown",
    title = "Epoch breakdown by stage: DistDGL, DistDGLv2, MassiveGNN (simulated, 16 GPUs)",
    caption = "Simulated stage times per GPU and epoch (mean over the 16 GPUs of 4 Perlmutter " ..
        "machines, epochs 1-2 of 3), products-like x0.1, GraphSAGE fanouts 10,25, hidden 256, " ..
        "batch 100 (13 mini-batches per GPU and epoch). Left: each stage's busy time, stacked " ..
        "(sample and fetch run on helper threads under a pipeline, so with DistDGLv2 and " ..
        "MassiveGNN the stack is more than the epoch; wait is the trainer waiting for the " ..
        "pipeline); right: the epoch time of the slowest GPU. DistDGLv2 reports 2-3x over DistDGL, " ..
        "MassiveGNN 15-40%.",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL; MassiveGNN: 15-40% over DistDGL (as a speedup: " ..
            "1.18-1.67x)",
        ranges = {
            { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
            { metric = "speedup", lo = 1.18, hi = 1.67, unit = "x", source = "MassiveGNN" },
        },
    },
    mode = "sim",
    graph = { preset = "products", scale = 0.1, no_features = true },
    run = { cluster = "perlmutter", epochs = 3, batch = 100, hidden = 256 },
    points = points(),
    quick = {
        title = "Epoch breakdown by stage, 16 GPUs (quick: products x0.02; simulated)",
        graph = { scale = 0.02 },
        run = { epochs = 1, batch = 25 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s",
                 "wait_s", "hit_rate", "remote_mb" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["run.policy"] = "policies/distdgl.lua" }, by = { "run.machines" } },
    },
    plots = {
        { kind = "stacked", x = "run.policy",
          y = { "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s", "wait_s" },
          title = "stage times per GPU", xlabel = "system (policy)",
          ylabel = "seconds per GPU and epoch" },
        { kind = "bars", x = "run.policy", y = "epoch_s", title = "epoch time",
          xlabel = "system (policy)", ylabel = "epoch time, slowest GPU (s)" },
    },
}
