/* Cluster profiles: reads a Lua profile through policy/'s data loader, checks it, writes it. */
#include "sim/profile.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/sort.h"
#include "policy/policy.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a field is stored. */
enum {
    K_INT,  /* int, a whole number >= 1 */
    K_NUM,  /* double in SI units, converted from the file's unit */
    K_BOOL, /* bool */
    K_KIND  /* int HALO_SIM_DEVICE_*, the strings "cpu" / "gpu" */
};

/* The file's unit of a K_NUM field (the struct holds SI base units). */
enum {
    U_ONE,   /* as is */
    U_NS,    /* nanoseconds */
    U_US,    /* microseconds */
    U_GBPS,  /* 10^9 bytes per second */
    U_GBIT,  /* 10^9 bits per second */
    U_TFLOPS,/* 10^12 flop per second */
    U_MIB    /* 2^20 bytes */
};

/* What values a K_NUM field takes. */
enum {
    R_POS,   /* a rate or a per-item cost: finite and > 0 */
    R_NONNEG /* a latency, a fixed overhead, or netem (0 = off): finite and >= 0 */
};

/* One field of the file. */
typedef struct pfield {
    const char *section; /* "cpu", ...; NULL at the top level */
    const char *name;    /* name in the file's unit */
    const char *si;      /* the same value in SI units (K_NUM only; NULL for U_ONE) */
    int kind;            /* K_* */
    int unit;            /* U_* (K_NUM) */
    int rule;            /* R_* (K_NUM) */
    int need;            /* N_* */
    size_t off;          /* offset in halo_sim_profile */
    const char *doc;     /* one line for the written file and the messages */
} pfield;

/* When a field must be given. */
enum {
    N_ALWAYS, /* required */
    N_GPU,    /* required when device.kind is "gpu"; else optional, 0 = not used */
    N_NEVER   /* optional, 0 when absent */
};

#define OFF(f) offsetof(halo_sim_profile, f)

