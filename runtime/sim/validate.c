/* Measured vs simulated metrics: counts checked field by field, times side by side. */
#include "sim/validate.h"

#include "core/err.h"
#include "core/sort.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"
#include "policy/policy.h"
#include "sim/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const time_keys[HALO_SIM_T_N] = {
    "time_s", "sample_s",     "fetch_s",     "copy_s",       "compute_s",
    "allreduce_s", "wait_s", "sample_cpu_s", "fetch_cpu_s", "compute_cpu_s"};
static const char *const time_names[HALO_SIM_T_N] = {
    "epoch", "sample", "fetch", "copy", "compute", "allreduce", "wait", "sample cpu",
    "fetch cpu", "compute cpu"};
/* The counts that must be equal (invariant 3). */
static const char *const count_keys[] = {"batches",      "sampled_edges", "input_nodes",
                                         "remote_nodes", "cache_hits",    "cache_misses",
                                         "bytes_remote", "bytes_sent",    "messages"};
#define NCOUNT ((int)(sizeof count_keys / sizeof count_keys[0]))
/* The per-type counts of a typed run's records (docs/train.md "Metrics"), compared entry by
 * entry as "MAP.NAME" when the measured file has them. */
static const char *const map_keys[] = {"input_nodes_per_type", "remote_nodes_per_type",
                                       "sampled_edges_per_relation"};
#define NMAP ((int)(sizeof map_keys / sizeof map_keys[0]))
/* Most map entries a table keeps (node types twice, relations once). */
#define MAX_X (2 * 32 + 64)

const char *halo_sim_time_name(int t)
{
    return t >= 0 && t < HALO_SIM_T_N ? time_names[t] : NULL;
}

/* The epoch records of one metrics file, as a dense [epochs x ranks] table. */
typedef struct epoch_table {
    int epochs, ranks;      /* table size */
    double *t;              /* [epochs * ranks * HALO_SIM_T_N] times */
    int64_t *n;             /* [epochs * ranks * NCOUNT] counts */
    unsigned char *seen;    /* [epochs * ranks] a record was read */
    int nx;                 /* map entries seen in any record ("MAP.NAME") */
    char xname[MAX_X][96];  /* their names */
    int64_t *x;             /* [epochs * ranks * nx] their values */
    unsigned char *xhas;    /* [epochs * ranks * nx] the record has the entry */
} epoch_table;

/* Index of map entry name in tb, adding it (pass 0) when add; -1 when absent or full. */
static int xindex(epoch_table *tb, const char *name, bool add)
{
    for (int i = 0; i < tb->nx; i++) {
        if (strcmp(tb->xname[i], name) == 0) {
            return i;
        }
    }
    if (!add || tb->nx == MAX_X) {
        return -1;
    }
    snprintf(tb->xname[tb->nx], sizeof tb->xname[0], "%s", name);
    return tb->nx++;
}

/* The map entries of one record: names (pass 0) or values into cell (pass 1). */
static int read_maps(epoch_table *tb, const halo_json *v, const char *where, int pass,
                     size_t cell)
{
    for (int m = 0; m < NMAP; m++) {
        const halo_json *o = halo_json_get(v, map_keys[m]);
        if (o == NULL) {
            continue;
        }
        if (o->type != HALO_JSON_OBJECT) {
            return halo_errorf(HALO_EINPUT, "%s: %s is not an object", where, map_keys[m]);
        }
        for (size_t i = 0; i < o->len; i++) {
            char name[96];
            snprintf(name, sizeof name, "%s.%s", map_keys[m], o->keys[i]);
            int k = xindex(tb, name, pass == 0);
            if (pass == 0 && k < 0) {
                return halo_errorf(HALO_EINPUT, "%s: more than %d per-type counts", where,
                                   MAX_X);
            }
            if (pass == 1 && k >= 0) {
                if (o->items[i]->type != HALO_JSON_NUMBER) {
                    return halo_errorf(HALO_EINPUT, "%s: %s is not a number", where, name);
                }
                tb->x[cell * (size_t)tb->nx + (size_t)k] = (int64_t)o->items[i]->number;
                tb->xhas[cell * (size_t)tb->nx + (size_t)k] = 1;
            }
        }
    }
    return 0;
}

