/* The sweep's CSV (append-only, one whole line per finished point, read back for resume) and
 * the figure's data table built from it: repetitions averaged, derived columns computed. */
#include "sweep/internal.h"

#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void halo_sweep_table_free(halo_sweep_table *t)
{
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            halo_free(t->rows[r][c]);
        }
        halo_free(t->rows[r]);
    }
    halo_free(t->rows);
    for (int c = 0; c < t->ncols; c++) {
        halo_free(t->cols[c]);
    }
    halo_free(t->cols);
    memset(t, 0, sizeof *t);
}

int halo_sweep_table_col(const halo_sweep_table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++) {
        if (strcmp(t->cols[c], name) == 0) {
            return c;
        }
    }
    return -1;
}

/* A record of fields being parsed. */
typedef struct fields {
    char **v; /* fields (owned) */
    int n;    /* count */
    int cap;  /* room */
} fields;

static void fields_push(fields *f, const char *s, size_t n)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->v = halo_realloc(f->v, (size_t)f->cap * sizeof *f->v);
    }
    char *c = halo_malloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    f->v[f->n++] = c;
}

static void fields_clear(fields *f)
{
    for (int i = 0; i < f->n; i++) {
        halo_free(f->v[i]);
    }
    f->n = 0;
}

/* Parses one record at *s (RFC 4180); returns false at the end of the text or when the record
 * does not end with a newline (a torn last line). */
static bool parse_record(const char **s, fields *f, halo_sb *cell)
{
    const char *p = *s;
    fields_clear(f);
    if (*p == '\0') {
        return false;
    }
    for (;;) {
        cell->len = 0;
        if (cell->buf) {
            cell->buf[0] = '\0';
        }
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0') {
                    *s = p;
                    return false;
                }
                if (p[0] == '"' && p[1] == '"') {
                    halo_sb_putc(cell, '"');
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    halo_sb_putc(cell, *p++);
                }
            }
        }
        while (*p && *p != ',' && *p != '\n' && *p != '\r') {
            halo_sb_putc(cell, *p++);
        }
        fields_push(f, cell->buf ? cell->buf : "", cell->len);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\r') {
            p++;
        }
        if (*p == '\n') {
            *s = p + 1;
            return true;
        }
        *s = p;
        return false;
    }
}