static const pfield fields[] = {
    {NULL, "machines", NULL, K_INT, U_ONE, R_POS, N_ALWAYS, OFF(machines), "machines"},
    {NULL, "trainers", NULL, K_INT, U_ONE, R_POS, N_ALWAYS, OFF(trainers),
     "trainers (ranks; GPUs when device is gpu) per machine"},
    {NULL, "cores", NULL, K_INT, U_ONE, R_POS, N_ALWAYS, OFF(cores),
     "CPU cores per machine, shared by its trainers' threads"},
    {"cpu", "sample_edge_ns", "sample_edge_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(sample_edge_s),
     "per sampled edge (draw + write), one core"},
    {"cpu", "sample_node_ns", "sample_node_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(sample_node_s),
     "per frontier node sampled (row lookup, offsets), one core"},
    {"cpu", "sample_copy_ns", "sample_copy_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(sample_copy_s),
     "per edge of a list taken whole (in-degree <= fanout; 0: sample_edge_ns), one core"},
    {"cpu", "sample_long_ns", "sample_long_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(sample_long_s),
     "per edge drawn from a long list (in-degree > 64; 0: sample_edge_ns), one core"},
    {"cpu", "block_node_ns", "block_node_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(block_node_s),
     "per source node when building a block (dedup hash), one core"},
    {"cpu", "block_edge_ns", "block_edge_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(block_edge_s),
     "per hash operation of a block being built (a destination inserted, an edge looked up; 0: not measured), one core"},
    {"cpu", "gather_GBps", "gather_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(gather_bw),
     "gather of random feature rows (local copy), one core"},
    {"cpu", "gather_row_ns", "gather_row_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(gather_row_s),
     "per gathered feature row besides its bytes (0: bytes only), one core"},
    {"cpu", "memcpy_GBps", "memcpy_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(memcpy_bw),
     "sequential copy, one core"},
    {"cpu", "lookup_node_ns", "lookup_node_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(lookup_node_s),
     "per remote id looked up in the cache, one core"},
    {"cpu", "fetch_node_ns", "fetch_node_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(fetch_node_s),
     "per input node of a batch in the fetch besides its gathers (0: not measured), one core"},
    {"cpu", "fetch_GBps", "fetch_Bps", K_NUM, U_GBPS, R_NONNEG, N_NEVER, OFF(fetch_bw),
     "the fetch's rows, gathered, received or served (0: gather_GBps), one core"},
    {"cpu", "fetch_cold_MiB", "fetch_cold_bytes", K_NUM, U_MIB, R_NONNEG, N_NEVER,
     OFF(fetch_cold_bytes),
     "feature bytes per rank fetch_GBps was measured on, caches emptied before each batch (0: "
     "fetch_GBps at every table size)"},
    {"cpu", "fetch_warm_GBps", "fetch_warm_Bps", K_NUM, U_GBPS, R_NONNEG, N_NEVER,
     OFF(fetch_warm_bw),
     "the fetch's rows from a table that stays in the caches (0: fetch_GBps at every table "
     "size), one core"},
    {"cpu", "fetch_warm_MiB", "fetch_warm_bytes", K_NUM, U_MIB, R_NONNEG, N_NEVER,
     OFF(fetch_warm_bytes), "feature bytes per rank fetch_warm_GBps was measured on"},
    {"cpu", "fetch_kept_GBps", "fetch_kept_Bps", K_NUM, U_GBPS, R_NONNEG, N_NEVER,
     OFF(fetch_kept_bw),
     "the fetch's rows from a table of fetch_cold_MiB fetched batch after batch, nothing "
     "between them (0: not measured), one core"},
    {"cpu", "hook_us", "hook_s", K_NUM, U_US, R_NONNEG, N_ALWAYS, OFF(hook_s),
     "per policy hook call (cache_batch), fixed part"},
    {"cpu", "hook_unit_ns", "hook_unit_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(hook_unit_s),
     "per unit of work a policy hook's budget is charged (a Lua instruction; 0: not measured)"},
    {"cpu", "oversub_penalty", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(oversub_penalty),
     "slow-down per trainer process beyond the cores, relative to the cores, of gathers "
     "(fetch, aggregation, element passes; 0 = none)"},
    {"cpu", "oversub_warm", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(oversub_warm),
     "oversub_penalty of gathers from a table of fetch_warm_MiB, the fetch's between the two "
     "sizes interpolated (with fetch_warm_GBps only)"},
    {"cpu", "oversub_gemm", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(oversub_gemm),
     "the same for the compute's GEMMs (0 = none)"},
    {"cpu", "oversub_sample", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(oversub_sample),
     "the same for the sampling stage (0 = none)"},
    {"cpu", "crowd_sample", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(crowd_sample),
     "slow-down per trainer process beyond the cores of the sampling stage, measured on "
     "training (used instead of oversub_* when crowd_ranks > 0)"},
    {"cpu", "crowd_fetch", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(crowd_fetch),
     "the same for the fetch"},
    {"cpu", "crowd_compute", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(crowd_compute),
     "the same for the compute"},
    {"cpu", "crowd_ranks", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(crowd_ranks),
     "trainer processes the crowding probe ran (0: not measured, oversub_* apply)"},
    {"cpu", "wake_sample_250us", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_sample[0]),
     "slow-down of a sampling step whose thread was off the CPU 250 us since its last one "
     "(its caches emptied; 0 = none)"},
    {"cpu", "wake_sample_1ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_sample[1]),
     "slow-down of a sampling step whose thread was off the CPU 1 ms since its last one "
     "(its caches emptied; 0 = none)"},
    {"cpu", "wake_sample_4ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_sample[2]),
     "slow-down of a sampling step whose thread was off the CPU 4 ms since its last one "
     "(its caches emptied; 0 = none)"},
    {"cpu", "wake_sample_16ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_sample[3]),
     "slow-down of a sampling step whose thread was off the CPU 16 ms since its last one "
     "(its caches emptied; 0 = none)"},
    {"cpu", "wake_compute_250us", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_compute[0]),
     "the same for a compute or Adam step of wake_step_us, off the CPU 250 us since its last"},
    {"cpu", "wake_compute_1ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_compute[1]),
     "the same for a compute or Adam step of wake_step_us, off the CPU 1 ms since its last"},
    {"cpu", "wake_compute_4ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_compute[2]),
     "the same for a compute or Adam step of wake_step_us, off the CPU 4 ms since its last"},
    {"cpu", "wake_compute_16ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_compute[3]),
     "the same for a compute or Adam step of wake_step_us, off the CPU 16 ms since its last"},
    {"cpu", "wake_step_us", "wake_step_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(wake_step_s),
     "us: the wake probe's large training step (0: wake_compute_* at every size)"},
    {"cpu", "wake_small_250us", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_small[0]),
     "the same for a step of wake_small_us (between the two sizes: in log seconds)"},
    {"cpu", "wake_small_1ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_small[1]),
     "the same for a step of wake_small_us (between the two sizes: in log seconds)"},
    {"cpu", "wake_small_4ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_small[2]),
     "the same for a step of wake_small_us (between the two sizes: in log seconds)"},
    {"cpu", "wake_small_16ms", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(wake_small[3]),
     "the same for a step of wake_small_us (between the two sizes: in log seconds)"},
    {"cpu", "wake_small_us", "wake_small_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(wake_small_s),
     "us: the wake probe's small training step (0: none measured)"},
    {"cpu", "corun_sample", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(corun_sample),
     "slow-down of the sampling stage while every core is busy, against alone (0 = none)"},
    {"cpu", "slice_us", "slice_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(slice_s),
     "time slice of a busy core: a task that ran this long while others wait gives it up (0: "
     "a task keeps its core to its end)"},
    {"cpu", "poll_frac", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(poll_frac),
     "with more busy threads than cores, the share of a core a thread waiting in an exchange "
     "takes by polling (0 = none)"},
    {"cpu", "share_eff", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(share_eff),
     "with more busy threads than cores, the share of a fair split they get (0: not measured)"},
    {"cpu", "share_threads", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(share_threads),
     "threads share_eff was measured with (0: not measured)"},
    {"cpu", "jitter", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(jitter),
     "sigma of a CPU step's log time between runs of it (its mean kept): ranks that meet in an "
     "exchange wait for the slowest (0 = none)"},
    {"network", "shm_lat_us", "shm_lat_s", K_NUM, U_US, R_NONNEG, N_ALWAYS, OFF(shm_lat_s),
     "latency of a message between ranks of one machine"},
    {"network", "oversub_lat_us", "oversub_lat_s", K_NUM, U_US, R_NONNEG, N_NEVER,
     OFF(oversub_lat_s),
     "the same when the machine's ranks outnumber its cores (0 or absent: shm_lat_us)"},
    {"network", "shm_GBps", "shm_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(shm_bw),
     "bandwidth between ranks of one machine, per flow"},
    {"network", "net_lat_us", "net_lat_s", K_NUM, U_US, R_NONNEG, N_ALWAYS, OFF(net_lat_s),
     "latency of a message between machines"},
    {"network", "nics", NULL, K_INT, U_ONE, R_POS, N_ALWAYS, OFF(nics),
     "NICs per machine (its trainers share them evenly)"},
    {"network", "nic_GBps", "nic_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(nic_bw),
     "bandwidth of one NIC, each direction"},
    {"network", "msg_overhead_us", "msg_overhead_s", K_NUM, U_US, R_NONNEG, N_ALWAYS,
     OFF(msg_overhead_s), "CPU time per message sent or received"},
    {"network", "allreduce_lat_us", "allreduce_lat_s", K_NUM, U_US, R_NONNEG, N_ALWAYS,
     OFF(allreduce_lat_s), "per ring step of an allreduce, added to the link latency"},
    {"network", "allreduce_GBps", "allreduce_Bps", K_NUM, U_GBPS, R_NONNEG, N_NEVER,
     OFF(allreduce_bw),
     "the runtime's allreduce between 2 ranks of one machine: bytes of the buffer per second "
     "beyond its latency; T ranks take ceil(log2 T) times as long (0: a ring at shm_GBps)"},
    {"netem", "lat_us", "lat_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(netem_lat_s),
     "emulated latency per exchange (halo train --netem lat=), 0 = off"},
    {"netem", "Gbit", "Bps", K_NUM, U_GBIT, R_NONNEG, N_NEVER, OFF(netem_bw),
     "emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite"},
    {"netem", "over_us", "over_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(netem_over_s),
     "how late the sleep of an emulated delay wakes up on this machine, added to each delay"},
    {"netem", "sleep_cpu_us", "sleep_cpu_s", K_NUM, U_US, R_NONNEG, N_NEVER,
     OFF(netem_sleep_cpu_s),
     "CPU time of the sleeping thread per emulated delay it sleeps (timer, wake-up), on its stage"},
    {"pcie", "pinned_GBps", "pinned_Bps", K_NUM, U_GBPS, R_POS, N_GPU, OFF(pcie_bw_pinned),
     "host-to-device copies from pinned memory"},
    {"pcie", "pageable_GBps", "pageable_Bps", K_NUM, U_GBPS, R_POS, N_GPU, OFF(pcie_bw_pageable),
     "host-to-device copies from pageable memory"},
    {"pcie", "lat_us", "lat_s", K_NUM, U_US, R_NONNEG, N_GPU, OFF(pcie_lat_s),
     "latency per host-to-device copy"},
    {"pcie", "pinned", NULL, K_BOOL, U_ONE, R_POS, N_GPU, OFF(pinned),
     "the data path stages rows in pinned memory"},
    {"device", "kind", NULL, K_KIND, U_ONE, R_POS, N_ALWAYS, OFF(device),
     "where a trainer computes: \"cpu\" or \"gpu\""},
    {"device", "gemm_TFLOPs", "gemm_flops", K_NUM, U_TFLOPS, R_POS, N_ALWAYS, OFF(gemm_flops),
     "GEMM rate of one trainer (gpu: one GPU; cpu: one core)"},
    {"device", "agg_GBps", "agg_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(agg_bw),
     "sparse aggregation (mean of neighbour rows), bytes of rows read"},
    {"device", "agg_edge_ns", "agg_edge_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(agg_edge_s),
     "per aggregated edge besides its row's bytes (0: bytes only)"},
    {"device", "elem_ns", "elem_s", K_NUM, U_NS, R_NONNEG, N_NEVER, OFF(elem_s),
     "per element of a layer's elementwise passes (bias, ReLU, dropout, copies; 0: none)"},
    {"device", "step_overhead_us", "step_overhead_s", K_NUM, U_US, R_NONNEG, N_ALWAYS,
     OFF(step_overhead_s), "fixed time per training step (launches, loss, optimiser)"},
    {"device", "adam_GBps", "adam_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(adam_bw),
     "the optimiser's pass over the parameters, bytes of parameters"},
    {"fit", "sample", NULL, K_NUM, U_ONE, R_POS, N_NEVER, OFF(fit_sample),
     "scale of the sampling stage's CPU time (halo calibrate --from-metrics; 1 = not fitted)"},
    {"fit", "fetch", NULL, K_NUM, U_ONE, R_POS, N_NEVER, OFF(fit_fetch),
     "scale of the fetch stage's CPU time (1 = not fitted)"},
    {"fit", "compute", NULL, K_NUM, U_ONE, R_POS, N_NEVER, OFF(fit_compute),
     "scale of the compute stage's time (1 = not fitted)"},
    {"fit", "allreduce", NULL, K_NUM, U_ONE, R_POS, N_NEVER, OFF(fit_allreduce),
     "scale of the allreduce's latency per ring step (1 = not fitted)"},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL},
};

