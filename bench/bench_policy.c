/* Benchmark of the policy engine: each vector method over 1M elements as a ratio to a plain C
 * loop doing the same work on the same arrays (goal <= 3x), and the cost of a hook call (goal
 * <= 1 us for an empty one). All measured in this run; nothing is asserted. */
#include "core/err.h"
#include "core/mem.h"
#include "core/rng.h"
#include "policy/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N = 1 << 20, K = 1000 };

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static lua_State *L;
static double *A, *B, *OUT;
static int32_t *IDX, *IOUT;
static uint8_t *MASK;
static volatile double sink;

/* Seconds per call of a Lua snippet (the snippet runs `reps` times inside one chunk). */
static double lua_time(const char *body, int reps)
{
    char code[512];
    snprintf(code, sizeof code, "for _ = 1, %d do %s end", reps, body);
    if (luaL_loadstring(L, code) != LUA_OK) {
        fprintf(stderr, "bench_policy: %s\n", lua_tostring(L, -1));
        exit(1);
    }
    lua_gc(L, LUA_GCCOLLECT);
    double best = 1e30;
    for (int t = 0; t < 3; t++) {
        lua_pushvalue(L, -1);
        double t0 = cpu_now();
        if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
            fprintf(stderr, "bench_policy: %s: %s\n", body, lua_tostring(L, -1));
            exit(1);
        }
        double dt = (cpu_now() - t0) / reps;
        best = dt < best ? dt : best;
    }
    lua_pop(L, 1);
    return best;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = A[*(const int32_t *)a], y = A[*(const int32_t *)b];
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return x != y ? (x < y) - (x > y) : (i > j) - (i < j);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The plain C loop for method m: the same work, including allocating the result where the
 * method returns a new array (copy, gather, lt, where, filter). */
static void c_loop(const char *m)
{
    if (strcmp(m, "fill") == 0) {
        for (int i = 0; i < N; i++) {
            OUT[i] = 1.0;
        }
    } else if (strcmp(m, "copy") == 0) {
        double *o = HALO_ALLOC(double, N);
        memcpy(o, A, N * sizeof(double));
        sink = o[N - 1];
        halo_free(o);
    } else if (strcmp(m, "scale") == 0) {
        for (int i = 0; i < N; i++) {
            OUT[i] *= 0.999;
        }
    } else if (strcmp(m, "add") == 0) {
        for (int i = 0; i < N; i++) {
            OUT[i] += B[i];
        }
    } else if (strcmp(m, "add_at") == 0) {
        for (int i = 0; i < N; i++) {
            OUT[IDX[i]] += 1.0;
        }
    } else if (strcmp(m, "scale_at") == 0) {
        for (int i = 0; i < N; i++) {
            OUT[IDX[i]] *= 1.001;
        }
    } else if (strcmp(m, "gather") == 0) {
        double *o = HALO_ALLOC(double, N);
        for (int i = 0; i < N; i++) {
            o[i] = A[IDX[i]];
        }
        sink = o[N - 1];
        halo_free(o);
    } else if (strcmp(m, "lt") == 0) {
        uint8_t *o = HALO_ALLOC(uint8_t, N);
        for (int i = 0; i < N; i++) {
            o[i] = A[i] < 0.5;
        }
        sink = o[N - 1];
        halo_free(o);
    } else if (strcmp(m, "where") == 0) {
        int32_t *o = HALO_ALLOC(int32_t, N);
        int k = 0;
        for (int i = 0; i < N; i++) {
            if (MASK[i]) {
                o[k++] = i;
            }
        }
        sink = k;
        halo_free(o);
    } else if (strcmp(m, "filter") == 0) {
        double *o = HALO_ALLOC(double, N);
        int k = 0;
        for (int i = 0; i < N; i++) {
            if (MASK[i]) {
                o[k++] = A[i];
            }
        }
        sink = k;
        halo_free(o);
    } else if (strcmp(m, "sum") == 0 || strcmp(m, "mean") == 0) {
        double s = 0;
        for (int i = 0; i < N; i++) {
            s += A[i];
        }
        sink = s;
    } else if (strcmp(m, "max") == 0) {
        double s = A[0];
        for (int i = 1; i < N; i++) {
            s = A[i] > s ? A[i] : s;
        }
        sink = s;
    } else if (strcmp(m, "count") == 0) {
        int64_t c = 0;
        for (int i = 0; i < N; i++) {
            c += MASK[i] != 0;
        }
        sink = (double)c;
    } else if (strcmp(m, "topk") == 0) {
        /* reference: partial selection with a sorted array of the best K (insertion) */
        static double best[K];
        int n = 0;
        for (int i = 0; i < N; i++) {
            double v = A[i];
            if (n == K && v <= best[K - 1]) {
                continue;
            }
            int j = n < K ? n++ : K - 1;
            while (j > 0 && best[j - 1] < v) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = v;
        }
        sink = best[0];
    } else if (strcmp(m, "argsort") == 0) {
        for (int i = 0; i < N; i++) {
            IOUT[i] = i;
        }
        qsort(IOUT, N, sizeof(int32_t), cmp_desc);
    } else if (strcmp(m, "unique") == 0) {
        memcpy(OUT, A, N * sizeof(double));
        qsort(OUT, N, sizeof(double), cmp_d);
        int k = 0;
        for (int i = 0; i < N; i++) {
            if (i == 0 || OUT[i] != OUT[k - 1]) {
                OUT[k++] = OUT[i];
            }
        }
        sink = k;
    }
}

