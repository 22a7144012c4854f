/* Cluster profiles: reads a Lua profile through policy/'s data loader, checks it, writes it. */
#include "sim/profile.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
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
    U_TFLOPS /* 10^12 flop per second */
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
    {"cpu", "block_node_ns", "block_node_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(block_node_s),
     "per source node when building a block (dedup hash), one core"},
    {"cpu", "gather_GBps", "gather_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(gather_bw),
     "gather of random feature rows (local copy), one core"},
    {"cpu", "memcpy_GBps", "memcpy_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(memcpy_bw),
     "sequential copy, one core"},
    {"cpu", "lookup_node_ns", "lookup_node_s", K_NUM, U_NS, R_POS, N_ALWAYS, OFF(lookup_node_s),
     "per remote id looked up in the cache, one core"},
    {"cpu", "hook_us", "hook_s", K_NUM, U_US, R_NONNEG, N_ALWAYS, OFF(hook_s),
     "per policy hook call (cache_batch), fixed part"},
    {"cpu", "oversub_penalty", NULL, K_NUM, U_ONE, R_NONNEG, N_NEVER, OFF(oversub_penalty),
     "slow-down per trainer process beyond the cores, relative to the cores (0 = none)"},
    {"network", "shm_lat_us", "shm_lat_s", K_NUM, U_US, R_NONNEG, N_ALWAYS, OFF(shm_lat_s),
     "latency of a message between ranks of one machine"},
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
    {"netem", "lat_us", "lat_s", K_NUM, U_US, R_NONNEG, N_NEVER, OFF(netem_lat_s),
     "emulated latency per exchange (halo train --netem lat=), 0 = off"},
    {"netem", "Gbit", "Bps", K_NUM, U_GBIT, R_NONNEG, N_NEVER, OFF(netem_bw),
     "emulated bandwidth in Gbit/s (halo train --netem bw=), 0 = infinite"},
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
    {"device", "step_overhead_us", "step_overhead_s", K_NUM, U_US, R_NONNEG, N_ALWAYS,
     OFF(step_overhead_s), "fixed time per training step (launches, loss, optimiser)"},
    {"device", "adam_GBps", "adam_Bps", K_NUM, U_GBPS, R_POS, N_ALWAYS, OFF(adam_bw),
     "the optimiser's pass over the parameters, bytes of parameters"},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL},
};

/* The sections in file order. */
static const char *const sections[] = {"cpu", "network", "netem", "pcie", "device", NULL};

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
    default: return s;
    }
}

static const char *unit_name(int unit)
{
    static const char *const n[] = {"", "ns", "us", "GB/s", "Gbit/s", "TFLOP/s"};
    return n[unit];
}

/* The SI unit of a field's SI name. */
static const char *si_unit(int unit)
{
    static const char *const n[] = {"", "s", "s", "B/s", "B/s", "flop/s"};
    return n[unit];
}

/* "cpu.sample_edge_ns" into buf. */
static const char *full_name(const pfield *f, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", f->section ? f->section : "", f->section ? "." : "", f->name);
    return buf;
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
        bool known = sec == NULL && (strcmp(k, "name") == 0 || strcmp(k, "validation") == 0);
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
        halo_sb_puts(&sb, "    },\n");
    }
    halo_sb_puts(&sb, "}\n");
    int rc = halo_file_write_atomic(path, sb.buf, sb.len);
    halo_sb_free(&sb);
    return rc;
}