/* The sections in file order. */
static const char *const sections[] = {"cpu", "network", "netem", "pcie", "device", "fit", NULL};

/* Fields that are not in the table above: a string at the top, the GEMM table in device. */
#define F_GRAPH "graph"
#define F_GEMM "gemm_table"

/* ---- units ---- */

/* x * 10^k computed in decimal: the shortest digits that read back to x, with the exponent
 * moved by k, read by strtod. So 18.88 (ns) is the double nearest to 1.888e-8 (s), and a value
 * with at most 15 significant digits converts back and forth exactly. */
static double dec_scale(double x, int k)
{
    if (!isfinite(x) || x == 0) {
        return x * pow(10, k);
    }
    char buf[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x) {
            break;
        }
    }
    char *e = strchr(buf, 'e');
    int ex = atoi(e + 1);
    snprintf(e, sizeof buf - (size_t)(e - buf), "e%d", ex + k);
    return strtod(buf, NULL);
}

/* File value -> SI. */
static double from_unit(int unit, double x)
{
    switch (unit) {
    case U_NS: return dec_scale(x, -9);
    case U_US: return dec_scale(x, -6);
    case U_GBPS: return dec_scale(x, 9);
    case U_GBIT: return dec_scale(x, 9) / 8; /* bits; dividing by 8 is exact */
    case U_TFLOPS: return dec_scale(x, 12);
    case U_MIB: return x * 1048576.0; /* a power of two: exact */
    default: return x;
    }
}

/* SI -> file value (for messages and the writer, which checks that it reads back). */
static double to_unit(int unit, double s)
{
    switch (unit) {
    case U_NS: return dec_scale(s, 9);
    case U_US: return dec_scale(s, 6);
    case U_GBPS: return dec_scale(s, -9);
    case U_GBIT: return dec_scale(s * 8, -9);
    case U_TFLOPS: return dec_scale(s, -12);
    case U_MIB: return s / 1048576.0;
    default: return s;
    }
}

