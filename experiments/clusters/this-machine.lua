-- Measured by `halo calibrate` on vm (Intel(R) Xeon(R) Processor, 2 cores online) on 2026-12-01 09:36 UTC.
-- CPU and device figures: one core (one thread), device cpu; halo sim scales
-- machines and trainers. network.shm_*: 2 local ranks over MPI shared memory;
-- network.net_lat_us / nic_GBps: 2 local ranks over MPI TCP (--mca btl tcp,self),
-- a stand-in for a NIC on a one-machine profile.
-- halo cluster profile (docs/profiles.md)
return {
    name = "this-machine",
    machines = 1, -- machines
    trainers = 1, -- trainers (ranks; GPUs when device is gpu) per machine
    cores = 2, -- CPU cores per machine, shared by its trainers' threads
    cpu = {
        sample_edge_ns = 15.39, -- ns: per sampled edge (draw + write), one core
        sample_node_ns = 41.17, -- ns: per frontier node sampled (row lookup, offsets), one core
        block_node_ns = 15.31, -- ns: per source node when building a block (dedup hash), one core
        gather_GBps = 4.82, -- GB/s: gather of random feature rows (local copy), one core
        memcpy_GBps = 13.9, -- GB/s: sequential copy, one core
        lookup_node_ns = 29.35, -- ns: per remote id looked up in the cache, one core
        hook_us = 0.7011, -- us: per policy hook call (cache_batch), fixed part
    },
    network = {
        shm_lat_us = 0.4369, -- us: latency of a message between ranks of one machine
        shm_GBps = 3.005, -- GB/s: bandwidth between ranks of one machine, per flow
        net_lat_us = 12.44, -- us: latency of a message between machines
        nics = 1, -- NICs per machine (its trainers share them evenly)
        nic_GBps = 1.979, -- GB/s: bandwidth of one NIC, each direction
        msg_overhead_us = 0.2101, -- us: CPU time per message sent or received
        allreduce_lat_us = 0.2791, -- us: per ring step of an allreduce, added to the link latency
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
        gemm_TFLOPs = 0.03256, -- TFLOP/s: GEMM rate of one trainer (gpu: one GPU; cpu: one core)
        agg_GBps = 3.567, -- GB/s: sparse aggregation (mean of neighbour rows), bytes of rows read
        step_overhead_us = 2.244, -- us: fixed time per training step (launches, loss, optimiser)
        adam_GBps = 1.233, -- GB/s: the optimiser's pass over the parameters, bytes of parameters
    },
}
