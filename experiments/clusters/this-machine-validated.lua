-- Measured by `halo calibrate` on vm (Intel(R) Xeon(R) Processor, 2 cores online) on 2026-12-02 20:21 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 8.334, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 30.95, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.4044, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 24.91, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 0.2338, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 3.781, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 9.199, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 3.82, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 14.45, -- GB/s: sequential copy, one core
        lookup_node_ns = 23.91, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 21.67, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 5.997, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        fetch_cold_MiB = 39.0625, -- MiB: feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: fetch_GBps at every table size)
        fetch_warm_GBps = 11.98, -- GB/s: the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table size), one core
        fetch_warm_MiB = 1, -- MiB: feature bytes per rank fetch_warm_GBps was measured on
        hook_us = 0.5586, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 3.881, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.007615, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_warm = 0.03169, -- oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two sizes interpolated (with fetch_warm_GBps only)
        oversub_gemm = 0.008416, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.08275, -- the same for the sampling stage (0 = none)
        corun_sample = 0, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3.98e+03, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.0835, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.9411, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2931, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 3.594, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 12.03, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 3.361, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 6.695, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.141, -- us: CPU time per message sent or received
        allreduce_lat_us = 0.6134, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 90.54, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
        sleep_cpu_us = 24.97, -- us: CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1859, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 18.86, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.4933, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.6425, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.954, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.724, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 37.93},
            {64, 16, 16, 101.7},
            {64, 16, 64, 133.7},
            {64, 16, 256, 146.8},
            {64, 64, 4, 72.12},
            {64, 64, 16, 118.7},
            {64, 64, 64, 143.7},
            {64, 64, 256, 127.7},
            {64, 256, 4, 70.41},
            {64, 256, 16, 112.1},
            {64, 256, 64, 128.5},
            {64, 256, 256, 143.2},
            {64, 1024, 4, 49.5},
            {64, 1024, 16, 87.19},
            {64, 1024, 64, 127.1},
            {64, 1024, 256, 143.4},
            {512, 16, 4, 42.82},
            {512, 16, 16, 99.76},
            {512, 16, 64, 124.1},
            {512, 16, 256, 1e+02},
            {512, 64, 4, 70.74},
            {512, 64, 16, 124.5},
            {512, 64, 64, 135.3},
            {512, 64, 256, 169.5},
            {512, 256, 4, 77.9},
            {512, 256, 16, 103.9},
            {512, 256, 64, 152.4},
            {512, 256, 256, 173.1},
            {512, 1024, 4, 26.94},
            {512, 1024, 16, 81.54},
            {512, 1024, 64, 138.8},
            {512, 1024, 256, 167.9},
            {4096, 16, 4, 39.86},
            {4096, 16, 16, 78.78},
            {4096, 16, 64, 89.54},
            {4096, 16, 256, 72.42},
            {4096, 64, 4, 33.47},
            {4096, 64, 16, 90.08},
            {4096, 64, 64, 121.1},
            {4096, 64, 256, 134.7},
            {4096, 256, 4, 28.24},
            {4096, 256, 16, 85.31},
            {4096, 256, 64, 139.6},
            {4096, 256, 256, 164.3},
            {4096, 1024, 4, 22.43},
            {4096, 1024, 16, 70.6},
            {4096, 1024, 64, 136.3},
            {4096, 1024, 256, 181.9},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 34, configs = 20, median_pct = 2.5, worst_pct = 25.3, stage_median_pct = 9.8, fit = true, date = "2026-12-02 21:59 UTC" },
}
