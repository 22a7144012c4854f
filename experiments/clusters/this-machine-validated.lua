-- Measured by `halo calibrate` on vm (Intel(R) Xeon(R) Processor, 2 cores online) on 2026-12-03 06:09 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 7.816, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 29.93, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.3846, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 24.22, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 0.3937, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 3.776, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 8.998, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 3.605, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 14.52, -- GB/s: sequential copy, one core
        lookup_node_ns = 22.82, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 14.87, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 5.703, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        fetch_cold_MiB = 39.0625, -- MiB: feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: fetch_GBps at every table size)
        fetch_warm_GBps = 11.08, -- GB/s: the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table size), one core
        fetch_warm_MiB = 1, -- MiB: feature bytes per rank fetch_warm_GBps was measured on
        fetch_kept_GBps = 8.262, -- GB/s: the fetch's rows from a table of fetch_cold_MiB fetched batch after batch, nothing between them (0: not measured), one core
        hook_us = 0.545, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 3.962, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.01319, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_warm = 0.03659, -- oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two sizes interpolated (with fetch_warm_GBps only)
        oversub_gemm = 0.008071, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.1264, -- the same for the sampling stage (0 = none)
        corun_sample = 0.004689, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3.98e+03, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.07373, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.8843, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2928, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 3.561, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 11.95, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 3.389, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 6.344, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1416, -- us: CPU time per message sent or received
        allreduce_lat_us = 0.6203, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 91.03, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
        sleep_cpu_us = 25.66, -- us: CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.1738, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 18.41, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.5362, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.5796, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 1.945, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.717, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 37.12},
            {64, 16, 16, 102.8},
            {64, 16, 64, 131.4},
            {64, 16, 256, 124.7},
            {64, 64, 4, 72.55},
            {64, 64, 16, 118.4},
            {64, 64, 64, 144.1},
            {64, 64, 256, 127.9},
            {64, 256, 4, 71.99},
            {64, 256, 16, 111.8},
            {64, 256, 64, 131.6},
            {64, 256, 256, 143.5},
            {64, 1024, 4, 50.1},
            {64, 1024, 16, 91.56},
            {64, 1024, 64, 130.8},
            {64, 1024, 256, 144.1},
            {512, 16, 4, 42.46},
            {512, 16, 16, 97.5},
            {512, 16, 64, 127.2},
            {512, 16, 256, 101.6},
            {512, 64, 4, 72.73},
            {512, 64, 16, 119.7},
            {512, 64, 64, 135},
            {512, 64, 256, 151},
            {512, 256, 4, 79.6},
            {512, 256, 16, 103.7},
            {512, 256, 64, 152.8},
            {512, 256, 256, 188.6},
            {512, 1024, 4, 27.58},
            {512, 1024, 16, 83.83},
            {512, 1024, 64, 139.3},
            {512, 1024, 256, 168.6},
            {4096, 16, 4, 40.64},
            {4096, 16, 16, 78.64},
            {4096, 16, 64, 91.58},
            {4096, 16, 256, 80.56},
            {4096, 64, 4, 33.54},
            {4096, 64, 16, 90.95},
            {4096, 64, 64, 127.7},
            {4096, 64, 256, 133.1},
            {4096, 256, 4, 28.1},
            {4096, 256, 16, 86.4},
            {4096, 256, 64, 139.8},
            {4096, 256, 256, 179.3},
            {4096, 1024, 4, 23},
            {4096, 1024, 16, 73.02},
            {4096, 1024, 64, 141.4},
            {4096, 1024, 256, 180.5},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 47, configs = 20, median_pct = 8.2, worst_pct = 37.5, stage_median_pct = 27.9, fit = true, date = "2026-12-03 16:04 UTC" },
}
