/* Sorting int32 arrays such as CSR rows: many short ones, a few long. */
#ifndef HALO_SORT_H
#define HALO_SORT_H

#include <stdint.h>

/* Sorts a[0..n) ascending in place (quicksort, median of three, insertion sort below 24
 * elements; no allocation, no comparison callback). */
void halo_sort_i32(int32_t *a, int64_t n);

/* Sorts a[0..n) of non-negative values below 2^bits (1 <= bits <= 31) ascending with an LSD
 * radix sort through tmp[n]: ceil(bits / 11) passes of equal digit width, so a 20-bit key takes
 * two 10-bit passes (1024 counters to clear per pass, not 2048). Faster than halo_sort_i32 from
 * a few hundred elements. */
void halo_sort_i32_radix(int32_t *a, int64_t n, int bits, int32_t *tmp);

#endif
