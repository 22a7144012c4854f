/* What the generator's files share: the state of one run, the edge stream and the in-memory CSR
 * (gen.c), the spilled CSR build (gen_spill.c), used by the output (gen_write.c). */
#ifndef HALO_GRAPH_GEN_INT_H
#define HALO_GRAPH_GEN_INT_H

#include "graph/gen.h"

#include <stdbool.h>
#include <stdint.h>

#define GEN_CHUNK 4096 /* edge draws per RNG stream; the stream of chunk i is keyed by i */
#define GEN_HBITS 10   /* per-node homophily takes one of 2^GEN_HBITS Beta quantiles */
#define GEN_MEM_DEFAULT (4ull << 30) /* CSR bytes built in memory by halo_gen_write before it
                                      * spills (HALO_GEN_MAX_BYTES overrides) */
#define GEN_BUCKET_ENTRIES (16 << 20) /* spilled: target (row, source) entries per bucket */
#define GEN_BUCKET_STAGE 32768        /* spilled: entries staged per bucket before a write */
#define GEN_BUCKETS_MAX 4096          /* spilled: most bucket files (one descriptor each) */

/* The fixed state of one generation run, shared by both passes over the edge stream. */
typedef struct gen_ctx {
    const halo_gen_params *p; /* parameters */
    int64_t n;                /* nodes */
    int64_t draws;            /* edge draws in the stream */
    int k;                    /* ids live in [0, 2^k), 2^k >= n */
    uint32_t mask;            /* 2^k - 1 */
    int groups;               /* rmat: ceil(k / 5) alias lookups per edge */
    int drop;                 /* rmat: 5 * groups - k surplus low levels, dropped */
    uint64_t *tab;            /* rmat: groups alias tables of RMAT_TABLE entries (halo_free) */
    int psh;                  /* xor-shift of the permutation rounds: (k + 1) / 2 */
    uint64_t pin;             /* sbm: P(intra-class edge) in 1/2^32 */
    double expo;              /* sbm: 1 + skew */
    bool het;                 /* sbm: per-node homophily or twin affinity in use (sbm_draw_het) */
    uint64_t ptwin;           /* sbm: P(other-class source from the twin class) in 1/2^32 */
    uint64_t hkey;            /* sbm: hash key of the per-node homophily draws */
    uint64_t *htab;           /* sbm: 2^GEN_HBITS Beta quantiles, as thresholds in 1/2^32
                               * (halo_free), or NULL when every node has the same homophily */
    uint32_t pkey[3];         /* keys of the node-id permutation rounds */
    uint32_t pmul[3];         /* odd multipliers of the permutation rounds */
} gen_ctx;

/* Fills g for one run of p (alias tables, Beta quantiles, permutation keys). */
int halo_gen_ctx_init(const halo_gen_params *p, gen_ctx *g);
/* Frees what halo_gen_ctx_init allocated. */
void halo_gen_ctx_free(gen_ctx *g);
/* Fisher-Yates permutation of [0, n) from one stream keyed by (seed, purpose) (halo_free). */
int32_t *halo_gen_permutation(uint64_t seed, int purpose, int64_t n);
/* Latent class of every node, in node id order (halo_free). */
int32_t *halo_gen_classes(const gen_ctx *g);
/* The in-edge CSR of g in memory (rows sorted, duplicates removed): indptr[n + 1],
 * indices[edges] (halo_free). Peak memory: halo_gen_csr_bytes(g). */
void halo_gen_csr(const gen_ctx *g, int64_t **indptr_out, int32_t **indices_out,
                  int64_t *edges_out);
/* Draws the edges of chunk `chunk` of the stream into src/dst (GEN_CHUNK entries each); returns
 * how many it drew (the last chunk may hold fewer). */
int halo_gen_chunk(const gen_ctx *gin, int64_t chunk, int32_t *src, int32_t *dst);
/* Sorts row[0..len) ascending and removes duplicates in place (radix sort through tmp for long
 * rows; ids below 2^bits); returns the new length. */
int64_t halo_gen_row_dedup(int32_t *row, int64_t len, int bits, int32_t *tmp);
/* The CSR bytes halo_gen_write may build in memory: HALO_GEN_MAX_BYTES when set (a number,
 * "1e9" allowed), else GEN_MEM_DEFAULT. */
uint64_t halo_gen_mem_budget(void);
/* Bytes the in-memory CSR build would hold at its peak for g: offsets plus every drawn edge (both
 * directions). */
uint64_t halo_gen_csr_bytes(const gen_ctx *g);
/* Builds the in-edge CSR of g straight into tmp/indptr.i64 and tmp/indices.i32 through bucket
 * files (a graph whose CSR is over budget bytes); fills crc[] and bytes[] of the two arrays and
 * the edge count. Byte-identical to the in-memory build. */
int halo_gen_csr_spilled(const gen_ctx *g, const char *tmp, uint64_t budget, uint32_t *crc,
                         uint64_t *bytes, int64_t *edges_out);

#endif
