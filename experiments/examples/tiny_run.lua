-- A seconds-long measured sweep (tests/e2e/sweep.sh, docs/experiments.md): one epoch of real
-- training under mpirun on 2 ranks, synchronous against a pipeline of depth 2.
return {
    name = "tiny_run",
    title = "Tiny run: pipeline depth on 2 ranks",
    caption = "One epoch of halo train on 2 ranks of this machine, SBM graph of 3000 nodes.",
    mode = "run",
    graph = { gen = "sbm", nodes = 3000, seed = 3 },
    partition = { parts = 2 },
    run = { epochs = 1, batch = 300, fanouts = "5,10", threads = 1 },
    points = { { ["run.depth"] = 0 }, { ["run.depth"] = 2 } },
    measures = { "epoch_s", "sample_s", "fetch_s", "compute_s", "remote_mb", "test_acc" },
    plot = { kind = "stacked", x = "run.depth", y = { "sample_s", "fetch_s", "compute_s" },
             xlabel = "pipeline depth", ylabel = "seconds per rank and epoch" },
}
