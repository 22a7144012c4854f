/* Unit tests of runtime/core/sort: both sorts against qsort on random, sorted, reversed and
 * constant arrays of every size around the insertion-sort cut-off and a few large ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/mem.h"
#include "core/rng.h"
#include "core/sort.h"

#include <stdbool.h>

#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Fills a[n] in one of four shapes with values below 2^bits. */
static void fill(int32_t *a, int64_t n, int shape, int bits, halo_rng *r)
{
    uint64_t lim = (uint64_t)1 << bits;
    for (int64_t i = 0; i < n; i++) {
        switch (shape) {
        case 0: a[i] = (int32_t)halo_rng_below(r, lim); break;           /* random */
        case 1: a[i] = (int32_t)((uint64_t)i % lim); break;               /* sorted (cycles) */
        case 2: a[i] = (int32_t)((uint64_t)(n - i) % lim); break;         /* reversed */
        default: a[i] = (int32_t)(lim / 2); break;                        /* constant */
        }
    }
}

static void check_sizes(bool radix)
{
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, radix, 0, 0);
    static const int64_t sizes[] = {0, 1, 2, 3, 23, 24, 25, 26, 47, 100, 255, 256, 257, 1000,
                                    4099, 100003};
    static const int bitsv[] = {1, 3, 10, 11, 20, 22, 31};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        int32_t *a = HALO_ALLOC(int32_t, n + 1), *ref = HALO_ALLOC(int32_t, n + 1),
                *tmp = HALO_ALLOC(int32_t, n + 1);
        for (int shape = 0; shape < 4; shape++) {
            for (size_t bi = 0; bi < sizeof bitsv / sizeof bitsv[0]; bi++) {
                fill(a, n, shape, bitsv[bi], &r);
                memcpy(ref, a, (size_t)n * sizeof *a);
                qsort(ref, (size_t)n, sizeof *ref, cmp_i32);
                if (radix) {
                    halo_sort_i32_radix(a, n, bitsv[bi], tmp);
                } else {
                    halo_sort_i32(a, n);
                }
                if (memcmp(a, ref, (size_t)n * sizeof *a) != 0) {
                    fail_msg("%s: n %lld shape %d bits %d: differs from qsort",
                             radix ? "radix" : "quicksort", (long long)n, shape, bitsv[bi]);
                }
            }
        }
        halo_free(tmp);
        halo_free(ref);
        halo_free(a);
    }
}

static void quicksort_matches_qsort(void **state)
{
    (void)state;
    check_sizes(false);
}

static void radix_sort_matches_qsort(void **state)
{
    (void)state;
    check_sizes(true);
}

static void quicksort_takes_negative_values(void **state)
{
    (void)state;
    int32_t a[40], ref[40];
    for (int i = 0; i < 40; i++) {
        a[i] = ref[i] = (i * 7919) % 41 - 20 + (i % 3 == 0 ? INT32_MIN / 2 : 0);
    }
    a[5] = ref[5] = INT32_MIN;
    a[9] = ref[9] = INT32_MAX;
    qsort(ref, 40, sizeof *ref, cmp_i32);
    halo_sort_i32(a, 40);
    assert_memory_equal(a, ref, sizeof a);
}

static void int64_and_double_sorts_order_ascending(void **state)
{
    (void)state;
    int64_t a[6] = {5, -3, INT64_MAX, 0, INT64_MIN, 5};
    const int64_t want[6] = {INT64_MIN, -3, 0, 5, 5, INT64_MAX};
    halo_sort_i64(a, 6);
    assert_memory_equal(a, want, sizeof a);
    double d[5] = {2.5, -1, 1e300, 0, -1e-300};
    halo_sort_f64(d, 5);
    for (int i = 1; i < 5; i++) {
        assert_true(d[i - 1] <= d[i]);
    }
    assert_true(d[0] == -1 && d[4] == 1e300);
}

static void median_takes_the_middle_or_the_mean_of_the_middle_two(void **state)
{
    (void)state;
    double odd[5] = {9, 1, 7, 3, 5};
    assert_true(halo_median_f64(odd, 5) == 5);
    double even[4] = {10, 1, 4, 2};
    assert_true(halo_median_f64(even, 4) == 3);
    double one[1] = {-2};
    assert_true(halo_median_f64(one, 1) == -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quicksort_matches_qsort),
        cmocka_unit_test(radix_sort_matches_qsort),
        cmocka_unit_test(quicksort_takes_negative_values),
        cmocka_unit_test(int64_and_double_sorts_order_ascending),
        cmocka_unit_test(median_takes_the_middle_or_the_mean_of_the_middle_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