static const char *unit_name(int unit)
{
    static const char *const n[] = {"", "ns", "us", "GB/s", "Gbit/s", "TFLOP/s", "MiB"};
    return n[unit];
}

/* The SI unit of a field's SI name. */
static const char *si_unit(int unit)
{
    static const char *const n[] = {"", "s", "s", "B/s", "B/s", "flop/s", "B"};
    return n[unit];
}

/* "cpu.sample_edge_ns" into buf. */
static const char *full_name(const pfield *f, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", f->section ? f->section : "", f->section ? "." : "", f->name);
    return buf;
}

/* ---- the GEMM rate table ---- */

static const char *json_type(const halo_json *v);

/* Index of x on an increasing axis of *n points, inserting it in order; -1 when the axis is
 * full. */
static int axis_add(double *ax, int *n, double x)
{
    int i = 0;
    while (i < *n && ax[i] < x) {
        i++;
    }
    if (i < *n && ax[i] == x) {
        return i;
    }
    if (*n == HALO_SIM_GEMM_AXIS) {
        return -1;
    }
    memmove(ax + i + 1, ax + i, (size_t)(*n - i) * sizeof *ax);
    ax[i] = x;
    (*n)++;
    return i;
}

/* Index of x on an axis (it is there). */
static int axis_find(const double *ax, int n, double x)
{
    for (int i = 0; i < n; i++) {
        if (ax[i] == x) {
            return i;
        }
    }
    return -1;
}

/* Checks one point {rows, in, out, GFLOPs} of the table; v[] gets its numbers. */
static int gemm_point(const halo_json *it, size_t k, const char *path, double *v)
{
    if (it->type != HALO_JSON_ARRAY || it->len != 4) {
        return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table[%zu]: %s, expected "
                           "{rows, in, out, GFLOPs}", path, k + 1, json_type(it));
    }
    for (int j = 0; j < 4; j++) {
        const halo_json *x = it->items[j];
        if (x->type != HALO_JSON_NUMBER || !isfinite(x->number) || !(x->number > 0) ||
            (j < 3 && (x->number != floor(x->number) || x->number > 1e9))) {
            return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table[%zu]: entry %d is not %s",
                               path, k + 1, j + 1,
                               j < 3 ? "a whole number >= 1" : "a rate > 0 in GFLOP/s");
        }
        v[j] = x->number;
    }
    return 0;
}

/* Reads device.gemm_table (absent: no table): a full grid of {rows, in, out, GFLOPs} points,
 * at most HALO_SIM_GEMM_AXIS values on each axis. */
static int gemm_table_read(const halo_json *dev, const char *path, halo_sim_profile *p)
{
    const halo_json *t = dev != NULL && dev->type == HALO_JSON_OBJECT ? halo_json_get(dev, F_GEMM)
                                                                      : NULL;
    if (t == NULL) {
        return 0;
    }
    if (t->type != HALO_JSON_ARRAY || t->len == 0) {
        return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table: %s, expected a list of "
                           "{rows, in, out, GFLOPs}", path, json_type(t));
    }
    double v[4];
    for (size_t k = 0; k < t->len; k++) {
        HALO_CHECK(gemm_point(t->items[k], k, path, v));
        if (axis_add(p->gemm_rows, &p->gemm_nr, v[0]) < 0 ||
            axis_add(p->gemm_in, &p->gemm_ni, v[1]) < 0 ||
            axis_add(p->gemm_out, &p->gemm_no, v[2]) < 0) {
            return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table: more than %d values on "
                               "an axis", path, HALO_SIM_GEMM_AXIS);
        }
    }
    for (size_t k = 0; k < t->len; k++) {
        gemm_point(t->items[k], k, path, v);
        int a = axis_find(p->gemm_rows, p->gemm_nr, v[0]);
        int b = axis_find(p->gemm_in, p->gemm_ni, v[1]);
        int c = axis_find(p->gemm_out, p->gemm_no, v[2]);
        if (p->gemm_rate[a][b][c] > 0) {
            return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table: the point {%g, %g, %g} "
                               "is given twice", path, v[0], v[1], v[2]);
        }
        p->gemm_rate[a][b][c] = from_unit(U_GBPS, v[3]); /* 10^9, as GB/s */
    }
    if ((size_t)p->gemm_nr * p->gemm_ni * p->gemm_no != t->len) {
        return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table: %zu points, not the full "
                           "grid of %d rows x %d in x %d out values (regenerate it with halo "
                           "calibrate)", path, t->len, p->gemm_nr, p->gemm_ni, p->gemm_no);
    }
    return 0;
}

/* Position of x on an axis of n increasing points, in log space: the point i at or below it
 * and the weight f of point i + 1 (0 outside the axis: clamped to its ends). */
static void axis_pos(const double *ax, int n, double x, int *i, double *f)
{
    *i = 0;
    *f = 0;
    if (n < 2 || !(x > ax[0])) {
        return;
    }
    if (x >= ax[n - 1]) {
        *i = n - 1;
        return;
    }
    while (*i + 1 < n - 1 && ax[*i + 1] <= x) {
        (*i)++;
    }
    *f = (log(x) - log(ax[*i])) / (log(ax[*i + 1]) - log(ax[*i]));
}