static void table_free(epoch_table *tb)
{
    halo_free(tb->t);
    halo_free(tb->n);
    halo_free(tb->seen);
    halo_free(tb->x);
    halo_free(tb->xhas);
    memset(tb, 0, sizeof *tb);
}

/* Reads the "epoch" records of path into tb (two passes: sizes, then values). */
static int table_load(const char *path, epoch_table *tb)
{
    char *text = NULL;
    size_t len = 0;
    memset(tb, 0, sizeof *tb);
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        if (pass == 1) {
            if (tb->epochs == 0 || tb->ranks == 0) {
                rc = halo_errorf(HALO_EINPUT, "%s: no epoch records", path);
                break;
            }
            size_t cells = (size_t)tb->epochs * (size_t)tb->ranks;
            tb->t = HALO_NEW(double, cells * HALO_SIM_T_N);
            tb->n = HALO_NEW(int64_t, cells * NCOUNT);
            tb->seen = HALO_NEW(unsigned char, cells);
            tb->x = HALO_NEW(int64_t, cells * (size_t)(tb->nx > 0 ? tb->nx : 1));
            tb->xhas = HALO_NEW(unsigned char, cells * (size_t)(tb->nx > 0 ? tb->nx : 1));
        }
        size_t at = 0;
        int line = 0;
        while (at < len && rc == 0) {
            size_t end = at;
            while (end < len && text[end] != '\n') {
                end++;
            }
            line++;
            char where[4200];
            snprintf(where, sizeof where, "%s:%d", path, line);
            if (end > at) {
                halo_json *v = NULL;
                rc = halo_json_parse(text + at, end - at, where, &v);
                const halo_json *ty = rc == 0 ? halo_json_get(v, "type") : NULL;
                if (rc == 0 && ty != NULL && ty->type == HALO_JSON_STRING &&
                    strcmp(ty->string, "epoch") == 0) {
                    int64_t ep = 0, rank = 0, ranks = 0;
                    rc = halo_json_get_i64(v, "epoch", where, &ep);
                    rc = rc < 0 ? rc : halo_json_get_i64(v, "rank", where, &rank);
                    rc = rc < 0 ? rc : halo_json_get_i64(v, "ranks", where, &ranks);
                    if (rc == 0 && (ep < 0 || ep > 100000 || ranks < 1 || ranks > 1 << 20 ||
                                    rank < 0 || rank >= ranks)) {
                        rc = halo_errorf(HALO_EINPUT, "%s: epoch %lld, rank %lld of %lld out of "
                                         "range", where, (long long)ep, (long long)rank,
                                         (long long)ranks);
                    }
                    if (rc == 0 && pass == 0) {
                        tb->epochs = (int)ep + 1 > tb->epochs ? (int)ep + 1 : tb->epochs;
                        if (tb->ranks != 0 && tb->ranks != ranks) {
                            rc = halo_errorf(HALO_EINPUT, "%s: %lld ranks, earlier records %d",
                                             where, (long long)ranks, tb->ranks);
                        }
                        tb->ranks = (int)ranks;
                        rc = rc < 0 ? rc : read_maps(tb, v, where, 0, 0);
                    } else if (rc == 0) {
                        size_t cell = (size_t)ep * (size_t)tb->ranks + (size_t)rank;
                        for (int k = 0; rc == 0 && k < HALO_SIM_T_N; k++) {
                            if (k >= HALO_SIM_T_WALL && halo_json_get(v, time_keys[k]) == NULL) {
                                continue; /* a file written before the CPU clocks: 0 */
                            }
                            rc = halo_json_get_f64(v, time_keys[k], where,
                                                   &tb->t[cell * HALO_SIM_T_N + k]);
                        }
                        for (int k = 0; rc == 0 && k < NCOUNT; k++) {
                            rc = halo_json_get_i64(v, count_keys[k], where,
                                                   &tb->n[cell * NCOUNT + k]);
                        }
                        rc = rc < 0 ? rc : read_maps(tb, v, where, 1, cell);
                        tb->seen[cell] = 1;
                    }
                }
                halo_json_free(v);
            }
            at = end + 1;
        }
    }
    halo_free(text);
    if (rc == 0) {
        for (int64_t c = 0; c < (int64_t)tb->epochs * tb->ranks; c++) {
            if (!tb->seen[c]) {
                rc = halo_errorf(HALO_EINPUT, "%s: no record for epoch %lld, rank %lld", path,
                                 (long long)(c / tb->ranks), (long long)(c % tb->ranks));
                break;
            }
        }
    }
    if (rc < 0) {
        table_free(tb);
    }
    return rc;
}

