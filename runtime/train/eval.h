/* Validation and test accuracy (private to runtime/train): called by the epoch loop, uses only
 * the shared state of train_internal.h and the row exchange of rows.c. */
#ifndef HALO_TRAIN_EVAL_H
#define HALO_TRAIN_EVAL_H

#include "train/train_internal.h"

/* Validation and test accuracy over all ranks (collective). epoch keys the sampled draws. */
int halo_train_eval_sampled(train_ctx *t, int epoch, double *val_acc, double *test_acc);
/* The same by layer-wise full-neighbour inference (collective). */
int halo_train_eval_full(train_ctx *t, double *val_acc, double *test_acc);

#endif
