-- AWS p3dn.24xlarge: 8 NVIDIA V100 32GB per instance, 100 Gbit/s networking; one trainer per
-- GPU, 16 instances by default (halo sim can override the machine count). Units and meaning of
-- every field: docs/profiles.md.
--
-- Sources:
--   [aws]     Amazon EC2 P3 instances product page (aws.amazon.com/ec2/instance-types/p3):
--             p3dn.24xlarge = 8x V100 (32 GB, NVLink), 96 vCPUs (Intel Xeon Platinum 8175M,
--             2.5 GHz Skylake), 768 GiB memory, 100 Gbps networking (ENA, EFA capable).
--   [v100]    NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7 TFLOPS, HBM2 900 GB/s,
--             PCIe Gen3 x16 host interface.
--   [pcie]    PCI-SIG, PCI Express 3.0: 8 GT/s per lane, 128b/130b, 15.75 GB/s per direction x16.
--   estimate  no public figure; a value of the order `halo calibrate` measures on a recent x86
--             server core, or a stated share of a peak. Re-measure on the machine when you can.
--   GPU constants (pcie, device): datasheet figures and shares of them, NOT measured: no GPU
--             was available to `halo calibrate`. There is no device.gemm_table, so gemm_TFLOPs
--             holds at every (rows, in, out) shape; small layers (few classes, hidden 16) will
--             run below it on a real GPU. Replace them by a calibration on the GPU when you can.
return {
    name = "aws-p3dn",
    machines = 16, -- default job size (an assumption of this file)
    trainers = 8, -- one per V100 [aws]
    cores = 48, -- 96 vCPUs = 48 physical cores with two hyper-threads each [aws]
    cpu = {
        sample_edge_ns = 9, -- estimate (Skylake core at 2.5 GHz [aws])
        sample_node_ns = 40, -- estimate
        block_node_ns = 25, -- estimate
        gather_GBps = 5, -- estimate: one core's random 512-byte row gathers
        memcpy_GBps = 10, -- estimate: one core's sequential copy
        lookup_node_ns = 30, -- estimate
        hook_us = 1.2, -- estimate: one Lua hook call
    },
    network = {
        shm_lat_us = 0.6, -- estimate: MPI over shared memory within an instance
        shm_GBps = 8, -- estimate: MPI shared-memory copy bandwidth per flow
        net_lat_us = 15, -- estimate: MPI over EFA (plain TCP over ENA is slower, ~30-50 us)
        nics = 1, -- one network interface at the instance's full rate [aws]
        nic_GBps = 12.5, -- [aws] 100 Gbit/s
        msg_overhead_us = 1, -- estimate: MPI/libfabric software cost per message
        allreduce_lat_us = 10, -- estimate: per ring step beyond the link latency
    },
    netem = {
        lat_us = 0, -- off
        Gbit = 0, -- off
    },
    pcie = {
        pinned_GBps = 11, -- estimate: ~70% of PCIe 3.0 x16's 15.75 GB/s [pcie][v100]
        pageable_GBps = 6, -- estimate: pageable copies are staged by the driver (about half)
        lat_us = 10, -- estimate: launch and DMA set-up of one host-to-device copy
        pinned = true, -- halo stages rows in pinned memory on GPU
    },
    device = { -- datasheet figures, not measured (see the header)
        kind = "gpu",
        gemm_TFLOPs = 10, -- estimate: ~65% of the V100's 15.7 FP32 TFLOPS [v100] on 2000x256x256
        agg_GBps = 550, -- estimate: ~60% of 900 GB/s HBM2 [v100] for gathers of neighbour rows
        step_overhead_us = 300, -- estimate: ~40 kernel launches of a 2-layer GraphSAGE step + Adam
        adam_GBps = 120, -- estimate: Adam moves ~28 bytes per 4-byte parameter: 900 / 7 [v100]
    },
}
