/* The local feature gather (halo_store_gather): every path gives out[i] = row ids[i] - base,
 * whether the output is small (plain copies), large enough for non-temporal stores (16 MiB and
 * more, whole-cache-line rows, aligned output) or large but unaligned or of odd row sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/mem.h"
#include "core/rng.h"
#include "store/store.h"

#include <string.h>

/* Gathers n random rows of dim floats from a table of `rows` rows (numbered from base) into an
 * output placed `shift` floats past a 64-byte boundary, and checks every value and that the
 * floats just before and after the output are untouched. */
static void check_gather(int dim, int64_t rows, int64_t n, int shift, int64_t base)
{
    float *feat = HALO_ALLOC(float, rows * dim);
    for (int64_t i = 0; i < rows * dim; i++) {
        feat[i] = (float)i;
    }
    int32_t *ids = HALO_ALLOC(int32_t, n);
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, (uint64_t)dim, (uint64_t)n, 0);
    for (int64_t i = 0; i < n; i++) {
        ids[i] = (int32_t)(base + (int64_t)halo_rng_below(&r, (uint64_t)rows));
    }
    size_t len = (size_t)n * dim + 32;
    char *mem = halo_malloc(len * sizeof(float) + 64);
    float *buf = (float *)(void *)(mem + (64 - (uintptr_t)mem % 64) % 64);
    for (size_t i = 0; i < len; i++) {
        buf[i] = -1.0f;
    }
    float *out = buf + 16 + shift; /* 16 floats: one cache line of guard before */
    halo_store_gather(feat, base, dim, ids, n, out);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *row = feat + (ids[i] - base) * dim;
        bad += memcmp(out + i * dim, row, (size_t)dim * sizeof(float)) != 0;
    }
    assert_int_equal(bad, 0);
    assert_true(out[-1] == -1.0f);
    assert_true(out[n * dim] == -1.0f);
    halo_free(mem);
    halo_free(ids);
    halo_free(feat);
}

static void gather_small_output(void **state)
{
    (void)state;
    check_gather(128, 1000, 3000, 0, 0);
    check_gather(20, 1000, 3000, 1, 500); /* 80-byte rows, offset ids */
    check_gather(1, 10, 5, 0, 0);
    check_gather(128, 10, 0, 0, 0); /* nothing to gather */
}

static void gather_large_output_streams(void **state)
{
    (void)state;
    /* 40000 rows of 512 B: 20 MiB, over the non-temporal threshold */
    check_gather(128, 2048, 40000, 0, 100);
    check_gather(256, 512, 20000, 4, 0); /* 1 KiB rows, output 16-byte aligned */
}

static void gather_large_output_unaligned_or_odd_rows(void **state)
{
    (void)state;
    check_gather(128, 2048, 40000, 1, 0); /* output 4 bytes past a line: plain copies */
    check_gather(100, 2048, 50000, 0, 0); /* 400-byte rows, not whole lines */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_small_output),
        cmocka_unit_test(gather_large_output_streams),
        cmocka_unit_test(gather_large_output_unaligned_or_odd_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
