-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-02 00:30 UTC.
-- CPU and device figures: one core (one thread), device cpu; halo sim scales
-- machines and trainers. network.shm_*: 2 local ranks over MPI shared memory;
-- network.oversub_lat_us: exchanges of 2 x cores local ranks (oversubscribed);
-- network.net_lat_us / nic_GBps: 2 local ranks over MPI TCP (--mca btl tcp,self),
-- a stand-in for a NIC on a one-machine profile.
-- Sampling, block and gather constants: a random uniform graph (generic; --graph PDIR measures them on yours).
-- halo cluster profile (docs/profiles.md)
return {
    name = "this-machine-validated",
    machines = 1, -- machines
    trainers = 1, -- trainers (ranks; GPUs when device is gpu) per machine
    cores = 2, -- CPU cores per machine, shared by its trainers' threads
    cpu = {
        sample_edge_ns = 7.883, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 70.43, -- ns: per frontier node sampled (row lookup, offsets), one core
        block_node_ns = 20.95, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 7.325, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 6.234, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 11.42, -- GB/s: sequential copy, one core
        lookup_node_ns = 53.14, -- ns: per remote id looked up in the cache, one core
        hook_us = 0.6088, -- us: per policy hook call (cache_batch), fixed part
        oversub_penalty = 0, -- slow-down per trainer process beyond the cores, relative to the cores (0 = none)
        share_eff = 0.7619, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2137, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 7.094, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 10.63, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 6.375, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 6.081, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1495, -- us: CPU time per message sent or received
        allreduce_lat_us = 1.324, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1019, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 7.185, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.63, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.973, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.168, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 26.4},
            {64, 16, 16, 65.89},
            {64, 16, 64, 83.36},
            {64, 16, 256, 94.27},
            {64, 64, 4, 46.52},
            {64, 64, 16, 82.66},
            {64, 64, 64, 96.47},
            {64, 64, 256, 87.37},
            {64, 256, 4, 57.15},
            {64, 256, 16, 92.55},
            {64, 256, 64, 89.11},
            {64, 256, 256, 91.74},
            {64, 1024, 4, 38.68},
            {64, 1024, 16, 59.28},
            {64, 1024, 64, 87.84},
            {64, 1024, 256, 95.58},
            {512, 16, 4, 40.07},
            {512, 16, 16, 91},
            {512, 16, 64, 97.73},
            {512, 16, 256, 79.77},
            {512, 64, 4, 70.88},
            {512, 64, 16, 101.1},
            {512, 64, 64, 94.98},
            {512, 64, 256, 98.56},
            {512, 256, 4, 77.21},
            {512, 256, 16, 82.86},
            {512, 256, 64, 99.36},
            {512, 256, 256, 104.6},
            {512, 1024, 4, 23.63},
            {512, 1024, 16, 63.48},
            {512, 1024, 64, 92.67},
            {512, 1024, 256, 99.84},
            {4096, 16, 4, 34.9},
            {4096, 16, 16, 66.02},
            {4096, 16, 64, 72.49},
            {4096, 16, 256, 72.77},
            {4096, 64, 4, 37.01},
            {4096, 64, 16, 68.83},
            {4096, 64, 64, 94.39},
            {4096, 64, 256, 89.32},
            {4096, 256, 4, 37.31},
            {4096, 256, 16, 77.75},
            {4096, 256, 64, 87.95},
            {4096, 256, 256, 91.2},
            {4096, 1024, 4, 13.32},
            {4096, 1024, 16, 42.05},
            {4096, 1024, 64, 74.66},
            {4096, 1024, 256, 92.88},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 1, configs = 20, median_pct = 16.0, worst_pct = 43.0, stage_median_pct = 32.7, fit = false, date = "2026-12-02 01:05 UTC" },
}
