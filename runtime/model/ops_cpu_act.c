/* CPU back end, row-wise operations: zero and copy of rows, bias + ReLU + dropout and its
 * backward, column sums, the softmax cross-entropy and Adam. */
#include "model/ops_cpu_impl.h"

#include "core/err.h"
#include "core/rng.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- row-wise kernels */

/* Arguments of the row-wise zero and copy tasks. */
typedef struct zero_args {
    float *x;          /* zero: rows to clear */
    int64_t rows, per; /* rows, rows per task */
    int cols, ld;      /* columns; stride of x or dst */
    float *dst;        /* copy: destination */
    const float *src;  /* copy: source */
    int ld_src;        /* copy: source stride */
} zero_args;

static void zero_task(void *arg, int64_t t)
{
    zero_args *a = arg;
    int64_t r1 = (t + 1) * a->per < a->rows ? (t + 1) * a->per : a->rows;
    for (int64_t r = t * a->per; r < r1; r++) {
        memset(a->x + r * a->ld, 0, (size_t)a->cols * sizeof(float));
    }
}

int halo_ops_cpu_zero(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld)
{
    zero_args a = {
        .x = x, .rows = rows, .per = halo_ops_cpu_rows_per_task(cols), .cols = cols, .ld = ld};
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, a.per), zero_task, &a);
    return 0;
}

static void copy_task(void *arg, int64_t t)
{
    zero_args *a = arg;
    int64_t r1 = (t + 1) * a->per < a->rows ? (t + 1) * a->per : a->rows;
    for (int64_t r = t * a->per; r < r1; r++) {
        memcpy(a->dst + r * a->ld, a->src + r * a->ld_src, (size_t)a->cols * sizeof(float));
    }
}

int halo_ops_cpu_copy_rows(halo_ops_ctx *ctx, float *dst, int ld_dst, const float *src, int ld_src,
                           int64_t rows, int cols)
{
    zero_args a = {.dst = dst,
                   .ld = ld_dst,
                   .src = src,
                   .ld_src = ld_src,
                   .rows = rows,
                   .per = halo_ops_cpu_rows_per_task(cols),
                   .cols = cols};
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, a.per), copy_task, &a);
    return 0;
}

/* ---------------------------------------------------------------- bias, ReLU, dropout */

/* Bias, ReLU and dropout of a range of rows. The keep test of ops.h's contract,
 * (halo_mix64(row_key ^ halo_mix64(j + 1)) >> 11) >= threshold, with the column half taken from
 * a table computed once per call. */
CPU_HOT static void act_rows(const act_args *a, int64_t r0, int64_t r1)
{
    int cols = a->cols;
    for (int64_t r = r0; r < r1; r++) {
        float *restrict x = a->x + r * a->ld;
        if (a->b != NULL) {
            const float *restrict b = a->b;
            for (int j = 0; j < cols; j++) {
                x[j] += b[j];
            }
        }
        if (!a->relu) {
            continue;
        }
        for (int j = 0; j < cols; j++) {
            x[j] = x[j] > 0.0f ? x[j] : 0.0f;
        }
        if (a->threshold > 0) {
            const halo_ops_dropout *d = a->drop;
            const uint64_t *restrict cm = a->col_mix;
            uint64_t key = halo_hash5(d->seed, HALO_RNG_DROPOUT, d->step, d->layer,
                                      (uint64_t)(int64_t)d->gid[r]);
            uint64_t thr = a->threshold;
            float scale = a->scale;
            for (int j = 0; j < cols; j++) {
                uint64_t z = (key ^ cm[j]) + 0x9e3779b97f4a7c15ULL;
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
                z ^= z >> 31;
                x[j] = (z >> 11) >= thr ? x[j] * scale : 0.0f;
            }
        }
    }
}

void halo_ops_cpu_act_apply(const act_args *a, int64_t r0, int64_t r1)
{
    act_rows(a, r0, r1);
}

