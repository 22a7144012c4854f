/* Measures of a finished point: from the metrics file of halo train / halo sim, from the
 * partition's partition.json, and from the table halo trace replay prints. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M_SIM HALO_SWEEP_M(HALO_SWEEP_SIM)
#define M_RUN HALO_SWEEP_M(HALO_SWEEP_RUN)
#define M_TRACE HALO_SWEEP_M(HALO_SWEEP_TRACE)
#define M_PART HALO_SWEEP_M(HALO_SWEEP_PARTITION)
#define M_ALL (M_SIM | M_RUN | M_TRACE | M_PART)

/* Where a measure comes from. */
enum {
    SRC_EPOCH_MAX,  /* slowest rank per timed epoch, mean over epochs (field) */
    SRC_EPOCH_MEAN, /* mean per rank and timed epoch (field) */
    SRC_EPOCH_SUM,  /* sum over ranks, mean per epoch (field, scaled) */
    SRC_EPOCH_ALL,  /* mean per rank over every epoch (field) */
    SRC_HIT_RATE,   /* hits / (hits + misses) over all records */
    SRC_EVAL,       /* last eval record (field), else the summary */
    SRC_PARTITION,  /* partition.json */
    SRC_TRACE,      /* replay table column (field = column index) */
};

/* One measure. */
typedef struct measure_def {
    const char *name;  /* column name */
    unsigned modes;    /* modes that measure it */
    int src;           /* SRC_* */
    const char *field; /* record field, partition.json path, or replay column index */
    double scale;      /* multiplied in (1e-6 for megabytes) */
} measure_def;

/* Modes with metrics: run and sim; partition through a counts-only sim. */
#define M_MET (M_SIM | M_RUN)
#define M_CNT (M_SIM | M_RUN | M_PART)

static const measure_def defs[] = {
    {"epoch_s", M_MET, SRC_EPOCH_MAX, "time_s", 1},
    {"time_s", M_MET, SRC_EPOCH_MEAN, "time_s", 1},
    {"sample_s", M_MET, SRC_EPOCH_MEAN, "sample_s", 1},
    {"fetch_s", M_MET, SRC_EPOCH_MEAN, "fetch_s", 1},
    {"copy_s", M_MET, SRC_EPOCH_MEAN, "copy_s", 1},
    {"compute_s", M_MET, SRC_EPOCH_MEAN, "compute_s", 1},
    {"allreduce_s", M_MET, SRC_EPOCH_MEAN, "allreduce_s", 1},
    {"wait_s", M_MET, SRC_EPOCH_MEAN, "wait_s", 1},
    {"hit_rate", M_CNT, SRC_HIT_RATE, NULL, 1},
    {"remote_mb", M_CNT, SRC_EPOCH_SUM, "bytes_remote", 1e-6},
    {"sent_mb", M_CNT, SRC_EPOCH_SUM, "bytes_sent", 1e-6},
    {"sampled_edges", M_CNT, SRC_EPOCH_SUM, "sampled_edges", 1},
    {"input_nodes", M_CNT, SRC_EPOCH_SUM, "input_nodes", 1},
    {"remote_nodes", M_CNT, SRC_EPOCH_SUM, "remote_nodes", 1},
    {"cache_hits", M_CNT, SRC_EPOCH_SUM, "cache_hits", 1},
    {"cache_misses", M_CNT, SRC_EPOCH_SUM, "cache_misses", 1},
    {"bytes_remote", M_CNT, SRC_EPOCH_SUM, "bytes_remote", 1},
    {"bytes_sent", M_CNT, SRC_EPOCH_SUM, "bytes_sent", 1},
    {"messages", M_CNT, SRC_EPOCH_SUM, "messages", 1},
    {"batches", M_CNT, SRC_EPOCH_SUM, "batches", 1},
    {"loss", M_RUN, SRC_EPOCH_ALL, "loss", 1},
    {"train_acc", M_RUN, SRC_EPOCH_ALL, "train_acc", 1},
    {"test_acc", M_RUN, SRC_EVAL, "test_acc", 1},
    {"val_acc", M_RUN, SRC_EVAL, "val_acc", 1},
    {"edge_cut", M_ALL, SRC_PARTITION, "edge_cut_fraction", 1},
    {"cut_edges", M_ALL, SRC_PARTITION, "edge_cut", 1},
    {"replication", M_ALL, SRC_PARTITION, "replication_factor", 1},
    {"balance_nodes", M_ALL, SRC_PARTITION, "balance.nodes", 1},
    {"balance_train", M_ALL, SRC_PARTITION, "balance.train", 1},
    {"balance_edges", M_ALL, SRC_PARTITION, "balance.edges", 1},
    {"partition_s", M_ALL, SRC_PARTITION, "time_s", 1},
    {"partition_rss_mb", M_ALL, SRC_PARTITION, "peak_rss_bytes", 1.0 / 1048576.0},
    /* halo trace replay's table: capacity policy slots hit_rate of_belady remote_MB vs_none
       prefetch init_MB us/batch */
    {"slots", M_TRACE, SRC_TRACE, "2", 1},
    {"vs_none", M_TRACE, SRC_TRACE, "6", 1},
    {"prefetched", M_TRACE, SRC_TRACE, "7", 1},
    {"init_mb", M_TRACE, SRC_TRACE, "8", 1},
    {"policy_us", M_TRACE, SRC_TRACE, "9", 1},
    {NULL, 0, 0, NULL, 0},
};

