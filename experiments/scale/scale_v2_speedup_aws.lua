-- DistDGLv2 vs DistDGL at the paper's scale on the AWS p3dn.24xlarge profile (the paper's own
-- cluster kind), 4 of its 8 V100 used per instance so that the GPU counts and the two-level
-- partitions are those of scale_v2_speedup.lua, which this file extends (graphs and partitions
-- shared through the sweep cache).
return {
    extends = "scale_v2_speedup.lua",
    name = "scale_v2_speedup_aws",
    title = "At scale: DistDGLv2 vs DistDGL, products-like x1, batch 1000, 8 to 64 GPUs " ..
        "(simulated, AWS p3dn)",
    caption = "SIMULATED (halo sim, not measured on a cluster): the figure of " ..
        "scale_v2_speedup (the same products-like x1 graph, two-level METIS partitions, batch " ..
        "1000 per GPU, fanouts 10,25, hidden 256, panels) on the AWS p3dn.24xlarge profile: " ..
        "100 Gbit/s per instance, PCIe 3.0, Skylake cores, 4 of its 8 V100 used per instance, " ..
        "2 to 16 instances (datasheet figures and estimates, not calibrated on a GPU). The " ..
        "paper (measured on p3dn instances) reports 2-3x over DistDGL and 5-10 s per epoch on " ..
        "64 GPUs on graphs of hundreds of millions of nodes. Where halo departs from the paper: " ..
        "halo samples on the CPU (DistDGLv2 on the GPU); both policies share one two-level " ..
        "partition, so the speedup is the pipeline's alone; the paper uses all 8 GPUs of an " ..
        "instance.",
    run = { cluster = "aws-p3dn" },
    quick = {
        title = "At scale (quick): DistDGLv2 vs DistDGL, products-like x0.1, batch 1000, " ..
            "8 and 16 GPUs (simulated, AWS p3dn)",
    },
}
