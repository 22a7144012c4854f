-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-02 11:05 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 5.62, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 20.2, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.1896, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 32.64, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 1.086, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 3.597, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 16.25, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 9.289, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 20.88, -- GB/s: sequential copy, one core
        lookup_node_ns = 46.45, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 16.98, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 8.757, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        hook_us = 0.5149, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 3.337, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.3765, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_gemm = 0.153, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.3066, -- the same for the sampling stage (0 = none)
        corun_sample = 0.3856, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3981, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.05643, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.843, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.1992, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 7.024, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 12.61, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 4.821, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 10.3, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1563, -- us: CPU time per message sent or received
        allreduce_lat_us = 1.454, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 83.05, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1174, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 18.56, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.1275, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.4174, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 2.133, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.461, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 27.58},
            {64, 16, 16, 68.17},
            {64, 16, 64, 87.26},
            {64, 16, 256, 92.22},
            {64, 64, 4, 39.9},
            {64, 64, 16, 86.48},
            {64, 64, 64, 103.1},
            {64, 64, 256, 106},
            {64, 256, 4, 43.34},
            {64, 256, 16, 92.22},
            {64, 256, 64, 106.9},
            {64, 256, 256, 110.8},
            {64, 1024, 4, 39.15},
            {64, 1024, 16, 87.91},
            {64, 1024, 64, 106.6},
            {64, 1024, 256, 109.4},
            {512, 16, 4, 34.87},
            {512, 16, 16, 79.48},
            {512, 16, 64, 93.4},
            {512, 16, 256, 91.06},
            {512, 64, 4, 43.07},
            {512, 64, 16, 93.76},
            {512, 64, 64, 109.5},
            {512, 64, 256, 112.4},
            {512, 256, 4, 45.13},
            {512, 256, 16, 97.34},
            {512, 256, 64, 114.7},
            {512, 256, 256, 119.3},
            {512, 1024, 4, 37.6},
            {512, 1024, 16, 88.79},
            {512, 1024, 64, 111.1},
            {512, 1024, 256, 113.7},
            {4096, 16, 4, 36.67},
            {4096, 16, 16, 81.54},
            {4096, 16, 64, 92.43},
            {4096, 16, 256, 94.08},
            {4096, 64, 4, 41.58},
            {4096, 64, 16, 91.32},
            {4096, 64, 64, 108.1},
            {4096, 64, 256, 105.7},
            {4096, 256, 4, 43.88},
            {4096, 256, 16, 94.7},
            {4096, 256, 64, 106.3},
            {4096, 256, 256, 107.3},
            {4096, 1024, 4, 22.3},
            {4096, 1024, 16, 62.22},
            {4096, 1024, 64, 93.94},
            {4096, 1024, 256, 106.7},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 19, configs = 20, median_pct = 4.6, worst_pct = 31.0, stage_median_pct = 18.6, fit = true, date = "2026-12-02 11:26 UTC" },
}