/* The replay's columns of the measures also named in other modes. */
static const measure_def trace_defs[] = {
    {"hit_rate", M_TRACE, SRC_TRACE, "3", 1},
    {"remote_mb", M_TRACE, SRC_TRACE, "5", 1},
    {NULL, 0, 0, NULL, 0},
};

/* The definition of a measure in a mode (NULL when none), and the mask of modes that know it. */
static const measure_def *find_def(const char *name, int mode, unsigned *modes)
{
    const measure_def *hit = NULL;
    unsigned m = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (const measure_def *d = pass ? trace_defs : defs; d->name != NULL; d++) {
            if (strcmp(d->name, name) == 0) {
                m |= d->modes;
                if ((d->modes & HALO_SWEEP_M(mode)) && hit == NULL) {
                    hit = d;
                }
            }
        }
    }
    if (mode == HALO_SWEEP_TRACE) {
        for (const measure_def *d = trace_defs; d->name != NULL; d++) {
            if (strcmp(d->name, name) == 0) {
                hit = d;
            }
        }
    }
    if (modes != NULL) {
        *modes = m;
    }
    return hit;
}

int halo_sweep_measure_known(const char *name, int mode, unsigned *modes)
{
    unsigned m = 0;
    const measure_def *d = find_def(name, mode, &m);
    if (modes != NULL) {
        *modes = m;
    }
    return d != NULL ? 1 : m != 0 ? -1 : 0;
}

bool halo_sweep_measure_from_metrics(const char *name, int mode)
{
    const measure_def *d = find_def(name, mode, NULL);
    return d != NULL && d->src != SRC_PARTITION && d->src != SRC_TRACE;
}

/* ---- metrics ---- */

/* The records of a metrics file. */
typedef struct records {
    halo_json **epoch;  /* epoch records */
    int nepoch;         /* count */
    halo_json *eval;    /* the last eval record (NULL: none) */
    halo_json *summary; /* the summary record (NULL: none) */
    halo_json **all;    /* every parsed line (owned) */
    int nall;           /* count */
} records;

static void records_free(records *r)
{
    for (int i = 0; i < r->nall; i++) {
        halo_json_free(r->all[i]);
    }
    halo_free(r->all);
    halo_free(r->epoch);
    memset(r, 0, sizeof *r);
}

