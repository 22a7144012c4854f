/* Sorting int32 arrays such as CSR rows (many short ones, a few long), and the sorts and medians
 * of int64 and double arrays the rest of the runtime takes. */
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

/* Sorts a[0..n) ascending in place (qsort). */
void halo_sort_i64(int64_t *a, int64_t n);
void halo_sort_f64(double *a, int64_t n);

/* The median of v[0..n) (n >= 1; the mean of the middle two when n is even); sorts v in place. */
double halo_median_f64(double *v, int64_t n);

#endif
