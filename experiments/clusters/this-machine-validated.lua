-- Measured by `halo calibrate` on vm (Intel(R) Xeon(R) Processor, 2 cores online) on 2026-12-03 03:19 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 7.843, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 30.94, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.3963, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 23.83, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 0.2875, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 3.706, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 9.07, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 2.716, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 14.5, -- GB/s: sequential copy, one core
        lookup_node_ns = 23.48, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 15.86, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 5.91, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        fetch_cold_MiB = 39.0625, -- MiB: feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: fetch_GBps at every table size)
        fetch_warm_GBps = 11.6, -- GB/s: the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table size), one core
        fetch_warm_MiB = 1, -- MiB: feature bytes per rank fetch_warm_GBps was measured on
        fetch_kept_GBps = 8.204, -- GB/s: the fetch's rows from a table of fetch_cold_MiB fetched batch after batch, nothing between them (0: not measured), one core
        hook_us = 0.5337, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 3.865, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.003696, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_warm = 0.009916, -- oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two sizes interpolated (with fetch_warm_GBps only)
        oversub_gemm = 0.002935, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.0557, -- the same for the sampling stage (0 = none)
        corun_sample = 0, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3.98e+03, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.08092, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.9208, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2997, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 3.551, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 12.14, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 3.425, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 6.562, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1388, -- us: CPU time per message sent or received
        allreduce_lat_us = 0.6059, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 90.84, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
        sleep_cpu_us = 25.1, -- us: CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.193, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 19.36, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.5819, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.564, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.794, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.732, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 38.58},
            {64, 16, 16, 108.1},
            {64, 16, 64, 146.4},
            {64, 16, 256, 139},
            {64, 64, 4, 81.31},
            {64, 64, 16, 131.5},
            {64, 64, 64, 161.2},
            {64, 64, 256, 142.1},
            {64, 256, 4, 80.69},
            {64, 256, 16, 124.7},
            {64, 256, 64, 143.4},
            {64, 256, 256, 159.5},
            {64, 1024, 4, 56.77},
            {64, 1024, 16, 96.74},
            {64, 1024, 64, 146},
            {64, 1024, 256, 158.8},
            {512, 16, 4, 48},
            {512, 16, 16, 108.9},
            {512, 16, 64, 136.6},
            {512, 16, 256, 113.2},
            {512, 64, 4, 80.4},
            {512, 64, 16, 134.1},
            {512, 64, 64, 150.9},
            {512, 64, 256, 168.1},
            {512, 256, 4, 87.28},
            {512, 256, 16, 116.3},
            {512, 256, 64, 170.8},
            {512, 256, 256, 190.3},
            {512, 1024, 4, 28.04},
            {512, 1024, 16, 86.92},
            {512, 1024, 64, 153.6},
            {512, 1024, 256, 187.3},
            {4096, 16, 4, 46.28},
            {4096, 16, 16, 81.39},
            {4096, 16, 64, 94.92},
            {4096, 16, 256, 81.07},
            {4096, 64, 4, 34.5},
            {4096, 64, 16, 94.79},
            {4096, 64, 64, 134.7},
            {4096, 64, 256, 145.8},
            {4096, 256, 4, 29.07},
            {4096, 256, 16, 91.82},
            {4096, 256, 64, 154.8},
            {4096, 256, 256, 183.1},
            {4096, 1024, 4, 23.21},
            {4096, 1024, 16, 73.79},
            {4096, 1024, 64, 147.3},
            {4096, 1024, 256, 186},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 42, configs = 20, median_pct = 2.0, worst_pct = 9.6, stage_median_pct = 10.3, fit = true, date = "2026-12-03 03:39 UTC" },
}