int halo_sweep_csv_read(const char *path, halo_sweep_table *t)
{
    memset(t, 0, sizeof *t);
    if (!halo_path_exists(path)) {
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    const char *s = text;
    fields f = {NULL, 0, 0};
    halo_sb cell;
    halo_sb_init(&cell);
    if (parse_record(&s, &f, &cell)) {
        t->cols = f.v;
        t->ncols = f.n;
        f.v = NULL;
        f.n = f.cap = 0;
        while (parse_record(&s, &f, &cell)) {
            if (f.n != t->ncols) {
                continue;
            }
            t->rows = halo_realloc(t->rows, (size_t)(t->nrows + 1) * sizeof *t->rows);
            t->rows[t->nrows++] = f.v;
            f.v = NULL;
            f.n = f.cap = 0;
        }
    }
    fields_clear(&f);
    halo_free(f.v);
    halo_sb_free(&cell);
    halo_free(text);
    return 0;
}

void halo_sweep_csv_field(halo_sb *sb, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        halo_sb_puts(sb, s);
        return;
    }
    halo_sb_putc(sb, '"');
    for (; *s; s++) {
        if (*s == '"') {
            halo_sb_putc(sb, '"');
        }
        halo_sb_putc(sb, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    halo_sb_putc(sb, '"');
}

void halo_sweep_csv_header(const halo_sweep_exp *e, halo_sb *sb)
{
    halo_sb_puts(sb, "key");
    for (int i = 0; i < e->naxes; i++) {
        halo_sb_putc(sb, ',');
        halo_sweep_csv_field(sb, e->axes[i]);
    }
    halo_sb_puts(sb, ",rep");
    for (int i = 0; i < e->nmeasures; i++) {
        halo_sb_putc(sb, ',');
        halo_sweep_csv_field(sb, e->measures[i]);
    }
    halo_sb_puts(sb, ",status,error,seconds\n");
}

int halo_sweep_csv_prepare(const halo_sweep_exp *e, const char *path)
{
    halo_sb want;
    halo_sb_init(&want);
    halo_sweep_csv_header(e, &want);
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    halo_sweep_table old;
    memset(&old, 0, sizeof old);
    if (!halo_path_exists(path)) {
        rc = halo_file_write_atomic(path, want.buf, want.len);
        goto fail;
    }
    HALO_TRY(halo_file_read_all(path, &text, &len));
    if (len > 0 && text[len - 1] != '\n') {
        /* a torn last line (the sweep died mid-write): cut it off */
        char *nl = strrchr(text, '\n');
        off_t keep = nl ? (off_t)(nl - text + 1) : 0;
        if (truncate(path, keep) < 0) {
            rc = halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
            goto fail;
        }
        len = (size_t)keep;
        text[len] = '\0';
    }
    if (len >= want.len && memcmp(text, want.buf, want.len) == 0) {
        goto fail; /* same columns: rc 0 */
    }
    /* other columns (the experiment changed): move the cells by name, atomically */
    HALO_TRY(halo_sweep_csv_read(path, &old));
    halo_sb out;
    halo_sb_init(&out);
    halo_sb_puts(&out, want.buf);
    int ncols = 0;
    const char **cols = HALO_NEW(const char *, e->naxes + e->nmeasures + 5);
    cols[ncols++] = "key";
    for (int i = 0; i < e->naxes; i++) {
        cols[ncols++] = e->axes[i];
    }
    cols[ncols++] = "rep";
    for (int i = 0; i < e->nmeasures; i++) {
        cols[ncols++] = e->measures[i];
    }
    cols[ncols++] = "status";
    cols[ncols++] = "error";
    cols[ncols++] = "seconds";
    for (int r = 0; r < old.nrows; r++) {
        for (int c = 0; c < ncols; c++) {
            int oc = halo_sweep_table_col(&old, cols[c]);
            if (c > 0) {
                halo_sb_putc(&out, ',');
            }
            halo_sweep_csv_field(&out, oc >= 0 ? old.rows[r][oc] : "");
        }
        halo_sb_putc(&out, '\n');
    }
    rc = halo_file_write_atomic(path, out.buf, out.len);
    halo_sb_free(&out);
    halo_free(cols);
fail:
    halo_sweep_table_free(&old);
    halo_free(text);
    halo_sb_free(&want);
    return rc;
}

int halo_sweep_csv_append(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    size_t n = strlen(line);
    ssize_t w = write(fd, line, n);
    int e = errno;
    if (w != (ssize_t)n || fsync(fd) < 0) {
        e = w != (ssize_t)n ? e : errno;
        close(fd);
        return halo_errorf(HALO_EIO, "%s: appending a row: %s", path,
                           w >= 0 && w != (ssize_t)n ? "short write" : strerror(e));
    }
    if (close(fd) < 0) {
        return halo_errorf(HALO_EIO, "%s: %s", path, strerror(errno));
    }
    return 0;
}

/* ---- the data table ---- */

/* A point key and the index of its latest CSV row. */
typedef struct keyrow {
    const char *key; /* point key */
    int row;         /* latest row */
} keyrow;

static int cmp_keyrow(const void *a, const void *b)
{
    const keyrow *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c != 0 ? c : (x->row > y->row) - (x->row < y->row);
}

/* The latest row of key, -1 when none (kr sorted by key, then row). */
static int latest(const keyrow *kr, int n, const char *key)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(kr[mid].key, key) <= 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo > 0 && strcmp(kr[lo - 1].key, key) == 0 ? kr[lo - 1].row : -1;
}

void halo_sweep_data_free(halo_sweep_data *d)
{
    halo_sweep_table_free(&d->t);
    for (int i = 0; i < d->failed; i++) {
        halo_free(d->fail_key[i]);
        halo_free(d->fail_axes[i]);
        halo_free(d->fail_error[i]);
    }
    halo_free(d->fail_key);
    halo_free(d->fail_axes);
    halo_free(d->fail_error);
    memset(d, 0, sizeof *d);
}

static char *num_text(double v)
{
    char buf[64];
    if (isnan(v)) {
        snprintf(buf, sizeof buf, "NaN");
    } else {
        snprintf(buf, sizeof buf, "%.9g", v);
    }
    return halo_strdup(buf);
}

/* The derived value of op from the row's value v and the baseline's b. */
static double derive_op(const char *op, double v, double b)
{
    if (isnan(v) || isnan(b)) {
        return NAN;
    }
    if (strcmp(op, "baseline/value") == 0) {
        return v != 0 ? b / v : NAN;
    }
    if (strcmp(op, "value/baseline") == 0) {
        return b != 0 ? v / b : NAN;
    }
    if (strcmp(op, "improvement") == 0) {
        return b != 0 ? 100.0 * (b - v) / b : NAN;
    }
    return v - b; /* difference */
}

/* Records a failed point in d: its key, its axes as "axis=value ..." (and rep=R when repeated),
 * its error. */
static void note_failure(const halo_sweep_exp *e, const halo_sweep_point *p, const char *error,
                         halo_sweep_data *d)
{
    halo_sb ax;
    halo_sb_init(&ax);
    for (int a = 0; a < e->naxes; a++) {
        const char *v = halo_sweep_get(p, e->axes[a]);
        halo_sb_printf(&ax, "%s%s=%s", a ? " " : "", e->axes[a], v ? v : "");
    }
    if (e->repeat > 1) {
        halo_sb_printf(&ax, "%srep=%d", e->naxes ? " " : "", p->rep);
    }
    d->fail_key[d->failed] = halo_strdup(p->key);
    d->fail_axes[d->failed] = halo_strdup(ax.buf ? ax.buf : "");
    d->fail_error[d->failed] = halo_strdup(error);
    d->failed++;
    halo_sb_free(&ax);
}

/* The derived columns of t: each row's value against its baseline row, the row that has the
 * baseline's values and the row's `by` values. */
static void derive_columns(const halo_sweep_exp *e, halo_sweep_table *t)
{
    for (int k = 0; k < e->nderives; k++) {
        const halo_sweep_derive *dv = &e->derives[k];
        int dc = e->naxes + e->nmeasures + k;
        int of = halo_sweep_table_col(t, dv->of);
        int *bc = HALO_NEW(int, dv->nbase + 1), *yc = HALO_NEW(int, dv->nby + 1);
        for (int b = 0; b < dv->nbase; b++) {
            bc[b] = halo_sweep_table_col(t, dv->base[b].key);
        }
        for (int b = 0; b < dv->nby; b++) {
            yc[b] = halo_sweep_table_col(t, dv->by[b]);
        }
        for (int r = 0; r < t->nrows; r++) {
            double v = NAN, bv = NAN;
            halo_sweep_is_num(t->rows[r][of], &v);
            for (int s = 0; s < t->nrows; s++) {
                bool match = true;
                for (int b = 0; b < dv->nbase && match; b++) {
                    match = bc[b] >= 0 && strcmp(t->rows[s][bc[b]], dv->base[b].val) == 0;
                }
                for (int b = 0; b < dv->nby && match; b++) {
                    match = yc[b] >= 0 && strcmp(t->rows[s][yc[b]], t->rows[r][yc[b]]) == 0;
                }
                if (match) {
                    halo_sweep_is_num(t->rows[s][of], &bv);
                    break;
                }
            }
            t->rows[r][dc] = num_text(derive_op(dv->op, v, bv));
        }
        halo_free(bc);
        halo_free(yc);
    }
}

int halo_sweep_data_make(const halo_sweep_exp *e, const halo_sweep_table *csv, halo_sweep_data *d)
{
    memset(d, 0, sizeof *d);
    int ck = halo_sweep_table_col(csv, "key"), cs = halo_sweep_table_col(csv, "status");
    int ce = halo_sweep_table_col(csv, "error");
    keyrow *kr = HALO_NEW(keyrow, csv->nrows + 1);
    int nkr = 0;
    for (int r = 0; ck >= 0 && r < csv->nrows; r++) {
        kr[nkr].key = csv->rows[r][ck];
        kr[nkr].row = r;
        nkr++;
    }
    qsort(kr, (size_t)nkr, sizeof *kr, cmp_keyrow);
    int *mcol = HALO_NEW(int, e->nmeasures + 1);
    for (int m = 0; m < e->nmeasures; m++) {
        mcol[m] = halo_sweep_table_col(csv, e->measures[m]);
    }
    /* columns */
    halo_sweep_table *t = &d->t;
    t->ncols = e->naxes + e->nmeasures + e->nderives + 1;
    t->cols = HALO_NEW(char *, t->ncols);
    int c = 0;
    for (int i = 0; i < e->naxes; i++) {
        t->cols[c++] = halo_strdup(e->axes[i]);
    }
    for (int i = 0; i < e->nmeasures; i++) {
        t->cols[c++] = halo_strdup(e->measures[i]);
    }
    for (int i = 0; i < e->nderives; i++) {
        t->cols[c++] = halo_strdup(e->derives[i].name);
    }
    t->cols[c++] = halo_strdup("reps");
    d->fail_key = HALO_NEW(char *, e->npts + 1);
    d->fail_axes = HALO_NEW(char *, e->npts + 1);
    d->fail_error = HALO_NEW(char *, e->npts + 1);
    t->rows = HALO_NEW(char **, e->nconfigs + 1);
    double *sum = HALO_NEW(double, e->nmeasures + 1);
    int *cnt = HALO_NEW(int, e->nmeasures + 1);
    for (int i = 0; i < e->npts;) {
        int j = i, reps = 0;
        memset(sum, 0, (size_t)e->nmeasures * sizeof *sum);
        memset(cnt, 0, (size_t)e->nmeasures * sizeof *cnt);
        for (; j < e->npts && e->pts[j].index == e->pts[i].index; j++) {
            const halo_sweep_point *p = &e->pts[j];
            int r = latest(kr, nkr, p->key);
            if (r < 0) {
                d->missing++;
                continue;
            }
            double secs;
            int csec = halo_sweep_table_col(csv, "seconds");
            if (csec >= 0 && halo_sweep_is_num(csv->rows[r][csec], &secs)) {
                d->seconds += secs;
            }
            if (cs < 0 || strcmp(csv->rows[r][cs], "ok") != 0) {
                note_failure(e, p, ce >= 0 ? csv->rows[r][ce] : "", d);
                continue;
            }
            d->ok++;
            reps++;
            for (int m = 0; m < e->nmeasures; m++) {
                double v;
                if (mcol[m] >= 0 && halo_sweep_is_num(csv->rows[r][mcol[m]], &v)) {
                    sum[m] += v;
                    cnt[m]++;
                }
            }
        }
        if (reps > 0) {
            char **row = HALO_NEW(char *, t->ncols);
            c = 0;
            for (int a = 0; a < e->naxes; a++) {
                const char *v = halo_sweep_get(&e->pts[i], e->axes[a]);
                row[c++] = halo_strdup(v ? v : "");
            }
            for (int m = 0; m < e->nmeasures; m++) {
                row[c++] = num_text(cnt[m] ? sum[m] / cnt[m] : NAN);
            }
            for (int k = 0; k < e->nderives; k++) {
                row[c++] = NULL; /* below */
            }
            char rb[32];
            snprintf(rb, sizeof rb, "%d", reps);
            row[c++] = halo_strdup(rb);
            t->rows[t->nrows++] = row;
        }
        i = j;
    }
    derive_columns(e, t);
    halo_free(sum);
    halo_free(cnt);
    halo_free(mcol);
    halo_free(kr);
    return 0;
}

/* A cell for gnuplot's CSV reader, which does not honour quotes: commas become ';', quotes
 * become '\'', line breaks spaces. */
void halo_sweep_plain(halo_sb *sb, const char *s)
{
    for (; *s; s++) {
        char ch = *s;
        halo_sb_putc(sb, ch == ',' ? ';' : ch == '"' ? '\'' : ch == '\n' || ch == '\r' ? ' ' : ch);
    }
}

void halo_sweep_data_csv(const halo_sweep_data *d, halo_sb *sb)
{
    const halo_sweep_table *t = &d->t;
    for (int c = 0; c < t->ncols; c++) {
        if (c > 0) {
            halo_sb_putc(sb, ',');
        }
        halo_sweep_plain(sb, t->cols[c]);
    }
    halo_sb_putc(sb, '\n');
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            if (c > 0) {
                halo_sb_putc(sb, ',');
            }
            halo_sweep_plain(sb, t->rows[r][c]);
        }
        halo_sb_putc(sb, '\n');
    }
}
