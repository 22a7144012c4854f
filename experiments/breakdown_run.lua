-- breakdown.lua measured: `mpirun -np 4 halo train` on this machine, the 4 ranks standing for
-- 2 machines x 2 GPUs behind an emulated network (--netem lat=2ms,bw=1Gbit), products-like
-- x0.02 with features. DistDGL (METIS), DistDGLv2 (two-level METIS 2 x 2, depth 4), MassiveGNN
-- (METIS, f = 0.25, look-ahead 1).
return {
    name = "breakdown_run",
    title = "Epoch breakdown by stage, measured on 4 ranks (emulated 2 ms, 1 Gbit/s network)",
    caption = "Measured stage times per rank and epoch (mean over 4 ranks, epochs 1-2 of 3 and 3 runs) " ..
        "of halo train on this 2-core machine (1 compute thread per rank, CPU) with --netem " ..
        "lat=2ms,bw=1Gbit, products-like x0.02, fanouts 10,25, hidden 16, batch 100 (10 " ..
        "mini-batches per rank and epoch). Left: each stage's busy time, stacked (sample and " ..
        "fetch run on helper threads under a pipeline, so with DistDGLv2 and MassiveGNN the " ..
        "stack is more than the epoch); right: the slowest rank's epoch time. DistDGLv2 reports " ..
        "2-3x over DistDGL, MassiveGNN 15-40%.",
    paper = {
        text = "DistDGLv2: 2-3x over DistDGL; MassiveGNN: 15-40% over DistDGL (as a speedup: " ..
            "1.18-1.67x)",
        ranges = {
            { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
            { metric = "speedup", lo = 1.18, hi = 1.67, unit = "x", source = "MassiveGNN" },
        },
    },
    mode = "run",
    repeats = 3, -- measured on a shared machine: the mean of 3 runs per point
    graph = { preset = "products", scale = 0.02 },
    run = { epochs = 3, batch = 100, threads = 1, netem = "lat=2ms,bw=1Gbit" },
    -- partition.parts is an axis only so that the speedup has a by-axis common to all points
    points = {
        { ["run.policy"] = "policies/distdglv2.lua", ["partition.method"] = "multilevel",
          ["partition.machines"] = 2, ["partition.trainers_per_part"] = 2, ["partition.parts"] = 4 },
        { ["run.policy"] = "policies/massivegnn.lua", ["run.set.f"] = 0.25, ["partition.parts"] = 4 },
        { ["run.policy"] = "policies/distdgl.lua", ["partition.parts"] = 4 }, -- last: the shortest stack, under the legend
    },
    quick = {
        title = "Epoch breakdown by stage, measured on 4 ranks (quick: 2 epochs, 1 run)",
        repeats = 1,
        run = { epochs = 2 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s", "wait_s",
                 "hit_rate", "remote_mb", "test_acc" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["run.policy"] = "policies/distdgl.lua" }, by = { "partition.parts" } },
    },
    plots = {
        { kind = "stacked", x = "run.policy",
          -- copy_s is 0 on the CPU; listed so the stages keep breakdown.lua's colours
          y = { "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s", "wait_s" },
          title = "stage times per rank", xlabel = "system (policy)",
          ylabel = "seconds per rank and epoch" },
        { kind = "bars", x = "run.policy", y = "epoch_s", title = "epoch time",
          xlabel = "system (policy)", ylabel = "epoch time, slowest rank (s)" },
    },
}