double halo_sim_profile_gemm_rate(const halo_sim_profile *p, double rows, double in, double out)
{
    if (p->gemm_nr < 1 || p->gemm_ni < 1 || p->gemm_no < 1) {
        return p->gemm_flops;
    }
    int i[3];
    double f[3];
    axis_pos(p->gemm_rows, p->gemm_nr, rows, &i[0], &f[0]);
    axis_pos(p->gemm_in, p->gemm_ni, in, &i[1], &f[1]);
    axis_pos(p->gemm_out, p->gemm_no, out, &i[2], &f[2]);
    int n[3] = {p->gemm_nr, p->gemm_ni, p->gemm_no};
    double spf = 0; /* seconds per flop, interpolated */
    for (int corner = 0; corner < 8; corner++) {
        double w = 1;
        int k[3];
        for (int d = 0; d < 3; d++) {
            int up = (corner >> d) & 1;
            w *= up ? f[d] : 1 - f[d];
            k[d] = i[d] + up < n[d] ? i[d] + up : n[d] - 1;
        }
        if (w > 0) {
            spf += w / p->gemm_rate[k[0]][k[1]][k[2]];
        }
    }
    return 1.0 / spf;
}

void halo_sim_profile_median(const halo_sim_profile *ps, int n, halo_sim_profile *out)
{
    halo_sim_profile m = ps[0];
    double v[16];
    n = n < 16 ? n : 16;
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (fields[f].kind != K_NUM) {
            continue;
        }
        for (int i = 0; i < n; i++) {
            v[i] = *(const double *)((const char *)&ps[i] + fields[f].off);
        }
        *(double *)((char *)&m + fields[f].off) = halo_median_f64(v, n);
    }
    for (int r = 0; r < m.gemm_nr; r++) {
        for (int a = 0; a < m.gemm_ni; a++) {
            for (int o = 0; o < m.gemm_no; o++) {
                for (int i = 0; i < n; i++) {
                    v[i] = ps[i].gemm_rate[r][a][o];
                }
                m.gemm_rate[r][a][o] = halo_median_f64(v, n);
            }
        }
    }
    *out = m;
}

void halo_sim_profile_defaults(halo_sim_profile *p)
{
    p->fit_sample = p->fit_fetch = p->fit_compute = p->fit_allreduce = 1;
}

/* Whether two paths name the same directory (their real paths, else their text). */
static bool same_dir(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (realpath(a, ra) != NULL && realpath(b, rb) != NULL) {
        return strcmp(ra, rb) == 0;
    }
    return strcmp(a, b) == 0;
}

void halo_sim_profile_graph_notice(const halo_sim_profile *p, const char *pdir)
{
    if (p->graph[0] == '\0') {
        halo_notice("sim: profile %s: sampling and gather constants are generic, not measured on "
                    "this graph (halo calibrate --graph %s measures them)", p->name,
                    pdir != NULL ? pdir : "PDIR");
    } else if (pdir != NULL && !same_dir(p->graph, pdir)) {
        halo_notice("sim: profile %s: sampling and gather constants were measured on %s, not on "
                    "%s", p->name, p->graph, pdir);
    }
}

/* ---- load ---- */

/* Whether v may hold fields: an object, or an empty table (which the loader makes a list). */
static bool is_fields(const halo_json *v)
{
    return v->type == HALO_JSON_OBJECT || (v->type == HALO_JSON_ARRAY && v->len == 0);
}

static const char *json_type(const halo_json *v)
{
    switch (v->type) {
    case HALO_JSON_BOOL: return "a boolean";
    case HALO_JSON_NUMBER: return "a number";
    case HALO_JSON_STRING: return "a string";
    case HALO_JSON_ARRAY: return "a list";
    case HALO_JSON_OBJECT: return "a table of fields";
    default: return "null";
    }
}