static int records_load(const char *path, records *r)
{
    memset(r, 0, sizeof *r);
    char *text = NULL;
    size_t len = 0;
    int rc = halo_file_read_all(path, &text, &len);
    if (rc < 0) {
        return halo_errorf(HALO_EINPUT, "no metrics: %s", halo_errmsg());
    }
    int lineno = 0;
    for (char *s = text; *s;) {
        char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        lineno++;
        if (n > 0) {
            halo_json *v = NULL;
            char where[4200];
            snprintf(where, sizeof where, "%s line %d", path, lineno);
            rc = halo_json_parse(s, n, where, &v);
            if (rc < 0) {
                halo_free(text);
                records_free(r);
                return halo_errorf(HALO_EINPUT, "unparsable metrics: %s", halo_errmsg());
            }
            r->all = halo_realloc(r->all, (size_t)(r->nall + 1) * sizeof *r->all);
            r->all[r->nall++] = v;
            const halo_json *t = halo_json_get(v, "type");
            const char *type = t && t->type == HALO_JSON_STRING ? t->string : "";
            if (strcmp(type, "epoch") == 0) {
                r->epoch = halo_realloc(r->epoch, (size_t)(r->nepoch + 1) * sizeof *r->epoch);
                r->epoch[r->nepoch++] = v;
            } else if (strcmp(type, "eval") == 0) {
                r->eval = v;
            } else if (strcmp(type, "summary") == 0) {
                r->summary = v;
            }
        }
        s += n + (nl != NULL);
    }
    halo_free(text);
    if (r->nepoch == 0) {
        records_free(r);
        return halo_errorf(HALO_EINPUT, "unparsable metrics: %s has no epoch record", path);
    }
    return 0;
}

/* A number field of a record, NAN when absent. */
static double num(const halo_json *v, const char *key)
{
    const halo_json *f = halo_json_get(v, key);
    return f != NULL && f->type == HALO_JSON_NUMBER ? f->number : NAN;
}

/* One measure over the records. Timed epochs: every epoch but the first when there are
 * several (the first pays for warm-up). */
static double from_records(const records *r, const measure_def *d)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < r->nepoch; i++) {
        double e = num(r->epoch[i], "epoch");
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    int first = (int)lo, last = (int)hi, nep = last - first + 1;
    int t0 = nep > 1 ? first + 1 : first;
    switch (d->src) {
    case SRC_EPOCH_MAX: {
        double sum = 0;
        int n = 0;
        for (int ep = t0; ep <= last; ep++) {
            double mx = NAN;
            for (int i = 0; i < r->nepoch; i++) {
                if ((int)num(r->epoch[i], "epoch") == ep) {
                    double v = num(r->epoch[i], d->field);
                    mx = isnan(mx) || v > mx ? v : mx;
                }
            }
            if (!isnan(mx)) {
                sum += mx;
                n++;
            }
        }
        return n ? sum / n : NAN;
    }
    case SRC_EPOCH_MEAN:
    case SRC_EPOCH_ALL: {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < r->nepoch; i++) {
            double v = num(r->epoch[i], d->field);
            if (!isnan(v) && (d->src == SRC_EPOCH_ALL || (int)num(r->epoch[i], "epoch") >= t0)) {
                sum += v;
                n++;
            }
        }
        return n ? sum / n : NAN;
    }
    case SRC_EPOCH_SUM: {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < r->nepoch; i++) {
            double v = num(r->epoch[i], d->field);
            if (!isnan(v)) {
                sum += v;
                n++;
            }
        }
        return n ? sum / nep * d->scale : NAN;
    }
    case SRC_HIT_RATE: {
        double h = 0, m = 0;
        for (int i = 0; i < r->nepoch; i++) {
            double a = num(r->epoch[i], "cache_hits"), b = num(r->epoch[i], "cache_misses");
            h += isnan(a) ? 0 : a;
            m += isnan(b) ? 0 : b;
        }
        return h + m > 0 ? h / (h + m) : 0;
    }
    case SRC_EVAL: {
        double v = r->eval ? num(r->eval, d->field) : NAN;
        return isnan(v) && r->summary ? num(r->summary, d->field) : v;
    }
    default: return NAN;
    }
}

