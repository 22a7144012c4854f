-- DistDGLv2 vs DistDGL as the GPUs grow (DistDGLv2, arXiv 2112.15345: "2-3x faster than DistDGL"),
-- simulated on the AWS p3dn.24xlarge profile with 4 of its 8 V100 used per instance (so the GPU
-- counts match v2_speedup.lua, the same figure on Perlmutter). Everything but the profile, the
-- name and the words comes from v2_speedup.lua (extends): its graphs, partitions and batches,
-- shared through the sweep cache.
return {
    extends = "v2_speedup.lua",
    name = "v2_speedup_aws",
    title = "DistDGLv2 vs DistDGL, 8 to 64 GPUs (simulated, AWS p3dn)",
    caption = "The figure of v2_speedup (simulated epoch time of DistDGL and DistDGLv2, the " ..
        "same graphs, partitions, batches and panels) on the AWS p3dn.24xlarge profile instead " ..
        "of Perlmutter: 100 Gbit/s per instance, PCIe 3.0, 4 of its 8 V100 used per instance, " ..
        "2 to 16 instances. The paper reports DistDGLv2 2-3x faster than DistDGL; in halo only " ..
        "the pipeline differs, so the speedup is bounded by the slowest pipeline stage.",
    run = { cluster = "aws-p3dn" },
    quick = {
        title = "DistDGLv2 vs DistDGL, 8 and 32 GPUs (quick: products x0.02, papers100M x0.005; " ..
            "simulated, AWS p3dn)",
    },
}
