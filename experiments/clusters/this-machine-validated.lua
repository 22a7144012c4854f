-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-02 04:52 UTC.
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
        sample_edge_ns = 7.588, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 58.02, -- ns: per frontier node sampled (row lookup, offsets), one core
        block_node_ns = 18.7, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 8.237, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 4.763, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 11.22, -- GB/s: sequential copy, one core
        lookup_node_ns = 46.5, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 4.254, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 4.986, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        hook_us = 0.6253, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 5.225, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.541, -- slow-down per trainer process beyond the cores, relative to the cores (0 = none)
        slice_us = 3979, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.09741, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 1, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2185, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 6.773, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 9.868, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 5.435, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 7.822, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1934, -- us: CPU time per message sent or received
        allreduce_lat_us = 1.536, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 78.94, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.103, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 11.88, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 2.389, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.5585, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.993, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.193, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 32.72},
            {64, 16, 16, 80.51},
            {64, 16, 64, 96.47},
            {64, 16, 256, 105.1},
            {64, 64, 4, 59.15},
            {64, 64, 16, 93.27},
            {64, 64, 64, 102.7},
            {64, 64, 256, 91.79},
            {64, 256, 4, 67.82},
            {64, 256, 16, 96.35},
            {64, 256, 64, 92.79},
            {64, 256, 256, 96.63},
            {64, 1024, 4, 40.72},
            {64, 1024, 16, 64.19},
            {64, 1024, 64, 88.28},
            {64, 1024, 256, 95.27},
            {512, 16, 4, 40.15},
            {512, 16, 16, 91.53},
            {512, 16, 64, 98.19},
            {512, 16, 256, 79.88},
            {512, 64, 4, 71.39},
            {512, 64, 16, 101.4},
            {512, 64, 64, 95.02},
            {512, 64, 256, 98.36},
            {512, 256, 4, 76.69},
            {512, 256, 16, 82.83},
            {512, 256, 64, 99.31},
            {512, 256, 256, 104.7},
            {512, 1024, 4, 22.91},
            {512, 1024, 16, 62.59},
            {512, 1024, 64, 91.03},
            {512, 1024, 256, 98.08},
            {4096, 16, 4, 41.16},
            {4096, 16, 16, 66.9},
            {4096, 16, 64, 77.49},
            {4096, 16, 256, 76.75},
            {4096, 64, 4, 37.23},
            {4096, 64, 16, 79.69},
            {4096, 64, 64, 94.21},
            {4096, 64, 256, 93.1},
            {4096, 256, 4, 37.42},
            {4096, 256, 16, 80.02},
            {4096, 256, 64, 95.67},
            {4096, 256, 256, 97.98},
            {4096, 1024, 4, 15.46},
            {4096, 1024, 16, 44.91},
            {4096, 1024, 64, 78.76},
            {4096, 1024, 256, 97.64},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 7, configs = 20, median_pct = 11.2, worst_pct = 52.4, stage_median_pct = 30.9, fit = true, date = "2026-12-02 06:03 UTC" },
}