/* Median over epochs [first, epochs) of the slowest rank's time and of each stage's mean per
 * rank: the median, not the mean, so that one epoch disturbed by other work on a shared
 * machine does not move the figure. */
static void table_times(const epoch_table *tb, int first, double *out, double *spread)
{
    int n = tb->epochs - first;
    double *v = HALO_NEW(double, (size_t)n * HALO_SIM_T_N);
    for (int e = first; e < tb->epochs; e++) {
        double *row = v + (size_t)(e - first) * HALO_SIM_T_N;
        for (int r = 0; r < tb->ranks; r++) {
            const double *t = &tb->t[((size_t)e * tb->ranks + r) * HALO_SIM_T_N];
            row[0] = t[0] > row[0] ? t[0] : row[0];
            for (int k = 1; k < HALO_SIM_T_N; k++) {
                row[k] += t[k] / tb->ranks;
            }
        }
    }
    double *col = HALO_NEW(double, n);
    for (int k = 0; k < HALO_SIM_T_N; k++) {
        for (int e = 0; e < n; e++) {
            col[e] = v[(size_t)e * HALO_SIM_T_N + k];
        }
        out[k] = halo_median_f64(col, n);
        if (k == 0) {
            /* how steady the epochs were: their range against their median */
            *spread = out[0] > 0 ? (col[n - 1] - col[0]) / out[0] : 0;
        }
    }
    halo_free(col);
    halo_free(v);
}

int halo_sim_compare_files(const char *measured, const char *simulated, halo_sim_comparison *out)
{
    memset(out, 0, sizeof *out);
    epoch_table a, b;
    HALO_CHECK(table_load(measured, &a));
    int rc = table_load(simulated, &b);
    if (rc < 0) {
        table_free(&a);
        return rc;
    }
    if (a.ranks != b.ranks || a.epochs != b.epochs) {
        rc = halo_errorf(HALO_EINPUT, "%s has %d ranks x %d epochs, %s %d x %d: not the same "
                         "configuration", measured, a.ranks, a.epochs, simulated, b.ranks,
                         b.epochs);
        goto done;
    }
    out->epochs = a.epochs;
    out->ranks = a.ranks;
    out->first_epoch = a.epochs > 1 ? 1 : 0;
    out->fields = NCOUNT + a.nx;
    for (int e = 0; e < a.epochs; e++) {
        for (int r = 0; r < a.ranks; r++) {
            size_t cell = (size_t)e * a.ranks + r;
            out->records++;
            for (int k = 0; k < NCOUNT; k++) {
                int64_t x = a.n[cell * NCOUNT + k], y = b.n[cell * NCOUNT + k];
                if (x != y) {
                    if (out->mismatches == 0) {
                        snprintf(out->first_mismatch, sizeof out->first_mismatch,
                                 "epoch %d rank %d %s: measured %lld, simulated %lld", e, r,
                                 count_keys[k], (long long)x, (long long)y);
                    }
                    out->mismatches++;
                }
            }
            for (int k = 0; k < a.nx; k++) {
                if (!a.xhas[cell * (size_t)a.nx + (size_t)k]) {
                    continue;
                }
                int j = xindex(&b, a.xname[k], false);
                int64_t x = a.x[cell * (size_t)a.nx + (size_t)k];
                bool has = j >= 0 && b.xhas[cell * (size_t)b.nx + (size_t)j];
                int64_t y = has ? b.x[cell * (size_t)b.nx + (size_t)j] : 0;
                if (!has || x != y) {
                    if (out->mismatches == 0) {
                        char sim[32];
                        snprintf(sim, sizeof sim, "%lld", (long long)y);
                        snprintf(out->first_mismatch, sizeof out->first_mismatch,
                                 "epoch %d rank %d %s: measured %lld, simulated %s", e, r,
                                 a.xname[k], (long long)x, has ? sim : "absent");
                    }
                    out->mismatches++;
                }
            }
        }
    }
    double unused;
    table_times(&a, out->first_epoch, out->measured, &out->measured_spread);
    table_times(&b, out->first_epoch, out->simulated, &unused);
done:
    table_free(&a);
    table_free(&b);
    return rc;
}

