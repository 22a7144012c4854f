/* Sorting int32 arrays such as CSR rows (insertion sort when short, qsort when long). */
#include "core/sort.h"

#include <stdlib.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

void halo_sort_i32(int32_t *a, int64_t n)
{
    if (n > 32) {
        qsort(a, (size_t)n, sizeof *a, cmp_i32);
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t x = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}