/* Fails on a key of obj (section sec, NULL = top) that no field, section or `name` takes. */
static int unknown_keys(const halo_json *obj, const char *sec, const char *path)
{
    for (size_t i = 0; obj->type == HALO_JSON_OBJECT && i < obj->len; i++) {
        const char *k = obj->keys[i];
        /* validation: the entry of `halo sim validate --record` (sim/validate.h) */
        bool known = sec == NULL && (strcmp(k, "name") == 0 || strcmp(k, "validation") == 0 ||
                                     strcmp(k, F_GRAPH) == 0);
        known = known || (sec != NULL && strcmp(sec, "device") == 0 && strcmp(k, F_GEMM) == 0);
        for (int s = 0; sec == NULL && sections[s] != NULL && !known; s++) {
            known = strcmp(k, sections[s]) == 0;
        }
        for (const pfield *f = fields; f->name != NULL && !known; f++) {
            bool here = sec == NULL ? f->section == NULL
                                    : f->section != NULL && strcmp(f->section, sec) == 0;
            known = here && (strcmp(k, f->name) == 0 || (f->si && strcmp(k, f->si) == 0));
        }
        if (!known) {
            char list[600];
            size_t n = 0;
            list[0] = '\0';
            if (sec == NULL) {
                n += (size_t)snprintf(list, sizeof list, "name");
                for (int s = 0; sections[s] != NULL; s++) {
                    n += (size_t)snprintf(list + n, sizeof list - n, ", %s", sections[s]);
                }
            }
            for (const pfield *f = fields; f->name != NULL && n < sizeof list; f++) {
                bool here = sec == NULL ? f->section == NULL
                                        : f->section != NULL && strcmp(f->section, sec) == 0;
                if (here) {
                    n +=
                        (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", f->name);
                }
            }
            return halo_errorf(HALO_EINPUT, "%s: field %s%s%s: unknown field (%s takes: %s)", path,
                               sec ? sec : "", sec ? "." : "", k, sec ? sec : "the file", list);
        }
    }
    return 0;
}

/* Reads field f from its section object sec (NULL when the section is absent) into p. */
static int read_field(const pfield *f, const halo_json *sec, bool gpu, const char *path,
                      halo_sim_profile *p)
{
    char fn[96];
    full_name(f, fn, sizeof fn);
    const halo_json *v = sec ? halo_json_get(sec, f->name) : NULL;
    const halo_json *vs = sec && f->si ? halo_json_get(sec, f->si) : NULL;
    bool si = false;
    if (v != NULL && vs != NULL) {
        return halo_errorf(HALO_EINPUT, "%s: field %s: given twice (also as %s)", path, fn, f->si);
    }
    if (v == NULL && vs != NULL) {
        v = vs;
        si = true;
    }
    char *base = (char *)p;
    if (v == NULL) {
        if (f->need == N_ALWAYS || (f->need == N_GPU && gpu)) {
            return halo_errorf(HALO_EINPUT, "%s: field %s: missing (%s%s%s%s)", path, fn, f->doc,
                               f->kind == K_NUM ? ", in " : "",
                               f->kind == K_NUM ? unit_name(f->unit) : "",
                               f->need == N_GPU ? "; required when device.kind is \"gpu\"" : "");
        }
        return 0; /* zeroed */
    }
    const char *want = f->kind == K_BOOL   ? "a boolean (true or false)"
                       : f->kind == K_KIND ? "a string, \"cpu\" or \"gpu\""
                       : f->kind == K_INT  ? "a whole number"
                                           : "a number";
    int type = f->kind == K_BOOL   ? HALO_JSON_BOOL
               : f->kind == K_KIND ? HALO_JSON_STRING
                                   : HALO_JSON_NUMBER;
    if (v->type != type) {
        return halo_errorf(HALO_EINPUT, "%s: field %s: %s, expected %s%s%s", path, fn, json_type(v),
                           want, f->kind == K_NUM ? " in " : "",
                           f->kind == K_NUM ? (si ? "SI units" : unit_name(f->unit)) : "");
    }
    switch (f->kind) {
    case K_INT:
        if (v->number != floor(v->number) || v->number < 1 || v->number > INT_MAX) {
            return halo_errorf(HALO_EINPUT, "%s: field %s: %g, expected a whole number >= 1", path,
                               fn, v->number);
        }
        *(int *)(base + f->off) = (int)v->number;
        break;
    case K_NUM: *(double *)(base + f->off) = si ? v->number : from_unit(f->unit, v->number); break;
    case K_BOOL: *(bool *)(base + f->off) = v->boolean; break;
    default:
        if (strcmp(v->string, "cpu") != 0 && strcmp(v->string, "gpu") != 0) {
            return halo_errorf(HALO_EINPUT, "%s: field %s: \"%s\", expected \"cpu\" or \"gpu\"",
                               path, fn, v->string);
        }
        *(int *)(base + f->off) = v->string[0] == 'g' ? HALO_SIM_DEVICE_GPU : HALO_SIM_DEVICE_CPU;
        break;
    }
    return 0;
}

/* Fills p from the file's tree (structure and types; the values are checked afterwards). */
static int from_tree(const halo_json *top, const char *path, halo_sim_profile *p)
{
    if (!is_fields(top)) {
        return halo_errorf(HALO_EINPUT, "%s: the file returns %s, expected a table of fields", path,
                           json_type(top));
    }
    for (int s = 0; sections[s] != NULL; s++) {
        const halo_json *sec = halo_json_get(top, sections[s]);
        if (sec != NULL && !is_fields(sec)) {
            return halo_errorf(HALO_EINPUT, "%s: field %s: %s, expected a table of fields", path,
                               sections[s], json_type(sec));
        }
    }
    HALO_CHECK(unknown_keys(top, NULL, path));
    for (int s = 0; sections[s] != NULL; s++) {
        const halo_json *sec = halo_json_get(top, sections[s]);
        if (sec != NULL) {
            HALO_CHECK(unknown_keys(sec, sections[s], path));
        }
    }
    /* device.kind first: it decides which pcie fields are required */
    const halo_json *dev = halo_json_get(top, "device");
    const halo_json *kind = dev ? halo_json_get(dev, "kind") : NULL;
    bool gpu = kind != NULL && kind->type == HALO_JSON_STRING && strcmp(kind->string, "gpu") == 0;
    for (const pfield *f = fields; f->name != NULL; f++) {
        const halo_json *sec = f->section ? halo_json_get(top, f->section) : top;
        HALO_CHECK(read_field(f, sec, gpu, path, p));
    }
    HALO_CHECK(gemm_table_read(dev, path, p));
    const halo_json *graph = halo_json_get(top, F_GRAPH);
    if (graph != NULL) {
        if (graph->type != HALO_JSON_STRING || strlen(graph->string) >= sizeof p->graph) {
            return halo_errorf(HALO_EINPUT, "%s: field graph: %s, expected the partition's "
                               "directory (a string under 256 bytes)", path, json_type(graph));
        }
        snprintf(p->graph, sizeof p->graph, "%s", graph->string);
    }
    const halo_json *name = halo_json_get(top, "name");
    if (name != NULL) {
        if (name->type != HALO_JSON_STRING) {
            return halo_errorf(HALO_EINPUT, "%s: field name: %s, expected a string", path,
                               json_type(name));
        }
        if (strlen(name->string) >= sizeof p->name || name->string[0] == '\0') {
            return halo_errorf(HALO_EINPUT, "%s: field name: \"%.80s\" is %s", path, name->string,
                               name->string[0] ? "longer than 63 bytes" : "empty");
        }
        snprintf(p->name, sizeof p->name, "%s", name->string);
    } else {
        const char *slash = strrchr(path, '/');
        const char *b = slash ? slash + 1 : path;
        size_t bl = strlen(b);
        bl = bl > 4 && strcmp(b + bl - 4, ".lua") == 0 ? bl - 4 : bl;
        bl = bl < sizeof p->name ? bl : sizeof p->name - 1;
        snprintf(p->name, sizeof p->name, "%.*s", (int)bl, b);
    }
    snprintf(p->source, sizeof p->source, "%s", path);
    return 0;
}

int halo_sim_profile_load(const char *path, halo_sim_profile *out)
{
    halo_json *top = NULL;
    int rc = halo_policy_load_data(path, &top);
    if (rc < 0) {
        if (rc == HALO_ELUA) {
            /* a profile that does not run is bad input like any other */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", halo_errmsg());
            rc = halo_errorf(HALO_EINPUT, "%s", msg);
        }
        return rc;
    }
    halo_sim_profile *p = HALO_NEW(halo_sim_profile, 1);
    halo_sim_profile_defaults(p);
    rc = from_tree(top, path, p);
    halo_json_free(top);
    if (rc == 0) {
        rc = halo_sim_profile_check(p, path);
    }
    if (rc == 0) {
        *out = *p;
    }
    halo_free(p);
    return rc;
}

/* ---- check ---- */

/* The checks of the per-stage model's fields beyond each field's own: share_eff in 0..1 and a
 * whole share_threads, the fit factors in their bounds, every GEMM table rate > 0. */
static int check_model_fields(const halo_sim_profile *p, const char *w)
{
    if (p->share_eff > 1 || p->share_threads != floor(p->share_threads)) {
        return halo_errorf(HALO_EINPUT, "%s: field cpu.share_%s: %g, expected %s", w,
                           p->share_eff > 1 ? "eff" : "threads",
                           p->share_eff > 1 ? p->share_eff : p->share_threads,
                           p->share_eff > 1 ? "0..1" : "a whole number");
    }
    const double fit[] = {p->fit_sample, p->fit_fetch, p->fit_compute, p->fit_allreduce};
    for (int i = 0; i < 4; i++) {
        if (!(fit[i] >= 0.5 && fit[i] <= 2)) {
            return halo_errorf(HALO_EINPUT, "%s: field fit.%s: %g, expected 0.5..2 (a bounded "
                               "scale of halo calibrate --from-metrics; 1 = not fitted)", w,
                               (const char *const[]){"sample", "fetch", "compute", "allreduce"}[i],
                               fit[i]);
        }
    }
    for (int a = 0; a < p->gemm_nr; a++) {
        for (int b = 0; b < p->gemm_ni; b++) {
            for (int c = 0; c < p->gemm_no; c++) {
                if (!(p->gemm_rate[a][b][c] > 0) || !isfinite(p->gemm_rate[a][b][c])) {
                    return halo_errorf(HALO_EINPUT, "%s: field device.gemm_table: the rate at "
                                       "{%g, %g, %g} is not > 0", w, p->gemm_rows[a],
                                       p->gemm_in[b], p->gemm_out[c]);
                }
            }
        }
    }
    return 0;
}

int halo_sim_profile_check(const halo_sim_profile *p, const char *where)
{
    const char *w = where != NULL && where[0] ? where : "profile";
    if (p->name[0] == '\0' || memchr(p->name, '\0', sizeof p->name) == NULL) {
        return halo_errorf(HALO_EINPUT, "%s: field name: empty or not terminated", w);
    }
    if (p->device != HALO_SIM_DEVICE_CPU && p->device != HALO_SIM_DEVICE_GPU) {
        return halo_errorf(HALO_EINPUT, "%s: field device.kind: %d is not cpu (0) or gpu (1)", w,
                           p->device);
    }
    bool gpu = p->device == HALO_SIM_DEVICE_GPU;
    const char *base = (const char *)p;
    char fn[96];
    for (const pfield *f = fields; f->name != NULL; f++) {
        full_name(f, fn, sizeof fn);
        if (f->kind == K_INT) {
            int v = *(const int *)(base + f->off);
            if (v < 1) {
                return halo_errorf(HALO_EINPUT, "%s: field %s: %d, expected a whole number >= 1", w,
                                   fn, v);
            }
        } else if (f->kind == K_NUM) {
            double s = *(const double *)(base + f->off);
            double x = to_unit(f->unit, s);
            const char *u = unit_name(f->unit);
            if (!isfinite(s)) {
                return halo_errorf(HALO_EINPUT, "%s: field %s: %g, expected a finite number", w, fn,
                                   x);
            }
            bool optional0 = f->need == N_GPU && !gpu;
            if (f->rule == R_POS && !optional0 && !(s > 0)) {
                return halo_errorf(HALO_EINPUT, "%s: field %s: %g%s%s, expected a rate > 0 (%s)", w,
                                   fn, x, u[0] ? " " : "", u, f->doc);
            }
            if (s < 0) {
                return halo_errorf(HALO_EINPUT, "%s: field %s: %g%s%s, expected >= 0 (%s)", w, fn,
                                   x, u[0] ? " " : "", u, f->doc);
            }
        }
    }
    HALO_CHECK(check_model_fields(p, w));
    if ((int64_t)p->machines * p->trainers > INT_MAX) {
        return halo_errorf(HALO_EINPUT,
                           "%s: field trainers: machines x trainers = %lld ranks, more than %d", w,
                           (long long)p->machines * p->trainers, INT_MAX);
    }
    return 0;
}

/* ---- write ---- */

/* Whether the number text s, read as Lua reads it (strtod; an integer literal <= 2^53 converts
 * exactly) and converted from the field's unit, gives back the SI value s_si. */
static bool reads_back(const char *s, int unit, double s_si)
{
    double x = strtod(s, NULL);
    return from_unit(unit, x) == s_si;
}

/* Formats x so Lua reads a float or an integer the data loader accepts (|n| <= 2^53). */
static void fmt_num(char *buf, size_t size, int prec, double x)
{
    snprintf(buf, size, "%.*g", prec, x);
    if (strspn(buf, "-0123456789") == strlen(buf) && fabs(x) > 9007199254740992.0) {
        size_t l = strlen(buf);
        if (l + 2 < size) {
            memcpy(buf + l, ".0", 3);
        }
    }
}

/* Writes "name = value," for a K_NUM field: the shortest decimal in the file's unit that reads
 * back to exactly s, else the SI name with 17 digits (always exact); true when it took the SI
 * name. */
static bool put_num(halo_sb *sb, const pfield *f, double s)
{
    char buf[64];
    double x0 = to_unit(f->unit, s);
    for (int prec = 1; prec <= 17; prec++) {
        fmt_num(buf, sizeof buf, prec, x0);
        if (reads_back(buf, f->unit, s)) {
            halo_sb_printf(sb, "%s = %s,", f->name, buf);
            return false;
        }
    }
    double up = x0, down = x0;
    for (int i = 0; i < 4; i++) {
        up = nextafter(up, INFINITY);
        down = nextafter(down, -INFINITY);
        double cand[2] = {up, down};
        for (int j = 0; j < 2; j++) {
            fmt_num(buf, sizeof buf, 17, cand[j]);
            if (reads_back(buf, f->unit, s)) {
                halo_sb_printf(sb, "%s = %s,", f->name, buf);
                return false;
            }
        }
    }
    fmt_num(buf, sizeof buf, 17, s);
    halo_sb_printf(sb, "%s = %s,", f->si, buf);
    return true;
}

/* A Lua string literal of s. */
static void put_str(halo_sb *sb, const char *s)
{
    halo_sb_putc(sb, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            halo_sb_putc(sb, '\\');
            halo_sb_putc(sb, (char)*c);
        } else if (*c < 0x20 || *c == 0x7f) {
            halo_sb_printf(sb, "\\%03u", (unsigned)*c);
        } else {
            halo_sb_putc(sb, (char)*c);
        }
    }
    halo_sb_putc(sb, '"');
}