void halo_sim_comparison_print(const halo_sim_comparison *c, FILE *out)
{
    if (c->mismatches == 0) {
        fprintf(out, "counts: equal (%lld records x %d fields: %d ranks x %d epochs)\n",
                (long long)c->records, c->fields, c->ranks, c->epochs);
    } else {
        fprintf(out, "counts: %lld fields differ; first: %s\n", (long long)c->mismatches,
                c->first_mismatch);
    }
    if (c->simulated[HALO_SIM_T_EPOCH] <= 0) { /* a simulation without a profile has no times */
        fprintf(out, "times: not compared (simulated without --cluster: counts only)\n");
        return;
    }
    fprintf(out, "%-10s %12s %12s %8s   (epochs %d..%d)\n", "stage", "measured_s", "simulated_s",
            "error", c->first_epoch, c->epochs - 1);
    for (int k = 0; k < HALO_SIM_T_N; k++) {
        double m = c->measured[k], s = c->simulated[k];
        if (k >= HALO_SIM_T_WALL && !(m > 0)) {
            continue; /* CPU clocks not in the measured file */
        }
        if (m > 0) {
            fprintf(out, "%-10s %12.4f %12.4f %+7.1f%%\n", time_names[k], m, s,
                    100.0 * (s - m) / m);
        } else {
            fprintf(out, "%-10s %12.4f %12.4f %8s\n", time_names[k], m, s, "-");
        }
    }
}

int halo_sim_compare(const char *measured, const char *simulated, FILE *out)
{
    halo_sim_comparison c;
    HALO_CHECK(halo_sim_compare_files(measured, simulated, &c));
    halo_sim_comparison_print(&c, out);
    if (c.mismatches > 0) {
        return halo_errorf(HALO_EINPUT, "sim: %lld counts differ from %s (%s)",
                           (long long)c.mismatches, measured, c.first_mismatch);
    }
    return 0;
}

/* Reads one number of the validation entry. */
static int vnum(const halo_json *v, const char *key, const char *where, double lo, double hi,
                double *out)
{
    const halo_json *x = halo_json_get(v, key);
    if (x == NULL || x->type != HALO_JSON_NUMBER || !(x->number >= lo && x->number <= hi)) {
        return halo_errorf(HALO_EINPUT, "%s: field validation.%s: a number in %g..%g expected",
                           where, key, lo, hi);
    }
    *out = x->number;
    return 0;
}

int halo_sim_validation_load(const char *profile, halo_sim_validation *out)
{
    memset(out, 0, sizeof *out);
    halo_json *top = NULL;
    HALO_CHECK(halo_policy_load_data(profile, &top));
    const halo_json *v = halo_json_get(top, "validation");
    int rc = 0;
    double seed = 0, configs = 0;
    if (v != NULL && v->type != HALO_JSON_OBJECT) {
        rc = halo_errorf(HALO_EINPUT, "%s: field validation: a table expected", profile);
    } else if (v != NULL) {
        const halo_json *date = halo_json_get(v, "date"), *fit = halo_json_get(v, "fit");
        rc = vnum(v, "seed", profile, 0, 9007199254740992.0, &seed);
        rc = rc < 0 ? rc : vnum(v, "configs", profile, 1, 1e6, &configs);
        rc = rc < 0 ? rc : vnum(v, "median_pct", profile, 0, 1e9, &out->median_pct);
        rc = rc < 0 ? rc : vnum(v, "worst_pct", profile, 0, 1e9, &out->worst_pct);
        rc = rc < 0 ? rc : vnum(v, "stage_median_pct", profile, 0, 1e9, &out->stage_median_pct);
        if (rc == 0 && (date == NULL || date->type != HALO_JSON_STRING ||
                        strlen(date->string) >= sizeof out->date || fit == NULL ||
                        fit->type != HALO_JSON_BOOL)) {
            rc = halo_errorf(HALO_EINPUT, "%s: field validation: date (a string) and fit (a "
                             "boolean) expected", profile);
        }
        if (rc == 0) {
            out->present = true;
            out->seed = (int64_t)seed;
            out->configs = (int)configs;
            out->fit = fit->boolean;
            snprintf(out->date, sizeof out->date, "%s", date->string);
        }
    }
    halo_json_free(top);
    return rc;
}

