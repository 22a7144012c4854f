/* What the model benchmarks share: the --fanouts list and the parameter tail of the block files
 * that the PyTorch/PyG peers read. */
#ifndef HALO_BENCH_UTIL_H
#define HALO_BENCH_UTIL_H

#include "model/model.h"

#include <stdio.h>

/* Parses "F1,F2,..." (each a whole number >= min) into fanout[] (at most HALO_MAX_LAYERS);
 * *layers gets the count. Returns 0, or -1 on anything else (an empty list included). */
int bench_parse_fanouts(const char *s, long min, int *fanout, int *layers);
/* Appends m's parameters to f: the offset of each of its `layers` layers (int64), the
 * parameter count (int64), then the parameters (float32). */
void bench_write_params(FILE *f, halo_model *m, int layers);

#endif
