-- Measured by `halo calibrate` on vm (Intel(R) Xeon(R) Processor, 2 cores online) on 2026-12-02 14:27 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 9.01, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 29.15, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.3894, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 30.97, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 0.2263, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 4.3, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 8.199, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 1.09, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 10.33, -- GB/s: sequential copy, one core
        lookup_node_ns = 31.21, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 17.68, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 4.929, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        hook_us = 0.6142, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 4.401, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.1532, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_gemm = 0.04022, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.3749, -- the same for the sampling stage (0 = none)
        corun_sample = 0.02032, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3.97e+03, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.08662, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.8891, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.3151, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 5.989, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 11.4, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 3.733, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 5.947, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1613, -- us: CPU time per message sent or received
        allreduce_lat_us = 0.7306, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 96.4, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1546, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 18.3, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.6263, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.6435, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 2.157, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.498, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 33.48},
            {64, 16, 16, 87.38},
            {64, 16, 64, 118.2},
            {64, 16, 256, 116.8},
            {64, 64, 4, 61.9},
            {64, 64, 16, 101.5},
            {64, 64, 64, 129},
            {64, 64, 256, 113.1},
            {64, 256, 4, 61.74},
            {64, 256, 16, 99.21},
            {64, 256, 64, 113.8},
            {64, 256, 256, 124.4},
            {64, 1024, 4, 44.3},
            {64, 1024, 16, 78.59},
            {64, 1024, 64, 116.3},
            {64, 1024, 256, 125.3},
            {512, 16, 4, 38.08},
            {512, 16, 16, 87.97},
            {512, 16, 64, 111.6},
            {512, 16, 256, 90.2},
            {512, 64, 4, 62.63},
            {512, 64, 16, 105.8},
            {512, 64, 64, 120.2},
            {512, 64, 256, 134.2},
            {512, 256, 4, 66.75},
            {512, 256, 16, 91.15},
            {512, 256, 64, 133.4},
            {512, 256, 256, 148.2},
            {512, 1024, 4, 25.06},
            {512, 1024, 16, 73.63},
            {512, 1024, 64, 122.4},
            {512, 1024, 256, 146.2},
            {4096, 16, 4, 35.36},
            {4096, 16, 16, 68.07},
            {4096, 16, 64, 78.3},
            {4096, 16, 256, 70.21},
            {4096, 64, 4, 29.37},
            {4096, 64, 16, 77.1},
            {4096, 64, 64, 106.9},
            {4096, 64, 256, 116.3},
            {4096, 256, 4, 26.35},
            {4096, 256, 16, 74.8},
            {4096, 256, 64, 121.4},
            {4096, 256, 256, 144.3},
            {4096, 1024, 4, 21.3},
            {4096, 1024, 16, 62.61},
            {4096, 1024, 64, 115.2},
            {4096, 1024, 256, 136.5},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 26, configs = 20, median_pct = 7.7, worst_pct = 37.4, stage_median_pct = 20.8, fit = true, date = "2026-12-02 14:51 UTC" },
}
