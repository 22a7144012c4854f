/* Training checkpoints: weights, Adam state, epoch and RNG seed, tagged with a hash of the
 * configuration; written atomically so a crash leaves the previous checkpoint whole. */
#ifndef HALO_CHECKPOINT_H
#define HALO_CHECKPOINT_H

#include <stdint.h>

/* A checkpoint's contents. The float arrays are the caller's (nparams floats each). */
typedef struct halo_checkpoint {
    int epoch;            /* epochs completed */
    int64_t step;         /* Adam steps taken */
    uint64_t seed;        /* the run's seed: every RNG stream is keyed by it (invariant 1) */
    uint64_t config_hash; /* halo_config_hash of everything that changes the result */
    int64_t nparams;      /* parameter count */
    float *params;        /* [nparams] weights */
    float *adam_m;        /* [nparams] first moments */
    float *adam_v;        /* [nparams] second moments */
    const char *config;   /* the hashed text ("key=value ..."), or NULL: a refused resume names
                             the first setting that differs */
} halo_checkpoint;

/* Writes DIR/{meta.json,params.f32,adam_m.f32,adam_v.f32} atomically (replacing DIR). */
int halo_checkpoint_write(const char *dir, const halo_checkpoint *ck);
/* Reads a checkpoint into ck's buffers (allocated by the caller for ck->nparams floats). Fails
 * naming the file when it is corrupt, and naming the mismatch when its configuration hash or
 * parameter count differs from ck->config_hash / ck->nparams. */
int halo_checkpoint_read(const char *dir, halo_checkpoint *ck);

/* FNV-1a over a configuration string (the caller lists every setting that changes results). */
uint64_t halo_config_hash(const char *config);

#endif
