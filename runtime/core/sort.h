/* Sorting int32 arrays such as CSR rows: many short ones, a few long. */
#ifndef HALO_SORT_H
#define HALO_SORT_H

#include <stdint.h>

/* Sorts a[0..n) ascending: insertion sort for short arrays, qsort for long ones. */
void halo_sort_i32(int32_t *a, int64_t n);

#endif