static double c_time(const char *m, int reps)
{
    double best = 1e30;
    for (int t = 0; t < 3; t++) {
        double t0 = cpu_now();
        for (int r = 0; r < reps; r++) {
            c_loop(m);
        }
        double dt = (cpu_now() - t0) / reps;
        best = dt < best ? dt : best;
    }
    return best;
}

/* Sets global name to an owned copy of n values. */
static void set_global(const char *name, int type, const void *src, size_t bytes, int64_t n)
{
    halo_policy_array *a = halo_policy_new_array(L, type, n);
    memcpy(a->data, src, bytes);
    lua_setglobal(L, name);
}

static int hook_bench(void)
{
    char path[] = "/tmp/bench_policy_XXXXXX.lua";
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        return 1;
    }
    const char *src = "return { epoch_end = function(ctx) end,\n"
                      "  fanout = function(ctx) return { 10, 25 } end,\n"
                      "  pipeline = function(ctx) return { depth = ctx.epoch % 2, "
                      "sampler_threads = 2 } end }\n";
    if (write(fd, src, strlen(src)) != (ssize_t)strlen(src)) {
        close(fd);
        return 1;
    }
    close(fd);
    halo_policy_opts o = {.path = path, .rank = -1};
    halo_policy *pol;
    double t0 = cpu_now();
    if (halo_policy_open(&o, &pol) < 0) {
        fprintf(stderr, "bench_policy: %s\n", halo_errmsg());
        return 1;
    }
    double open_s = cpu_now() - t0;
    halo_policy_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    const int reps = 200000;
    double best[3] = {1e30, 1e30, 1e30};
    for (int t = 0; t < 3; t++) {
        t0 = cpu_now();
        for (int r = 0; r < reps; r++) {
            halo_policy_epoch_end(pol, &ctx);
        }
        double dt = (cpu_now() - t0) / reps;
        best[0] = dt < best[0] ? dt : best[0];
        int f[8], layers, depth, th;
        t0 = cpu_now();
        for (int r = 0; r < reps; r++) {
            halo_policy_fanout(pol, &ctx, f, 8, &layers);
        }
        dt = (cpu_now() - t0) / reps;
        best[1] = dt < best[1] ? dt : best[1];
        t0 = cpu_now();
        for (int r = 0; r < reps; r++) {
            halo_policy_pipeline(pol, &ctx, &depth, &th);
        }
        dt = (cpu_now() - t0) / reps;
        best[2] = dt < best[2] ? dt : best[2];
    }
    printf("%-34s %8.3f ms\n", "open a policy state", open_s * 1e3);
    printf("%-34s %8.3f us   (goal <= 1 us)\n", "empty hook call (epoch_end)", best[0] * 1e6);
    printf("%-34s %8.3f us\n", "fanout returning {10, 25}", best[1] * 1e6);
    printf("%-34s %8.3f us\n", "pipeline reading ctx, a table", best[2] * 1e6);
    halo_policy_close(pol);
    unlink(path);
    return 0;
}

