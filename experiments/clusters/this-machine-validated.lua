-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-02 02:32 UTC.
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
        sample_edge_ns = 7.886, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 57.49, -- ns: per frontier node sampled (row lookup, offsets), one core
        block_node_ns = 18.5, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 8.641, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 5.647, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 12.52, -- GB/s: sequential copy, one core
        lookup_node_ns = 47.24, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 1.282, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 4.348, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        hook_us = 0.5921, -- us: per policy hook call (cache_batch), fixed part
        oversub_penalty = 0.09932, -- slow-down per trainer process beyond the cores, relative to the cores (0 = none)
        slice_us = 3979, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.1706, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.9423, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.149, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 9.253, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 11.54, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 7.538, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 1.864, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1089, -- us: CPU time per message sent or received
        allreduce_lat_us = 1.633, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 80.43, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1053, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 16.6, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 3.826, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.6004, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.973, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.189, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 32.72},
            {64, 16, 16, 80.45},
            {64, 16, 64, 94.61},
            {64, 16, 256, 105.3},
            {64, 64, 4, 58.44},
            {64, 64, 16, 93.27},
            {64, 64, 64, 102.7},
            {64, 64, 256, 91.74},
            {64, 256, 4, 67.82},
            {64, 256, 16, 96.47},
            {64, 256, 64, 92.59},
            {64, 256, 256, 96.49},
            {64, 1024, 4, 41.24},
            {64, 1024, 16, 64.2},
            {64, 1024, 64, 88.29},
            {64, 1024, 256, 95.46},
            {512, 16, 4, 40.15},
            {512, 16, 16, 91.21},
            {512, 16, 64, 97.7},
            {512, 16, 256, 79.67},
            {512, 64, 4, 71.33},
            {512, 64, 16, 101.4},
            {512, 64, 64, 95.16},
            {512, 64, 256, 98.44},
            {512, 256, 4, 77.38},
            {512, 256, 16, 83.1},
            {512, 256, 64, 99.35},
            {512, 256, 256, 104.6},
            {512, 1024, 4, 23.2},
            {512, 1024, 16, 63.57},
            {512, 1024, 64, 92.38},
            {512, 1024, 256, 102.2},
            {4096, 16, 4, 41.46},
            {4096, 16, 16, 66.98},
            {4096, 16, 64, 77.78},
            {4096, 16, 256, 76.99},
            {4096, 64, 4, 37.41},
            {4096, 64, 16, 79.89},
            {4096, 64, 64, 94.48},
            {4096, 64, 256, 95.41},
            {4096, 256, 4, 37.59},
            {4096, 256, 16, 80.11},
            {4096, 256, 64, 95.32},
            {4096, 256, 256, 96.72},
            {4096, 1024, 4, 14.57},
            {4096, 1024, 16, 43.88},
            {4096, 1024, 64, 80.1},
            {4096, 1024, 256, 95.52},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 4, configs = 20, median_pct = 5.0, worst_pct = 37.1, stage_median_pct = 19.4, fit = true, date = "2026-12-02 03:26 UTC" },
}