static void act_task(void *arg, int64_t t)
{
    const act_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    act_rows(a, r0, r1);
}

/* p * 2^53 as an integer threshold for the 53-bit uniform draw (0: no dropout). */
static uint64_t dropout_threshold(float p)
{
    if (!(p > 0.0f)) {
        return 0;
    }
    return (uint64_t)((double)p * 9007199254740992.0);
}

/* The arguments of bias_act on x (the dropout's column table in the context's scratch). */
act_args halo_ops_cpu_act_setup(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                                const float *b, int relu, const halo_ops_dropout *drop)
{
    act_args a = {.x = x,
                  .rows = rows,
                  .per = halo_ops_cpu_rows_per_task(cols),
                  .cols = cols,
                  .ld = ld,
                  .b = b,
                  .relu = relu,
                  .drop = drop};
    if (relu && drop != NULL && drop->p > 0.0f) {
        a.threshold = dropout_threshold(drop->p);
        a.scale = 1.0f / (1.0f - drop->p);
        uint64_t *cm = halo_ops_cpu_scratch(ctx, (size_t)cols * sizeof(uint64_t));
        for (int j = 0; j < cols; j++) {
            cm[j] = halo_mix64((uint64_t)j + 1);
        }
        a.col_mix = cm;
    }
    return a;
}

int halo_ops_cpu_bias_act(halo_ops_ctx *ctx, float *x, int64_t rows, int cols, int ld,
                          const float *b, int relu, const halo_ops_dropout *drop)
{
    act_args a = halo_ops_cpu_act_setup(ctx, x, rows, cols, ld, b, relu, drop);
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, a.per), act_task, &a);
    return 0;
}

CPU_HOT static void act_back_rows(const act_args *a, int64_t r0, int64_t r1)
{
    int cols = a->cols;
    float s = a->scale;
    for (int64_t r = r0; r < r1; r++) {
        float *restrict dy = a->x + r * a->ld;
        const float *restrict y = a->y + r * a->ld;
        for (int j = 0; j < cols; j++) {
            dy[j] = y[j] > 0.0f ? dy[j] * s : 0.0f;
        }
    }
}

static void act_back_task(void *arg, int64_t t)
{
    const act_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    act_back_rows(a, r0, r1);
}

/* act_backward with the column sums: chunk t of CPU_SUM_ROWS rows gets its gradient rows and
 * their partial sums (the same additions, in the same order, as colsum_task on the result). */
typedef struct act_sum_args {
    act_args act;   /* the act_backward */
    float *partial; /* [chunks x cols] */
} act_sum_args;

CPU_HOT static void act_back_sum_task(void *arg, int64_t t)
{
    const act_sum_args *as = arg;
    const act_args *a = &as->act;
    int64_t r0 = t * CPU_SUM_ROWS;
    int64_t r1 = r0 + CPU_SUM_ROWS < a->rows ? r0 + CPU_SUM_ROWS : a->rows;
    int cols = a->cols;
    float s = a->scale;
    float *restrict p = as->partial + t * cols;
    for (int j = 0; j < cols; j++) {
        p[j] = 0.0f;
    }
    for (int64_t r = r0; r < r1; r++) {
        float *restrict dy = a->x + r * a->ld;
        const float *restrict y = a->y + r * a->ld;
        for (int j = 0; j < cols; j++) {
            float v = y[j] > 0.0f ? dy[j] * s : 0.0f;
            dy[j] = v;
            p[j] += v;
        }
    }
}

/* db = the partials of `chunks` chunks added in chunk order. */
void halo_ops_cpu_colsum_reduce(const float *partial, int64_t chunks, int cols, float *db)
{
    for (int j = 0; j < cols; j++) {
        db[j] = 0.0f;
    }
    for (int64_t c = 0; c < chunks; c++) {
        for (int j = 0; j < cols; j++) {
            db[j] += partial[c * cols + j];
        }
    }
}

