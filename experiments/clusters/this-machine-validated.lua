-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-04 03:32 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 10.46, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 29.89, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.3414, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 34.85, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 4.018, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 5.328, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 8.031, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 7.884, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 12.02, -- GB/s: sequential copy, one core
        lookup_node_ns = 50.25, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 6.556, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 3.486, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        fetch_cold_MiB = 39.0625, -- MiB: feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: fetch_GBps at every table size)
        fetch_warm_GBps = 12.42, -- GB/s: the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table size), one core
        fetch_warm_MiB = 1, -- MiB: feature bytes per rank fetch_warm_GBps was measured on
        fetch_kept_GBps = 3.879, -- GB/s: the fetch's rows from a table of fetch_cold_MiB fetched batch after batch, nothing between them (0: not measured), one core
        hook_us = 0.6056, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 5.36, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.09873, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_warm = 0.1809, -- oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two sizes interpolated (with fetch_warm_GBps only)
        oversub_gemm = 0.03133, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.05071, -- the same for the sampling stage (0 = none)
        crowd_sample = 0, -- slow-down per trainer process beyond the cores of the sampling stage, measured on training (used instead of oversub_* when crowd_ranks > 0)
        crowd_fetch = 0.04925, -- the same for the fetch
        crowd_compute = 0, -- the same for the compute
        crowd_ranks = 4, -- trainer processes the crowding probe ran (0: not measured, oversub_* apply)
        wake_sample_250us = 0, -- slow-down of a sampling step whose thread was off the CPU 250 us since its last one (its caches emptied; 0 = none)
        wake_sample_1ms = 0, -- slow-down of a sampling step whose thread was off the CPU 1 ms since its last one (its caches emptied; 0 = none)
        wake_sample_4ms = 0.02475, -- slow-down of a sampling step whose thread was off the CPU 4 ms since its last one (its caches emptied; 0 = none)
        wake_sample_16ms = 0.1276, -- slow-down of a sampling step whose thread was off the CPU 16 ms since its last one (its caches emptied; 0 = none)
        wake_compute_250us = 0, -- the same for a compute or Adam step of wake_step_us, off the CPU 250 us since its last
        wake_compute_1ms = 0.01568, -- the same for a compute or Adam step of wake_step_us, off the CPU 1 ms since its last
        wake_compute_4ms = 0.1038, -- the same for a compute or Adam step of wake_step_us, off the CPU 4 ms since its last
        wake_compute_16ms = 0.1125, -- the same for a compute or Adam step of wake_step_us, off the CPU 16 ms since its last
        wake_step_us = 2838, -- us: us: the wake probe's large training step (0: wake_compute_* at every size)
        wake_small_250us = 0.03248, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_1ms = 0.171, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_4ms = 0.4694, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_16ms = 0.5483, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_us = 305.3, -- us: us: the wake probe's small training step (0: none measured)
        corun_sample = 0.3493, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3962, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.1512, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.8856, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
        jitter = 0.1169, -- sigma of a CPU step's log time between runs of it (its mean kept): ranks that meet in an exchange wait for the slowest (0 = none)
    },
    network = {
        shm_lat_us = 0.2145, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 10.12, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 10.44, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 6.78, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 4.949, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1826, -- us: CPU time per message sent or received
        allreduce_lat_us = 2.081, -- us: per ring step of an allreduce, added to the link latency
        allreduce_GBps = 3.26, -- GB/s: the runtime's allreduce between 2 ranks of one machine: bytes of the buffer per second beyond its latency; T ranks take ceil(log2 T) times as long (0: a ring at shm_GBps)
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 92.91, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
        sleep_cpu_us = 25.64, -- us: CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.09981, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 9.488, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.631, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 2.754, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.163, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 27.55},
            {64, 16, 16, 69.62},
            {64, 16, 64, 87.63},
            {64, 16, 256, 97.01},
            {64, 64, 4, 47.65},
            {64, 64, 16, 86.67},
            {64, 64, 64, 97.79},
            {64, 64, 256, 89.96},
            {64, 256, 4, 59.77},
            {64, 256, 16, 92.12},
            {64, 256, 64, 93.68},
            {64, 256, 256, 97.8},
            {64, 1024, 4, 39.82},
            {64, 1024, 16, 62.01},
            {64, 1024, 64, 87.58},
            {64, 1024, 256, 96.44},
            {512, 16, 4, 39.5},
            {512, 16, 16, 90.9},
            {512, 16, 64, 98.62},
            {512, 16, 256, 80.9},
            {512, 64, 4, 70.81},
            {512, 64, 16, 101.2},
            {512, 64, 64, 95.32},
            {512, 64, 256, 99.25},
            {512, 256, 4, 76.17},
            {512, 256, 16, 82.67},
            {512, 256, 64, 99.54},
            {512, 256, 256, 104.5},
            {512, 1024, 4, 23.15},
            {512, 1024, 16, 61.93},
            {512, 1024, 64, 90.33},
            {512, 1024, 256, 98.34},
            {4096, 16, 4, 40.88},
            {4096, 16, 16, 65.32},
            {4096, 16, 64, 77.64},
            {4096, 16, 256, 74.09},
            {4096, 64, 4, 36.6},
            {4096, 64, 16, 70.56},
            {4096, 64, 64, 94.08},
            {4096, 64, 256, 83.21},
            {4096, 256, 4, 30.05},
            {4096, 256, 16, 70.45},
            {4096, 256, 64, 81.28},
            {4096, 256, 256, 91.94},
            {4096, 1024, 4, 13.57},
            {4096, 1024, 16, 40.6},
            {4096, 1024, 64, 73.9},
            {4096, 1024, 256, 93.92},
            {32768, 16, 4, 29.12},
            {32768, 16, 16, 61.48},
            {32768, 16, 64, 62.45},
            {32768, 16, 256, 47.86},
            {32768, 64, 4, 27.9},
            {32768, 64, 16, 57.45},
            {32768, 64, 64, 65.89},
            {32768, 64, 256, 73.66},
            {32768, 256, 4, 12.97},
            {32768, 256, 16, 45.2},
            {32768, 256, 64, 75.65},
            {32768, 256, 256, 91.31},
            {32768, 1024, 4, 11.49},
            {32768, 1024, 16, 34.67},
            {32768, 1024, 64, 67.63},
            {32768, 1024, 256, 93.31},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 47, configs = 20, median_pct = 6.0, worst_pct = 39.8, stage_median_pct = 21.5, fit = true, date = "2026-12-04 07:26 UTC" },
}
