-- DistDGLv2 vs DistDGL on the papers100M-like graph at the largest scale partitioned on one
-- machine here with METIS' two levels (x0.02, 2.2 M nodes, 64 M stored edges), DistDGL's batch
-- of 1,000 seeds per GPU, 8 to 64 GPUs on the Perlmutter profile. The same panels and policies
-- as scale_v2_speedup.lua (extends), another graph: papers100M's 1.1% training nodes leave each
-- GPU 1 to 4 mini-batches per epoch at this scale, which is the point of the figure.
return {
    extends = "scale_v2_speedup.lua",
    name = "scale_v2_papers",
    title = "At scale: DistDGLv2 vs DistDGL, papers100M-like x0.02, batch 1000, 8 to 64 GPUs " ..
        "(simulated, Perlmutter)",
    caption = "SIMULATED (halo sim, not measured on a cluster): the panels of scale_v2_speedup " ..
        "(DistDGL synchronous, DistDGLv2 pipeline of depth 4, one two-level METIS partition " ..
        "per GPU count shared by both, fanouts 10,25, hidden 256, 3 epochs, the last 2 timed) " ..
        "on the papers100M-like graph at x0.02 (2.22 M nodes, 64.1 M stored edges, 24,144 " ..
        "training nodes, 128 features), the largest papers100M-like scale partitioned here " ..
        "(METIS takes 4.1 GiB; PT-Scotch across 4 ranks 12.9 GiB), batch 1000 per GPU: 4 " ..
        "mini-batches per GPU and epoch at 8 GPUs, 2 at 16, 1 at 32 and 64, so the pipeline " ..
        "has little or nothing to overlap. The paper reports 2-3x over DistDGL and 5-10 s per " ..
        "epoch on 64 GPUs on the full papers100M (111 M nodes, 1.2 M training nodes: 19 " ..
        "mini-batches per GPU). Where halo departs from the paper: the graph is 50x smaller; " ..
        "halo samples on the CPU (DistDGLv2 on the GPU); both policies share the two-level " ..
        "partition, so the speedup is the pipeline's alone.",
    graph = { preset = "papers100M", scale = 0.02 },
    quick = {
        title = "At scale (quick): DistDGLv2 vs DistDGL, papers100M-like x0.005, batch 1000, " ..
            "8 and 16 GPUs (simulated, Perlmutter)",
        graph = { scale = 0.005 },
    },
}
