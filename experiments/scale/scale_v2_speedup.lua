-- DistDGLv2 vs DistDGL at the paper's scale (DistDGLv2, arXiv 2112.15345: "2-3x faster than
-- DistDGL", 5-10 s per epoch on 64 GPUs), simulated on the Perlmutter profile: the products-like
-- graph at full size (x1, 2.45 M nodes), DistDGL's batch of 1,000 seeds per GPU, 8 to 64 GPUs.
-- scale_v2_speedup_aws.lua is the same figure on the AWS p3dn profile (extends this file).
--
-- One two-level METIS partition per GPU count (METIS across the machines, then each machine's
-- part across its 4 GPUs: `halo partition --method multilevel`), shared by both policies, so
-- that only the training loop differs (synchronous vs DistDGLv2's pipeline of depth 4).
--
-- As in experiments/v2_speedup.lua, each panel's column is a derived one whose baseline fixes
-- the preset (the driver has no per-panel row filter).
local trainers = 4
local policies = { "policies/distdgl.lua", "policies/distdglv2.lua" }

local function points(machines)
    local pts = {}
    for _, pol in ipairs(policies) do
        for _, m in ipairs(machines) do
            pts[#pts + 1] = { ["partition.parts"] = m * trainers, ["run.policy"] = pol }
        end
    end
    return pts
end

return {
    name = "scale_v2_speedup",
    title = "At scale: DistDGLv2 vs DistDGL, products-like x1, batch 1000, 8 to 64 GPUs " ..
        "(simulated, Perlmutter)",
    caption = "SIMULATED (halo sim, not measured on a cluster): epoch time of DistDGL " ..
        "(synchronous) and DistDGLv2 (asynchronous pipeline of depth 4) on the Perlmutter " ..
        "profile (4 A100 and 4 Slingshot NICs of 25 GB/s per machine; datasheet figures and " ..
        "estimates, not calibrated on a GPU), 2 to 16 machines x 4 GPUs. products-like graph " ..
        "at full size (x1: 2.45 M nodes, 61.9 M undirected edges, 8% training nodes), " ..
        "two-level METIS partition (machines, then GPUs; nodes, train and edges balanced) " ..
        "shared by both policies, batch 1000 seeds per GPU, GraphSAGE fanouts 10,25, hidden " ..
        "256, 100 features, 3 epochs (the last 2 timed); 25 mini-batches per GPU and epoch at " ..
        "8 GPUs, 4 at 64, and the two-level partition cuts 5.6% of the edges at 8 GPUs, 37.6% " ..
        "at 64 (the look-alike's 47 classes split no further). Left: absolute seconds per epoch " ..
        "(log scale); right: DistDGLv2's speedup (DistDGL = 1). The paper reports 2-3x over " ..
        "DistDGL and 5-10 s per epoch on 64 GPUs, but on graphs of hundreds of millions of " ..
        "nodes (products has 2.45 M, so its epoch is far shorter). Where halo departs from the " ..
        "paper: DistDGLv2 samples on the GPUs, halo's sampler runs on the CPU (one sampler " ..
        "thread per trainer, Zen 3 cost estimates), so halo's pipeline is bounded by CPU " ..
        "sampling; both policies share one two-level partition (the paper's DistDGL uses flat " ..
        "METIS), so the speedup here is the pipeline's alone; no features are stored (their " ..
        "size enters the cost model).",
    paper = {
        text = "DistDGLv2: 2-3x faster than DistDGL; 5-10 s per epoch on 64 GPUs (graphs of " ..
            "hundreds of millions of nodes, arXiv 2112.15345)",
        ranges = {
            { metric = "speedup", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
            { metric = "epoch_s", lo = 5, hi = 10, unit = " s",
              source = "DistDGLv2, 64 GPUs, graphs 45x larger" },
        },
    },
    mode = "sim",
    timeout = 1800,
    graph = { preset = "products", scale = 1, no_features = true },
    partition = { method = "multilevel" },
    run = { cluster = "perlmutter", trainers = trainers, epochs = 3, batch = 1000, hidden = 256 },
    points = points({ 2, 4, 8, 16 }),
    quick = {
        title = "At scale (quick): DistDGLv2 vs DistDGL, products-like x0.1, batch 1000, " ..
            "8 and 16 GPUs (simulated, Perlmutter)",
        graph = { scale = 0.1 },
        points = points({ 2, 4 }),
        run = { epochs = 2 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "copy_s", "compute_s", "allreduce_s",
                 "wait_s", "remote_mb", "batches" },
    derive = {
        speedup = { of = "epoch_s", op = "baseline/value",
                    baseline = { ["run.policy"] = "policies/distdgl.lua" },
                    by = { "partition.parts" } },
    },
    plots = {
        { kind = "line", x = "partition.parts", y = "epoch_s", series = "run.policy",
          logy = true, title = "seconds per epoch (paper: 5-10 s at 64 GPUs, larger graphs)",
          xlabel = "GPUs (machines x 4)", ylabel = "epoch time (s)" },
        { kind = "bars", x = "partition.parts", y = "speedup", series = "run.policy",
          title = "speedup over DistDGL (paper: 2-3x)", xlabel = "GPUs (machines x 4)",
          ylabel = "speedup (DistDGL epoch / epoch)" },
    },
}
