/* Counter-based random numbers: every draw is a pure function of (seed, purpose, keys, counter). */
#ifndef HALO_RNG_H
#define HALO_RNG_H

#include <math.h>
#include <stdint.h>

/* What a stream is for; part of the key so that two purposes never share draws. */
enum {
    HALO_RNG_GEN_EDGES = 1, /* generator edge stream */
    HALO_RNG_GEN_FEAT,      /* generator features */
    HALO_RNG_GEN_LABEL,     /* generator labels / classes */
    HALO_RNG_SPLIT,         /* train/valid/test split */
    HALO_RNG_PERMUTE,       /* node-id permutation */
    HALO_RNG_PARTITION,     /* random / streaming partitioners, METIS seed */
    HALO_RNG_SHUFFLE,       /* per-epoch seed shuffle */
    HALO_RNG_SAMPLE,        /* neighbour sampling */
    HALO_RNG_DROPOUT,       /* dropout masks */
    HALO_RNG_INIT,          /* weight initialisation */
    HALO_RNG_POLICY,        /* draws made on behalf of policies */
    HALO_RNG_TEST,          /* tests and benchmarks */
    HALO_RNG_SIM_JITTER,    /* the simulator's draws of a CPU step's time (cpu.jitter) */
};

/* A stream: a key fixed at creation and a counter. */
typedef struct halo_rng {
    uint64_t key; /* hash of (seed, purpose, a, b, c) */
    uint64_t ctr; /* number of draws so far */
} halo_rng;

/* splitmix64 finaliser: a bijective 64-bit mix. */
static inline uint64_t halo_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Hash of a key tuple. */
static inline uint64_t halo_hash5(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b,
                                  uint64_t c)
{
    uint64_t h = halo_mix64(seed ^ 0x5851f42d4c957f2dULL);
    h = halo_mix64(h ^ purpose);
    h = halo_mix64(h ^ a);
    h = halo_mix64(h ^ b);
    return halo_mix64(h ^ c);
}

static inline void halo_rng_init(halo_rng *r, uint64_t seed, uint64_t purpose, uint64_t a,
                                 uint64_t b, uint64_t c)
{
    r->key = halo_hash5(seed, purpose, a, b, c);
    r->ctr = 0;
}

/* Next 64 random bits. */
static inline uint64_t halo_rng_next(halo_rng *r)
{
    r->ctr++;
    return halo_mix64(r->key ^ halo_mix64(r->ctr));
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double halo_rng_uniform(halo_rng *r)
{
    return (double)(halo_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for n < 2^32). */
static inline uint64_t halo_rng_below(halo_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)halo_rng_next(r) * n) >> 64);
}

/* Standard normal deviate (Box-Muller, one value per call). */
static inline double halo_rng_normal(halo_rng *r)
{
    double u1 = halo_rng_uniform(r);
    double u2 = halo_rng_uniform(r);
    if (u1 < 1e-300) {
        u1 = 1e-300;
    }
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