/* One field line with its unit and meaning as a comment. */
static void put_field(halo_sb *sb, const pfield *f, const halo_sim_profile *p)
{
    const char *base = (const char *)p;
    bool si = false;
    halo_sb_puts(sb, f->section ? "        " : "    ");
    switch (f->kind) {
    case K_INT: halo_sb_printf(sb, "%s = %d,", f->name, *(const int *)(base + f->off)); break;
    case K_BOOL:
        halo_sb_printf(sb, "%s = %s,", f->name, *(const bool *)(base + f->off) ? "true" : "false");
        break;
    case K_KIND:
        halo_sb_printf(sb, "%s = \"%s\",", f->name,
                       *(const int *)(base + f->off) == HALO_SIM_DEVICE_GPU ? "gpu" : "cpu");
        break;
    default: si = put_num(sb, f, *(const double *)(base + f->off)); break;
    }
    const char *u = f->kind != K_NUM ? "" : si ? si_unit(f->unit) : unit_name(f->unit);
    halo_sb_printf(sb, " -- %s%s%s\n", u, u[0] ? ": " : "", f->doc);
}

/* The GEMM table, one {rows, in, out, GFLOPs} point a line (nothing without a table); each
 * rate as the shortest decimal that reads back to it. */
static void put_gemm_table(halo_sb *sb, const halo_sim_profile *p)
{
    if (p->gemm_nr == 0) {
        return;
    }
    halo_sb_puts(sb, "        gemm_table = { -- {rows, in, out, GFLOP/s of a layer's forward, dW "
                     "and dX GEMMs}, one core\n");
    for (int a = 0; a < p->gemm_nr; a++) {
        for (int b = 0; b < p->gemm_ni; b++) {
            for (int c = 0; c < p->gemm_no; c++) {
                char buf[64];
                double s = p->gemm_rate[a][b][c], x = to_unit(U_GBPS, s);
                for (int prec = 1; prec <= 17; prec++) {
                    fmt_num(buf, sizeof buf, prec, x);
                    if (reads_back(buf, U_GBPS, s)) {
                        break;
                    }
                }
                halo_sb_printf(sb, "            {%.0f, %.0f, %.0f, %s},\n", p->gemm_rows[a],
                               p->gemm_in[b], p->gemm_out[c], buf);
            }
        }
    }
    halo_sb_puts(sb, "        },\n");
}

