/* Which of the paper's ranges a figure's panel draws, and where on its y axis: a range of a
 * column the panel plots as it is, or a range of a derived column drawn on the panel that plots
 * the column it is derived from, through the derivation's inverse at its baseline's value. */
#include "sweep/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The derived column named name, NULL when it is not one. */
static const halo_sweep_derive *derive_of(const halo_sweep_exp *e, const char *name)
{
    for (int i = 0; i < e->nderives; i++) {
        if (strcmp(e->derives[i].name, name) == 0) {
            return &e->derives[i];
        }
    }
    return NULL;
}

/* Whether panel pl plots col on its y axis, where a band can stand for a paper's total: line,
 * bars or scatter (a stacked panel's parts are not a total; a heatmap has no y values). */
static bool plots_y(const halo_sweep_plot *pl, const char *col)
{
    if (pl->kind == HALO_SWEEP_HEATMAP || pl->kind == HALO_SWEEP_STACKED) {
        return false;
    }
    for (int k = 0; k < pl->ny; k++) {
        if (strcmp(pl->y[k], col) == 0) {
            return true;
        }
    }
    return false;
}

/* The value of dv->of in the one data row that is dv's baseline; false when there is no such
 * row or several (a baseline that varies over another axis has no single value to draw at). */
static bool baseline_value(const halo_sweep_data *d, const halo_sweep_derive *dv, double *out)
{
    const halo_sweep_table *t = &d->t;
    int of = halo_sweep_table_col(t, dv->of), found = 0;
    for (int r = 0; of >= 0 && r < t->nrows; r++) {
        bool match = true;
        for (int b = 0; b < dv->nbase && match; b++) {
            int c = halo_sweep_table_col(t, dv->base[b].key);
            match = c >= 0 && strcmp(t->rows[r][c], dv->base[b].val) == 0;
        }
        if (match) {
            found += halo_sweep_is_num(t->rows[r][of], out) ? 1 : 2;
        }
    }
    return found == 1 && isfinite(*out);
}

/* The interval of the measure whose derived value (op at baseline b) lies in [lo, hi]:
 * baseline/value v = b/r, value/baseline v = b r, improvement v = b (1 - r/100), difference
 * v = b + r. False when it has no finite value (a speedup range through 0). */
static bool invert(const char *op, double b, double lo, double hi, double *vlo, double *vhi)
{
    double u, w;
    if (strcmp(op, "baseline/value") == 0) {
        if (lo <= 0) {
            return false;
        }
        u = b / lo;
        w = b / hi;
    } else if (strcmp(op, "value/baseline") == 0) {
        u = b * lo;
        w = b * hi;
    } else if (strcmp(op, "improvement") == 0) {
        u = b * (1 - lo / 100);
        w = b * (1 - hi / 100);
    } else {
        u = b + lo;
        w = b + hi;
    }
    *vlo = u < w ? u : w;
    *vhi = u < w ? w : u;
    return isfinite(*vlo) && isfinite(*vhi);
}

/* Whether panel pl draws range r, and the band it draws into *b. */
static bool band_of(const halo_sweep_exp *e, const halo_sweep_data *d, const halo_sweep_plot *pl,
                    const halo_sweep_prange *r, halo_sweep_band *b)
{
    b->r = r;
    b->lo = r->lo;
    b->hi = r->hi;
    b->over[0] = '\0';
    bool drawn =
        pl->kind == HALO_SWEEP_HEATMAP ? strcmp(pl->z, r->metric) == 0 : plots_y(pl, r->metric);
    const halo_sweep_derive *dv = derive_of(e, r->metric);
    double base;
    if (!drawn && dv != NULL && plots_y(pl, dv->of) && baseline_value(d, dv, &base) &&
        invert(dv->op, base, r->lo, r->hi, &b->lo, &b->hi)) {
        /* "over distdgl": the baseline's values, as the legend shows them */
        size_t n = 0;
        for (int k = 0; k < dv->nbase && n + 2 < sizeof b->over; k++) {
            char lb[128];
            halo_sweep_label(dv->base[k].val, lb, sizeof lb);
            n += (size_t)snprintf(b->over + n, sizeof b->over - n, "%s%s", k ? " " : "", lb);
        }
        drawn = true;
    }
    /* a band from 0 or below has no place on a log axis */
    return drawn && !(pl->logy && pl->kind != HALO_SWEEP_HEATMAP && b->lo <= 0);
}

int halo_sweep_plot_bands(const halo_sweep_exp *e, const halo_sweep_data *d,
                          const halo_sweep_plot *pl, halo_sweep_band *out, int max)
{
    int n = 0;
    for (int r = 0; d->t.nrows > 0 && r < e->npranges && n < max; r++) {
        if (band_of(e, d, pl, &e->pranges[r], &out[n])) {
            n++;
        }
    }
    return n;
}

bool halo_sweep_plot_draws_range(const halo_sweep_exp *e, const halo_sweep_data *d,
                                 const halo_sweep_prange *r)
{
    halo_sweep_band b;
    for (int i = 0; d->t.nrows > 0 && i < e->nplots; i++) {
        if (band_of(e, d, &e->plots[i], r, &b)) {
            return true;
        }
    }
    return false;
}
