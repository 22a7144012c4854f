/* Double-precision pieces shared by the model tests' references: random inputs keyed by a test
 * stream, dropout as specified in model/ops.h, softmax cross-entropy, relative error. */
#ifndef HALO_TEST_REF_H
#define HALO_TEST_REF_H

#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

/* A model configuration: the defaults with these sizes, dropout, threads and seed. */
void test_model_config(halo_model_config *cfg, int layers, int in, int hidden, int classes,
                       float dropout, int threads, uint64_t seed);
/* n floats uniform in [-scale, scale] from test stream (seed, key) (halo_free). */
float *test_random_floats(uint64_t seed, size_t n, double scale, uint64_t key);
/* n labels uniform in [0, classes) from test stream (seed, key) (halo_free). */
int32_t *test_random_labels(uint64_t seed, int32_t n, int classes, uint64_t key);
/* Dropout as specified in ops.h: element j of the row of global id gid is kept iff draw j+1 of
 * stream (seed, DROPOUT, step, layer, gid) is >= p. */
int test_ref_keep(uint64_t seed, uint64_t step, int layer, int32_t gid, int j, double p);
/* ReLU then dropout (rate p, 0: none; kept values scaled by 1 / (1 - p)) of value s, element j
 * of the row of gid in layer `layer`. */
double test_ref_relu_dropout(double s, uint64_t seed, uint64_t step, int layer, int32_t gid, int j,
                             double p);
/* The last layer's output h (n rows of c logits, malloc'd; freed here): copied into logits when
 * not NULL; returns the mean softmax cross-entropy against labels. */
double test_ref_output(double *h, int32_t n, int c, const int32_t *labels, double *logits);
/* Mean softmax cross-entropy of the n rows of h (c logits each) against labels. */
double test_ref_xent(const double *h, int32_t n, int c, const int32_t *labels);
/* A scalar function of a vector x (everything else it reads in ctx). */
typedef double (*test_fn)(void *ctx, const double *x);
/* Central differences fd[i] = (f(x + h e_i) - f(x - h e_i)) / 2h for i < n; x is changed one
 * entry at a time and restored. */
void test_central_diff(test_fn f, void *ctx, double *x, size_t n, double h, double *fd);
/* Largest |a - b| / (|b| + floor) over n values, where floor = rel_floor * max |b|; at (when
 * not NULL) gets the index of the worst. */
double test_max_rel_err(const float *a, const double *b, size_t n, double rel_floor, size_t *at);

#endif