/* The text of p without its validation line; fails when an entry spans several lines. */
static int drop_validation(const char *p, const char *text, size_t len, halo_sb *sb)
{
    size_t at = 0;
    while (at < len) {
        size_t end = at;
        while (end < len && text[end] != '\n') {
            end++;
        }
        const char *s = text + at;
        while (s < text + end && (*s == ' ' || *s == '\t')) {
            s++;
        }
        bool entry = strncmp(s, "validation", 10) == 0 && strchr(" =", s[10]) != NULL;
        if (entry) {
            const char *e = text + end;
            while (e > s && strchr(" \t\r", e[-1]) != NULL) {
                e--;
            }
            if (!(e - s >= 2 && (e[-1] == '}' || (e[-1] == ',' && e[-2] == '}')))) {
                return halo_errorf(HALO_EINPUT, "%s: the validation entry is not on one line; "
                                   "remove it to record a new one", p);
            }
        } else {
            halo_sb_printf(sb, "%.*s%s", (int)(end - at), text + at, end < len ? "\n" : "");
        }
        at = end + 1;
    }
    return 0;
}

/* Writes text to a temporary file beside profile, checks that it loads back as a profile with
 * v as its validation, and renames it over the profile. */
static int replace_checked(const char *profile, const halo_sb *sb, const halo_sim_validation *v)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", profile, (int)getpid());
    HALO_CHECK(halo_file_write_all(tmp, sb->buf, sb->len));
    halo_sim_profile prof;
    halo_sim_validation back;
    int rc = halo_sim_profile_load(tmp, &prof);
    rc = rc < 0 ? rc : halo_sim_validation_load(tmp, &back);
    if (rc < 0) {
        halo_error_prefix(rc, "%s: not recorded: with the entry the file does not load", profile);
    }
    if (rc == 0 && (!back.present || back.configs != v->configs)) {
        rc = halo_errorf(HALO_EINPUT, "%s: the validation entry does not read back (is the "
                         "returned table the file's last '}'?)", profile);
    }
    if (rc == 0 && rename(tmp, profile) < 0) {
        rc = halo_errorf(HALO_EIO, "%s: cannot replace: %s", profile, strerror(errno));
    }
    if (rc < 0) {
        unlink(tmp);
    }
    return rc;
}

int halo_sim_validation_record(const char *profile, const halo_sim_validation *v)
{
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(profile, &text, &len));
    halo_sb body;
    halo_sb_init(&body);
    int rc = drop_validation(profile, text, len, &body);
    halo_free(text);
    char *close = rc == 0 ? strrchr(body.buf, '}') : NULL;
    if (rc == 0 && close == NULL) {
        rc = halo_errorf(HALO_EINPUT, "%s: no table to record the validation in", profile);
    }
    if (rc == 0) {
        size_t cut = (size_t)(close - body.buf), back = cut;
        while (back > 0 && strchr(" \t\r\n", body.buf[back - 1]) != NULL) {
            back--;
        }
        bool comma = back > 0 && body.buf[back - 1] != ',' && body.buf[back - 1] != '{';
        halo_sb out;
        halo_sb_init(&out);
        halo_sb_printf(&out, "%.*s%s\n    validation = { seed = %lld, configs = %d, "
                       "median_pct = %.1f, worst_pct = %.1f, stage_median_pct = %.1f, "
                       "fit = %s, date = \"%s\" },\n%s",
                       (int)back, body.buf, comma ? "," : "", (long long)v->seed, v->configs,
                       v->median_pct, v->worst_pct, v->stage_median_pct,
                       v->fit ? "true" : "false", v->date, body.buf + cut);
        rc = replace_checked(profile, &out, v);
        halo_sb_free(&out);
    }
    halo_sb_free(&body);
    return rc;
}

void halo_sim_validation_text(const halo_sim_validation *v, char *buf, size_t size)
{
    if (!v->present) {
        snprintf(buf, size, "not validated (halo sim validate --record)");
        return;
    }
    snprintf(buf, size, "validated: epoch median |error| %.1f%%, worst %.1f%%, stage median "
             "<= %.1f%% (seed %lld, %d configurations, %s%s)", v->median_pct, v->worst_pct,
             v->stage_median_pct, (long long)v->seed, v->configs, v->date,
             v->fit ? "" : ", measured under load");
}
