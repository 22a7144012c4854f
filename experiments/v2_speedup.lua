-- DistDGLv2 vs DistDGL as the GPUs grow (DistDGLv2, arXiv 2112.15345: "2-3x faster than DistDGL"),
-- simulated on the Perlmutter profile (machines of 4 A100). v2_speedup_aws.lua extends this file:
-- the same figure on the AWS p3dn profile.
--
-- One partition per GPU count, shared by both policies: METIS for the products-like graph,
-- one-pass streaming (LDG) for the papers100M-like one. The batch is about 1000 x scale seeds
-- per trainer (products x0.1: 100, papers100M x0.02: 50), so each trainer runs roughly as many
-- mini-batches per epoch as at full scale with DistDGL's batch of 1000.
--
-- The driver draws one panel per plot table and has no per-panel row filter, so each panel's
-- column is a derived one whose baseline fixes the preset: rows of the other preset find no
-- baseline and are NaN (left out of that panel).
local cluster = "perlmutter"
local trainers = 4

local presets = {
    { name = "products", scale = 0.1, batch = 100, method = nil },
    { name = "papers100M", scale = 0.02, batch = 50, method = "stream" },
}
local quick_presets = {
    { name = "products", scale = 0.02, batch = 25, method = nil },
    { name = "papers100M", scale = 0.005, batch = 25, method = "stream" },
}
local policies = { "policies/distdgl.lua", "policies/distdglv2.lua" }

local function points(list, machines)
    local pts = {}
    for _, g in ipairs(list) do
        for _, pol in ipairs(policies) do
            for _, m in ipairs(machines) do
                pts[#pts + 1] = {
                    ["graph.preset"] = g.name, ["graph.scale"] = g.scale,
                    ["partition.method"] = g.method, ["partition.parts"] = m * trainers,
                    ["run.batch"] = g.batch, ["run.policy"] = pol,
                }
            end
        end
    end
    return pts
end

local derive, plots = {}, {}
for _, g in ipairs(presets) do
    local p = g.name
    derive["speedup_" .. p] = {
        of = "epoch_s", op = "baseline/value",
        baseline = { ["run.policy"] = "policies/distdgl.lua", ["graph.preset"] = p },
        by = { "graph.preset", "partition.parts" },
    }
    derive["rel_epoch_" .. p] = {
        of = "epoch_s", op = "value/baseline",
        baseline = { ["run.policy"] = "policies/distdgl.lua", ["graph.preset"] = p,
                     ["partition.parts"] = 2 * trainers },
        by = { "graph.preset" },
    }
    plots[#plots + 1] = {
        kind = "line", x = "partition.parts", y = "rel_epoch_" .. p, series = "run.policy",
        logy = true, title = p .. "-like: epoch time",
        xlabel = "GPUs (machines x 4)", ylabel = "epoch time / DistDGL's on 8 GPUs",
    }
    plots[#plots + 1] = {
        kind = "bars", x = "partition.parts", y = "speedup_" .. p, series = "run.policy",
        title = p .. "-like: speedup over DistDGL",
        xlabel = "GPUs (machines x 4)", ylabel = "speedup (DistDGL epoch / epoch)",
    }
end

return {
    name = "v2_speedup",
    title = "DistDGLv2 vs DistDGL, 8 to 64 GPUs (simulated, Perlmutter)",
    caption = "Simulated epoch time of DistDGL (synchronous) and DistDGLv2 (asynchronous " ..
        "pipeline of depth 4) on one shared partition per GPU count, on the Perlmutter profile " ..
        "(4 A100 and 4 NICs of 25 GB/s per machine), " ..
        "2 to 16 machines x 4 GPUs, GraphSAGE fanouts 10,25, hidden 256, 3 epochs (the last 2 " ..
        "timed). Top: products-like x0.1 (METIS, batch 100), bottom: papers100M-like x0.02 " ..
        "(streaming LDG, batch 50). Left: epoch time relative to DistDGL's on 8 GPUs (log " ..
        "scale); right: DistDGLv2's speedup (DistDGL = 1). The paper reports DistDGLv2 2-3x " ..
        "faster than DistDGL; in halo only the pipeline differs (the paper's v2 also samples on " ..
        "GPUs), so the speedup is bounded by the slowest pipeline stage.",
    paper = {
        text = "DistDGLv2: 2-3x faster than DistDGL on 8-64 GPUs (arXiv 2112.15345)",
        ranges = {
            { metric = "speedup_products", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
            { metric = "speedup_papers100M", lo = 2, hi = 3, unit = "x", source = "DistDGLv2" },
        },
    },
    mode = "sim",
    graph = { no_features = true },
    run = { cluster = cluster, trainers = trainers, epochs = 3, hidden = 256 },
    points = points(presets, { 2, 4, 8, 16 }),
    quick = {
        title = "DistDGLv2 vs DistDGL, 8 and 32 GPUs (quick: products x0.02, papers100M x0.005; " ..
            "simulated, Perlmutter)",
        points = points(quick_presets, { 2, 8 }),
        run = { epochs = 1 },
    },
    measures = { "epoch_s", "sample_s", "fetch_s", "compute_s", "allreduce_s", "wait_s",
                 "remote_mb", "batches" },
    derive = derive,
    plots = plots,
}
