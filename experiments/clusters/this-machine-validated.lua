-- Measured by `halo calibrate` on vm (AMD EPYC, 2 cores online) on 2026-12-03 19:19 UTC; each figure the median of 3 passes.
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
        sample_edge_ns = 9.16, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 57.48, -- ns: per frontier node sampled (row lookup, offsets), one core
        sample_copy_ns = 0.3554, -- ns: per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core
        sample_long_ns = 36.26, -- ns: per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core
        block_node_ns = 7.968, -- ns: per source node when building a block (dedup hash), one core
        block_edge_ns = 4.687, -- ns: per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core
        gather_GBps = 7.576, -- GB/s: gather of random feature rows (local copy), one core
        gather_row_ns = 9.677, -- ns: per gathered feature row besides its bytes (0: bytes only), one core
        memcpy_GBps = 10.07, -- GB/s: sequential copy, one core
        lookup_node_ns = 50.14, -- ns: per remote id looked up in the cache, one core
        fetch_node_ns = 8.061, -- ns: per input node of a batch in the fetch besides its gathers (0: not measured), one core
        fetch_GBps = 3.279, -- GB/s: the fetch's rows, gathered, received or served (0: gather_GBps), one core
        fetch_cold_MiB = 39.0625, -- MiB: feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: fetch_GBps at every table size)
        fetch_warm_GBps = 5.508, -- GB/s: the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table size), one core
        fetch_warm_MiB = 1, -- MiB: feature bytes per rank fetch_warm_GBps was measured on
        fetch_kept_GBps = 3.303, -- GB/s: the fetch's rows from a table of fetch_cold_MiB fetched batch after batch, nothing between them (0: not measured), one core
        hook_us = 0.6415, -- us: per policy hook call (cache_batch), fixed part
        hook_unit_ns = 5.923, -- ns: per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)
        oversub_penalty = 0.04257, -- slow-down per trainer process beyond the cores, relative to the cores, of gathers (fetch, aggregation, element passes; 0 = none)
        oversub_warm = 0.1867, -- oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two sizes interpolated (with fetch_warm_GBps only)
        oversub_gemm = 0.0367, -- the same for the compute's GEMMs (0 = none)
        oversub_sample = 0.02084, -- the same for the sampling stage (0 = none)
        crowd_sample = 0.1236, -- slow-down per trainer process beyond the cores of the sampling stage, measured on training (used instead of oversub_* when crowd_ranks > 0)
        crowd_fetch = 0.2362, -- the same for the fetch
        crowd_compute = 0, -- the same for the compute
        crowd_ranks = 4, -- trainer processes the crowding probe ran (0: not measured, oversub_* apply)
        wake_sample_250us = 0, -- slow-down of a sampling step whose thread was off the CPU 250 us since its last one (its caches emptied; 0 = none)
        wake_sample_1ms = 0, -- slow-down of a sampling step whose thread was off the CPU 1 ms since its last one (its caches emptied; 0 = none)
        wake_sample_4ms = 0.06131, -- slow-down of a sampling step whose thread was off the CPU 4 ms since its last one (its caches emptied; 0 = none)
        wake_sample_16ms = 0.0779, -- slow-down of a sampling step whose thread was off the CPU 16 ms since its last one (its caches emptied; 0 = none)
        wake_compute_250us = 0.0108, -- the same for a compute or Adam step of wake_step_us, off the CPU 250 us since its last
        wake_compute_1ms = 0.04681, -- the same for a compute or Adam step of wake_step_us, off the CPU 1 ms since its last
        wake_compute_4ms = 0.1028, -- the same for a compute or Adam step of wake_step_us, off the CPU 4 ms since its last
        wake_compute_16ms = 0.09373, -- the same for a compute or Adam step of wake_step_us, off the CPU 16 ms since its last
        wake_step_us = 3275, -- us: us: the wake probe's large training step (0: wake_compute_* at every size)
        wake_small_250us = 0.02064, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_1ms = 0.2785, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_4ms = 0.488, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_16ms = 0.5263, -- the same for a step of wake_small_us (between the two sizes: in log seconds)
        wake_small_us = 313.4, -- us: us: the wake probe's small training step (0: none measured)
        corun_sample = 0.07176, -- slow-down of the sampling stage while every core is busy, against alone (0 = none)
        slice_us = 3944, -- us: time slice of a busy core: a task that ran this long while others wait gives it up (0: a task keeps its core to its end)
        poll_frac = 0.1532, -- with more busy threads than cores, the share of a core a thread waiting in an exchange takes by polling (0 = none)
        share_eff = 0.9412, -- with more busy threads than cores, the share of a fair split they get (0: not measured)
        share_threads = 4, -- threads share_eff was measured with (0: not measured)
    },
    network = {
        shm_lat_us = 0.2547, -- us: latency of a message between ranks of one machine
        oversub_lat_us = 9.817, -- us: the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)
        shm_GBps = 7.918, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 7.17, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 2.195, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.168, -- us: CPU time per message sent or received
        allreduce_lat_us = 2.135, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
        over_us = 100.6, -- us: how late the sleep of an emulated delay wakes up on this machine, added to each delay
        sleep_cpu_us = 27.93, -- us: CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_TFLOPs = 0.09609, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 9.575, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        agg_edge_ns = 0.9631, -- ns: per aggregated edge besides its row's bytes (0: bytes only)
        elem_ns = 0.5807, -- ns: per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)
        step_overhead_us = 2.954, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 0.8608, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW and dX GEMMs}, one core
            {64, 16, 4, 29.93},
            {64, 16, 16, 67.7},
            {64, 16, 64, 88.24},
            {64, 16, 256, 98.41},
            {64, 64, 4, 53.08},
            {64, 64, 16, 85.17},
            {64, 64, 64, 95.36},
            {64, 64, 256, 87.25},
            {64, 256, 4, 60.78},
            {64, 256, 16, 92.33},
            {64, 256, 64, 87},
            {64, 256, 256, 92.69},
            {64, 1024, 4, 36.69},
            {64, 1024, 16, 59.61},
            {64, 1024, 64, 84.73},
            {64, 1024, 256, 93.2},
            {512, 16, 4, 34.44},
            {512, 16, 16, 77.14},
            {512, 16, 64, 88.81},
            {512, 16, 256, 72.25},
            {512, 64, 4, 59.13},
            {512, 64, 16, 90.6},
            {512, 64, 64, 86.59},
            {512, 64, 256, 92.06},
            {512, 256, 4, 67.39},
            {512, 256, 16, 74.22},
            {512, 256, 64, 96.73},
            {512, 256, 256, 101.6},
            {512, 1024, 4, 23.58},
            {512, 1024, 16, 61.35},
            {512, 1024, 64, 86.05},
            {512, 1024, 256, 93.79},
            {4096, 16, 4, 34.55},
            {4096, 16, 16, 61.44},
            {4096, 16, 64, 75.24},
            {4096, 16, 256, 69.38},
            {4096, 64, 4, 34.83},
            {4096, 64, 16, 74.91},
            {4096, 64, 64, 87.7},
            {4096, 64, 256, 77.07},
            {4096, 256, 4, 30.75},
            {4096, 256, 16, 64.66},
            {4096, 256, 64, 74.28},
            {4096, 256, 256, 90.5},
            {4096, 1024, 4, 12.45},
            {4096, 1024, 16, 38.15},
            {4096, 1024, 64, 70.21},
            {4096, 1024, 256, 91.52},
            {32768, 16, 4, 25.68},
            {32768, 16, 16, 62.7},
            {32768, 16, 64, 52.45},
            {32768, 16, 256, 41.65},
            {32768, 64, 4, 24.83},
            {32768, 64, 16, 54.28},
            {32768, 64, 64, 63.24},
            {32768, 64, 256, 75.22},
            {32768, 256, 4, 12.5},
            {32768, 256, 16, 44.31},
            {32768, 256, 64, 71.64},
            {32768, 256, 256, 90.29},
            {32768, 1024, 4, 11.63},
            {32768, 1024, 16, 35.22},
            {32768, 1024, 64, 68.64},
            {32768, 1024, 256, 89.46},
        },
    },
    fit = {
        sample = 1, -- scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)
        fetch = 1, -- scale of the fetch stage's CPU time (1 = not fitted)
        compute = 1, -- scale of the compute stage's time (1 = not fitted)
        allreduce = 1, -- scale of the allreduce's latency per ring step (1 = not fitted)
    },
    validation = { seed = 47, configs = 20, median_pct = 7.6, worst_pct = 29.2, stage_median_pct = 25.6, fit = false, date = "2026-12-03 20:01 UTC" },
}
