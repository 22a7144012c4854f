-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-02 07:08 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 7.167, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 32.34, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.2385, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 40.56, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 4.426, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 7.602, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 9.1, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 10.29, -- GB/s: sequential copy, one core
        lookup_node_ns = 49.9, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 15.59, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 4.116, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        hook_us = 0.6012, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 5.551, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.08674, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_gemm = 0.07388, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.09233, -- the same for the sampling stage (0 = none)
        corun_sample = 0.07664, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3938, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.1403, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.9792, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2433, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 9.744, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 9.322, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 5.369, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 7.547, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.155, -- us: CPU time per message sent or received
        allreduce_lat_us = 1.958, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 98.38, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.096, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 7.798, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.5588, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.993, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.176, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 32.29},
            {64, 16, 16, 80.51},
            {64, 16, 64, 97.19},
            {64, 16, 256, 105.5},
            {64, 64, 4, 58.1},
            {64, 64, 16, 92.61},
            {64, 64, 64, 102.3},
            {64, 64, 256, 91.28},
            {64, 256, 4, 66.77},
            {64, 256, 16, 95.82},
            {64, 256, 64, 92.73},
            {64, 256, 256, 95.9},
            {64, 1024, 4, 39.44},
            {64, 1024, 16, 62.25},
            {64, 1024, 64, 87.13},
            {64, 1024, 256, 93.63},
            {512, 16, 4, 39.57},
            {512, 16, 16, 90.89},
            {512, 16, 64, 98.37},
            {512, 16, 256, 80.38},
            {512, 64, 4, 70.55},
            {512, 64, 16, 101},
            {512, 64, 64, 95.24},
            {512, 64, 256, 98.6},
            {512, 256, 4, 76.84},
            {512, 256, 16, 82.89},
            {512, 256, 64, 99.44},
            {512, 256, 256, 102.9},
            {512, 1024, 4, 22.97},
            {512, 1024, 16, 60.79},
            {512, 1024, 64, 89.46},
            {512, 1024, 256, 96.21},
            {4096, 16, 4, 39.85},
            {4096, 16, 16, 64.91},
            {4096, 16, 64, 77.06},
            {4096, 16, 256, 72.66},
            {4096, 64, 4, 31.24},
            {4096, 64, 16, 79.19},
            {4096, 64, 64, 91.29},
            {4096, 64, 256, 83.68},
            {4096, 256, 4, 29.52},
            {4096, 256, 16, 67.5},
            {4096, 256, 64, 75.11},
            {4096, 256, 256, 90.7},
            {4096, 1024, 4, 13.25},
            {4096, 1024, 16, 41},
            {4096, 1024, 64, 70.31},
            {4096, 1024, 256, 91.99},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 10, configs = 20, median_pct = 13.7, worst_pct = 34.1, stage_median_pct = 18.7, fit = true, date = "2026-12-02 08:27 UTC" },
}
