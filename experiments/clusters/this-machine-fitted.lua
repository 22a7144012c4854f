-- this-machine fitted by `halo calibrate --from-metrics /tmp/val5/r4-distdgl-d0.run.jsonl,/tmp/val5/r2-distdgl-d0.run.jsonl --base /tmp/val5/base.lua --rounds 4`: the
-- stage constants were scaled so that halo sim reproduces that measured run; one
-- machine of 4 trainers as it ran (override with halo sim --machines/--trainers).
-- halo cluster profile (docs/profiles.md)
return {
    name = "this-machine-fitted",
    machines = 1, -- machines
    trainers = 4, -- trainers (ranks; GPUs when device is gpu) per machine
    cores = 2, -- CPU cores per machine, shared by its trainers' threads
    cpu = {
        sample_edge_s = 1.7113752428358608e-08, -- s: per sampled edge (draw + write), one core
        sample_node_ns = 45.78123375409511, -- ns: per frontier node sampled (row lookup, offsets), one core
        block_node_ns = 17.024792051862914, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 6.712713689682388, -- GB/s: gather of random feature rows (local copy), one core
        memcpy_GBps = 19.358240723357927, -- GB/s: sequential copy, one core
        lookup_node_s = 2.1074487389122284e-08, -- s: per remote id looked up in the cache, one core
        hook_us = 0.5034181638335139, -- us: per policy hook call (cache_batch), fixed part
        oversub_penalty = 0.38720703125, -- slow-down per trainer process beyond the cores, relative to the cores (0 = none)
    },
    network = {
        shm_lat_us = 0.31371187530860395, -- us: latency of a message between ranks of one machine
        shm_GBps = 4.185000962136012, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 12.44, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 1.979, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.1508602998451309, -- us: CPU time per message sent or received
        allreduce_lat_us = 2.6633083484693447, -- us: per ring step of an allreduce, added to the link latency
    },
    netem = {
        lat_us = 0, -- us: emulated latency per exchange (halo train --netem lat=), 0 = off
        Gbit = 0, -- Gbit/s: emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite
    },
    pcie = {
        pinned_GBps = 0, -- GB/s: host-to-device copies from pinned memory
        pageable_GBps = 0, -- GB/s: host-to-device copies from pageable memory
        lat_us = 0, -- us: latency per host-to-device copy
        pinned = false, -- the data path stages rows in pinned memory
    },
    device = {
        kind = "cpu", -- where a trainer computes: "cpu" or "gpu"
        gemm_flops = 61527049338.281685, -- flop/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_Bps = 6740386516.8811655, -- B/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        step_overhead_us = 1.1875206236249607, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 2.329940166895004, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
    },
}
