-- NERSC Perlmutter, GPU partition: one trainer per A100, 16 nodes by default (halo sim can
-- override the machine count). Units and meaning of every field: docs/profiles.md.
--
-- Sources:
--   [nersc]   NERSC documentation, "Perlmutter Architecture" (docs.nersc.gov): GPU node =
--             1x AMD EPYC 7763, 4x NVIDIA A100 (40GB), 4x HPE Slingshot 11 NICs, 256 GB DDR4;
--             the GPUs attach to the CPU over PCIe 4.0 and to each other over NVLink 3.
--   [amd]     AMD EPYC 7763 product page: 64 cores / 128 threads, 2.45 GHz base, 3.5 GHz boost,
--             8 channels of DDR4-3200.
--   [a100]    NVIDIA A100 Tensor Core GPU datasheet: FP32 19.5 TFLOPS, HBM2 1,555 GB/s (40GB).
--   [hpe]     HPE Slingshot 11 (Cassini) NIC: 200 Gbit/s per port = 25 GB/s each direction.
--   [slingshot] D. De Sensi et al., "An In-Depth Analysis of the Slingshot Interconnect",
--             SC 2020: MPI point-to-point latency of the order of 2 us between nodes.
--   [pcie]    PCI-SIG, PCI Express 4.0: 16 GT/s per lane, 128b/130b, 31.5 GB/s per direction x16.
--   estimate  no public figure; a value of the order `halo calibrate` measures on a recent x86
--             server core, or a stated share of a peak. Re-measure on the machine when you can.
--   GPU constants (pcie, device): datasheet figures and shares of them, NOT measured: no GPU
--             was available to `halo calibrate`. There is no device.gemm_table, so gemm_TFLOPs
--             holds at every (rows, in, out) shape; small layers (few classes, hidden 16) will
--             run below it on a real GPU. Replace them by a calibration on the GPU when you can.
return {
    name = "perlmutter",
    machines = 16, -- default job size (an assumption of this file, not a property of the system)
    trainers = 4, -- one per A100 [nersc]
    cores = 64, -- one EPYC 7763 per GPU node [nersc][amd]; its 128 hardware threads are not counted
    cpu = {
        sample_edge_ns = 7, -- estimate (Zen 3 core at 2.45-3.5 GHz [amd])
        sample_node_ns = 30, -- estimate
        block_node_ns = 20, -- estimate
        gather_GBps = 6, -- estimate: one core's random 512-byte row gathers from DDR4-3200 [amd]
        memcpy_GBps = 12, -- estimate: one core's sequential copy
        lookup_node_ns = 25, -- estimate
        hook_us = 1, -- estimate: one Lua hook call (halo calibrate measures ~0.7-1 us)
    },
    network = {
        shm_lat_us = 0.5, -- estimate: MPI over shared memory within a node
        shm_GBps = 10, -- estimate: MPI shared-memory copy bandwidth per flow
        net_lat_us = 2, -- [slingshot] order of magnitude of Slingshot MPI latency
        nics = 4, -- [nersc] 4x HPE Slingshot 11 per GPU node
        nic_GBps = 25, -- [hpe] 200 Gbit/s per NIC
        msg_overhead_us = 0.5, -- estimate: MPI software cost per message
        allreduce_lat_us = 3, -- estimate: per ring step beyond the link latency
    },
    netem = {
        lat_us = 0, -- off
        Gbit = 0, -- off
    },
    pcie = {
        pinned_GBps = 25, -- estimate: ~80% of PCIe 4.0 x16's 31.5 GB/s [pcie][nersc]
        pageable_GBps = 12, -- estimate: pageable copies are staged by the driver (about half)
        lat_us = 10, -- estimate: launch and DMA set-up of one host-to-device copy
        pinned = true, -- halo stages rows in pinned memory on GPU (halo_model_input_buffer)
    },
    device = { -- datasheet figures, not measured (see the header)
        kind = "gpu",
        gemm_TFLOPs = 12, -- estimate: ~60% of the A100's 19.5 FP32 TFLOPS [a100] on 2000x256x256
        agg_GBps = 900, -- estimate: ~60% of 1,555 GB/s HBM2 [a100] for gathers of neighbour rows
        step_overhead_us = 300, -- estimate: ~40 kernel launches of a 2-layer GraphSAGE step + Adam
        adam_GBps = 200, -- estimate: Adam moves ~28 bytes per 4-byte parameter: 1,555 / 7 [a100]
    },
}