int main(void)
{
    halo_policy_opts o = {.path = NULL, .rank = -1, .mem_limit = (size_t)1 << 30};
    halo_policy *pol;
    if (halo_policy_open(&o, &pol) < 0) {
        fprintf(stderr, "bench_policy: %s\n", halo_errmsg());
        return 1;
    }
    L = pol->L;
    A = HALO_ALLOC(double, N);
    B = HALO_ALLOC(double, N);
    OUT = HALO_NEW(double, N);
    IDX = HALO_ALLOC(int32_t, N);
    IOUT = HALO_ALLOC(int32_t, N);
    MASK = HALO_ALLOC(uint8_t, N);
    halo_rng r;
    halo_rng_init(&r, 1, HALO_RNG_TEST, 0, 0, 0);
    for (int i = 0; i < N; i++) {
        A[i] = halo_rng_uniform(&r);
        B[i] = halo_rng_uniform(&r);
        IDX[i] = (int32_t)halo_rng_below(&r, N);
        MASK[i] = A[i] < 0.5;
    }
    set_global("A", HALO_PA_F64, A, N * sizeof(double), N);
    set_global("B", HALO_PA_F64, B, N * sizeof(double), N);
    set_global("O", HALO_PA_F64, OUT, N * sizeof(double), N);
    set_global("I", HALO_PA_I32, IDX, N * sizeof(int32_t), N);
    set_global("M", HALO_PA_BOOL, MASK, N, N);
    static const struct {
        const char *name; /* method */
        const char *lua;  /* the call */
        int reps;         /* repetitions */
    } cases[] = {
        {"fill", "O:fill(1.0)", 40},
        {"copy", "A:copy()", 20},
        {"scale", "O:scale(0.999)", 40},
        {"add", "O:add(B)", 40},
        {"add_at", "O:add_at(I, 1.0)", 20},
        {"scale_at", "O:scale_at(I, 1.001)", 20},
        {"gather", "A:gather(I)", 20},
        {"lt", "A:lt(0.5)", 40},
        {"where", "M:where()", 20},
        {"filter", "A:filter(M)", 20},
        {"sum", "A:sum()", 40},
        {"mean", "A:mean()", 40},
        {"max", "A:max()", 40},
        {"count", "M:count()", 40},
        {"topk", "A:topk(1000)", 10},
        {"argsort", "A:argsort(true)", 2},
        {"unique", "A:unique()", 2},
    };
    printf("vector methods over %d float64 elements: Lua method vs plain C loop\n", N);
    printf("%-10s %12s %12s %8s\n", "method", "method ms", "C loop ms", "ratio");
    double worst = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double tl = lua_time(cases[c].lua, cases[c].reps);
        double tc = c_time(cases[c].name, cases[c].reps);
        double ratio = tl / tc;
        printf("%-10s %12.3f %12.3f %7.2fx%s\n", cases[c].name, tl * 1e3, tc * 1e3, ratio,
               ratio > 3 ? "  (above the 3x goal)" : "");
        worst = ratio > worst ? ratio : worst;
    }
    printf("worst ratio %.2fx (goal <= 3x)\n", worst);
    halo_policy_close(pol);
    halo_free(A);
    halo_free(B);
    halo_free(OUT);
    halo_free(IDX);
    halo_free(IOUT);
    halo_free(MASK);
    return hook_bench();
}