int halo_ops_cpu_act_backward(halo_ops_ctx *ctx, float *dy, const float *y, int64_t rows, int cols,
                              int ld, float p, float *db)
{
    act_args a = {.x = dy,
                  .y = y,
                  .rows = rows,
                  .per = halo_ops_cpu_rows_per_task(cols),
                  .cols = cols,
                  .ld = ld,
                  .scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f};
    if (db == NULL) {
        halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, a.per), act_back_task, &a);
        return 0;
    }
    int64_t chunks = halo_ops_cpu_ntasks(rows, CPU_SUM_ROWS);
    act_sum_args as = {.act = a};
    as.partial =
        halo_ops_cpu_scratch(ctx, (size_t)(chunks > 0 ? chunks : 1) * cols * sizeof(float));
    halo_ops_cpu_pool_run(&ctx->pool, chunks, act_back_sum_task, &as);
    halo_ops_cpu_colsum_reduce(as.partial, chunks, cols, db);
    return 0;
}

/* Column sums in fixed chunks of CPU_SUM_ROWS rows: partial sums per chunk (in parallel), then
 * the partials added in chunk order. */
typedef struct colsum_args {
    const float *dy; /* rows x cols, stride ld */
    int64_t rows;    /* rows */
    int cols, ld;    /* columns and stride */
    float *partial;  /* [chunks x cols] */
} colsum_args;

CPU_HOT static void colsum_task(void *arg, int64_t t)
{
    const colsum_args *a = arg;
    int64_t r0 = t * CPU_SUM_ROWS;
    int64_t r1 = r0 + CPU_SUM_ROWS < a->rows ? r0 + CPU_SUM_ROWS : a->rows;
    float *restrict p = a->partial + t * a->cols;
    for (int j = 0; j < a->cols; j++) {
        p[j] = 0.0f;
    }
    for (int64_t r = r0; r < r1; r++) {
        const float *restrict x = a->dy + r * a->ld;
        for (int j = 0; j < a->cols; j++) {
            p[j] += x[j];
        }
    }
}

int halo_ops_cpu_col_sum(halo_ops_ctx *ctx, const float *dy, int64_t rows, int cols, int ld,
                         float *db)
{
    int64_t chunks = halo_ops_cpu_ntasks(rows, CPU_SUM_ROWS);
    colsum_args a = {.dy = dy, .rows = rows, .cols = cols, .ld = ld};
    a.partial = halo_ops_cpu_scratch(ctx, (size_t)(chunks > 0 ? chunks : 1) * cols * sizeof(float));
    halo_ops_cpu_pool_run(&ctx->pool, chunks, colsum_task, &a);
    halo_ops_cpu_colsum_reduce(a.partial, chunks, cols, db);
    return 0;
}

/* ---------------------------------------------------------------- loss */

/* Arguments of the softmax cross-entropy tasks (see halo_ops.softmax_xent). */
typedef struct xent_args {
    const float *x;        /* logits [rows x classes] */
    int32_t rows;          /* seeds */
    int classes;           /* columns */
    const int32_t *labels; /* [rows] or NULL */
    float scale;           /* gradient factor (1 / seeds) */
    float *dx, *row_loss;  /* outputs (dx may be NULL) */
    int32_t *pred;         /* arg-max per row or NULL */
    int64_t per;           /* rows per task */
} xent_args;

