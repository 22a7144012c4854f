-- A seconds-long simulated sweep (tests/e2e/sweep.sh, docs/experiments.md): two cache policies
-- by two batch sizes on a 3000-node SBM graph in 2 parts, timed on this machine's profile.
return {
    name = "tiny",
    title = "Tiny sweep: remote traffic of two cache policies",
    caption = "Simulated epoch on 1 machine x 2 trainers (this-machine profile), SBM graph of 3000 nodes.",
    paper = "MassiveGNN: prefetching cuts remote traffic",
    mode = "sim",
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    partition = { parts = 2 },
    run = { cluster = "this-machine", trainers = 2, epochs = 2, fanouts = { 5, 10 } },
    sweep = {
        ["run.policy"] = { "policies/distdgl.lua", "policies/massivegnn.lua" },
        ["run.batch"] = { 100, 300 },
    },
    quick = { sweep = { ["run.batch"] = { 300 } } },
    measures = { "epoch_s", "sample_s", "fetch_s", "hit_rate", "remote_mb" },
    derive = {
        traffic_cut = { of = "remote_mb", baseline = { ["run.policy"] = "policies/distdgl.lua" },
                        op = "improvement" },
    },
    plots = {
        { kind = "bars", x = "run.batch", y = "remote_mb", series = "run.policy",
          xlabel = "seeds per batch", ylabel = "remote MB per epoch", title = "remote traffic" },
        { kind = "line", x = "run.batch", y = "epoch_s", series = "run.policy",
          xlabel = "seeds per batch", ylabel = "epoch (s)", title = "epoch time" },
    },
}