int halo_sim_profile_write(const char *path, const halo_sim_profile *p, const char *comment)
{
    HALO_CHECK(halo_sim_profile_check(p, path));
    /* the directory must exist (a clear message instead of the temporary file's) */
    const char *slash = strrchr(path, '/');
    if (slash != NULL && slash != path) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (!halo_is_dir(dir)) {
            return halo_errorf(HALO_EIO, "%s: cannot write: no directory %s", path, dir);
        }
    }
    halo_sb sb;
    halo_sb_init(&sb);
    if (comment != NULL) {
        for (const char *s = comment; *s;) {
            const char *e = strchr(s, '\n');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            halo_sb_printf(&sb, "-- %.*s\n", (int)n, s);
            s = e ? e + 1 : s + n;
        }
    }
    halo_sb_puts(&sb, HALO_PROFILE_SIG "return {\n    name = ");
    put_str(&sb, p->name);
    halo_sb_puts(&sb, ",\n");
    if (p->graph[0] != '\0') {
        halo_sb_puts(&sb, "    graph = ");
        put_str(&sb, p->graph);
        halo_sb_puts(&sb, ", -- partition the sampling and gather constants were measured on\n");
    }
    for (const pfield *f = fields; f->name != NULL && f->section == NULL; f++) {
        put_field(&sb, f, p);
    }
    for (int s = 0; sections[s] != NULL; s++) {
        halo_sb_printf(&sb, "    %s = {\n", sections[s]);
        for (const pfield *f = fields; f->name != NULL; f++) {
            if (f->section != NULL && strcmp(f->section, sections[s]) == 0) {
                put_field(&sb, f, p);
            }
        }
        if (strcmp(sections[s], "device") == 0) {
            put_gemm_table(&sb, p);
        }
        halo_sb_puts(&sb, "    },\n");
    }
    halo_sb_puts(&sb, "}\n");
    int rc = halo_file_write_atomic(path, sb.buf, sb.len);
    halo_sb_free(&sb);
    return rc;
}