static void xent_task(void *arg, int64_t t)
{
    const xent_args *a = arg;
    int64_t r0 = t * a->per;
    int64_t r1 = r0 + a->per < a->rows ? r0 + a->per : a->rows;
    int c = a->classes;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = a->x + r * c;
        float mx = x[0];
        int32_t arg_max = 0;
        for (int j = 1; j < c; j++) {
            if (x[j] > mx) {
                mx = x[j];
                arg_max = j;
            }
        }
        if (a->pred != NULL) {
            a->pred[r] = arg_max;
        }
        if (a->labels == NULL) {
            continue;
        }
        float sum = 0.0f;
        for (int j = 0; j < c; j++) {
            sum += expf(x[j] - mx);
        }
        /* sum >= 1: the arg-max term contributes exp(0). */
        // cppcheck-suppress invalidFunctionArg
        float lse = mx + logf(sum);
        int32_t y = a->labels[r];
        if (a->row_loss != NULL) {
            a->row_loss[r] = lse - x[y];
        }
        if (a->dx != NULL) {
            float *d = a->dx + r * c;
            for (int j = 0; j < c; j++) {
                d[j] = (expf(x[j] - lse) - (j == y ? 1.0f : 0.0f)) * a->scale;
            }
        }
    }
}

int halo_ops_cpu_softmax_xent(halo_ops_ctx *ctx, const float *x, int32_t rows, int classes,
                              const int32_t *labels, float scale, float *dx, float *row_loss,
                              int32_t *pred)
{
    if (labels != NULL) {
        for (int32_t r = 0; r < rows; r++) {
            if (labels[r] < 0 || labels[r] >= classes) {
                return halo_errorf(HALO_EINPUT, "model: label %d of seed %d is outside [0, %d)",
                                   labels[r], r, classes);
            }
        }
    }
    xent_args a = {.x = x,
                   .rows = rows,
                   .classes = classes,
                   .labels = labels,
                   .scale = scale,
                   .dx = dx,
                   .row_loss = row_loss,
                   .pred = pred,
                   .per = halo_ops_cpu_rows_per_task(classes)};
    halo_ops_cpu_pool_run(&ctx->pool, halo_ops_cpu_ntasks(rows, a.per), xent_task, &a);
    return 0;
}

/* ---------------------------------------------------------------- Adam */

/* Arguments of the Adam tasks. */
typedef struct adam_args {
    float *p;                  /* parameters */
    const float *g;            /* gradients */
    float *m, *v;              /* moments */
    size_t n;                  /* count */
    float b1, b2, eps, wd, gs; /* betas, epsilon, weight decay, gradient scale */
    float step_size, bc2_sqrt; /* lr / (1 - b1^t), sqrt(1 - b2^t) */
} adam_args;

#define ADAM_CHUNK 16384

CPU_HOT static void adam_task(void *arg, int64_t t)
{
    const adam_args *a = arg;
    size_t i0 = (size_t)t * ADAM_CHUNK;
    size_t i1 = i0 + ADAM_CHUNK < a->n ? i0 + ADAM_CHUNK : a->n;
    for (size_t i = i0; i < i1; i++) {
        float g = a->g[i] * a->gs + a->wd * a->p[i];
        float m = a->b1 * a->m[i] + (1.0f - a->b1) * g;
        float v = a->b2 * a->v[i] + (1.0f - a->b2) * g * g;
        a->m[i] = m;
        a->v[i] = v;
        a->p[i] -= a->step_size * m / (sqrtf(v) / a->bc2_sqrt + a->eps);
    }
}

int halo_ops_cpu_adam(halo_ops_ctx *ctx, float *p, const float *g, float *m, float *v, size_t n,
                      const halo_ops_adam *hp)
{
    adam_args a = {.p = p,
                   .g = g,
                   .m = m,
                   .v = v,
                   .n = n,
                   .b1 = hp->beta1,
                   .b2 = hp->beta2,
                   .eps = hp->eps,
                   .wd = hp->weight_decay,
                   .gs = hp->grad_scale};
    a.step_size = (float)(hp->lr / (1.0 - pow(hp->beta1, (double)hp->t)));
    a.bc2_sqrt = (float)sqrt(1.0 - pow(hp->beta2, (double)hp->t));
    halo_ops_cpu_pool_run(&ctx->pool, (int64_t)((n + ADAM_CHUNK - 1) / ADAM_CHUNK), adam_task, &a);
    return 0;
}