/* ---- partition.json ---- */

static double from_partition(const halo_json *pj, const measure_def *d)
{
    if (strcmp(d->field, "time_s") == 0) {
        const halo_json *t = halo_json_get(pj, "time_s");
        double a = t ? num(t, "assign") : NAN, w = t ? num(t, "write") : NAN;
        return isnan(a) ? NAN : a + (isnan(w) ? 0 : w);
    }
    const char *dot = strchr(d->field, '.');
    if (dot != NULL) {
        char head[64];
        snprintf(head, sizeof head, "%.*s", (int)(dot - d->field), d->field);
        const halo_json *sub = halo_json_get(pj, head);
        return sub ? num(sub, dot + 1) * d->scale : NAN;
    }
    return num(pj, d->field) * d->scale;
}

/* ---- the replay's table ---- */

/* Reads the first row under the replay's header line ("capacity policy slots ...") in the log
 * into cols[10]. */
static int replay_row(const char *log, double *cols)
{
    char *text = NULL;
    size_t len = 0;
    int rc = halo_file_read_all(log, &text, &len);
    if (rc < 0) {
        return halo_errorf(HALO_EINPUT, "no replay output: %s", halo_errmsg());
    }
    char *h = NULL;
    for (char *s = text; s != NULL && *s;) {
        if (strncmp(s, "capacity", 8) == 0 && strstr(s, "hit_rate") != NULL) {
            h = s;
        }
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    char *row = h ? strchr(h, '\n') : NULL;
    int n = 0;
    if (row != NULL) {
        row++;
        char *nl = strchr(row, '\n');
        if (nl) {
            *nl = '\0';
        }
        char *save = NULL;
        for (char *t = strtok_r(row, " \t", &save); t != NULL && n < 10;
             t = strtok_r(NULL, " \t", &save)) {
            char *end;
            double v = strtod(t, &end);
            cols[n++] = *end == '\0' ? v : NAN;
        }
    }
    halo_free(text);
    if (n < 10) {
        return halo_errorf(HALO_EINPUT, "unparsable replay output in %s (no table row)", log);
    }
    return 0;
}

int halo_sweep_measure(const halo_sweep_exp *e, const halo_sweep_plan *pl, double *vals)
{
    int rc = 0;
    records r;
    memset(&r, 0, sizeof r);
    halo_json *pj = NULL;
    double cols[10];
    bool have_r = false, have_p = false, have_t = false;
    for (int i = 0; i < e->nmeasures; i++) {
        const measure_def *d = find_def(e->measures[i], e->mode, NULL);
        vals[i] = NAN;
        if (d == NULL) {
            continue;
        }
        if (d->src == SRC_PARTITION) {
            if (!have_p) {
                char path[4200];
                snprintf(path, sizeof path, "%s/partition.json", pl->pdir);
                rc = halo_json_load(path, &pj);
                if (rc < 0) {
                    rc = halo_errorf(HALO_EINPUT, "unparsable partition.json: %s", halo_errmsg());
                    goto fail;
                }
                have_p = true;
            }
            vals[i] = from_partition(pj, d);
        } else if (d->src == SRC_TRACE) {
            if (!have_t) {
                HALO_TRY(replay_row(pl->log, cols));
                have_t = true;
            }
            vals[i] = cols[atoi(d->field)] * d->scale;
        } else {
            if (!have_r) {
                HALO_TRY(records_load(pl->metrics, &r));
                have_r = true;
            }
            vals[i] = from_records(&r, d);
        }
    }
fail:
    records_free(&r);
    halo_json_free(pj);
    return rc;
}
