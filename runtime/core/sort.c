/* Sorting int32 arrays such as CSR rows: an in-place quicksort (median of three, insertion sort
 * below 24 elements) and an LSD radix sort for long rows of bounded keys. */
#include "core/sort.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void halo_sort_i64(int64_t *a, int64_t n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_i64);
}

void halo_sort_f64(double *a, int64_t n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_f64);
}

double halo_median_f64(double *v, int64_t n)
{
    halo_sort_f64(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void halo_sort_i32(int32_t *a, int64_t n)
{
    while (n > 24) {
        int32_t x = a[0], y = a[n / 2], z = a[n - 1];
        int32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) {
                i++;
            }
            while (a[j] > pivot) {
                j--;
            }
            if (i >= j) {
                break;
            }
            int32_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j+1, n): recurse into the smaller part, loop on the larger. */
        int64_t left = j + 1, right = n - (j + 1);
        if (left < right) {
            halo_sort_i32(a, left);
            a += left;
            n = right;
        } else {
            halo_sort_i32(a + left, right);
            n = left;
        }
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t t = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1] > t) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = t;
    }
}

void halo_sort_i32_radix(int32_t *a, int64_t n, int bits, int32_t *tmp)
{
    int64_t count[2048];
    int passes = (bits + 10) / 11;
    int width = (bits + passes - 1) / passes;
    uint32_t digits = 1u << width, dmask = digits - 1;
    int32_t *from = a, *to = tmp;
    for (int shift = 0; shift < bits; shift += width) {
        memset(count, 0, digits * sizeof count[0]);
        for (int64_t i = 0; i < n; i++) {
            count[((uint32_t)from[i] >> shift) & dmask]++;
        }
        int64_t sum = 0;
        for (uint32_t d = 0; d < digits; d++) {
            int64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            to[count[((uint32_t)from[i] >> shift) & dmask]++] = from[i];
        }
        int32_t *t = from;
        from = to;
        to = t;
    }
    if (from != a) {
        memcpy(a, from, (size_t)n * sizeof *a);
    }
}
