/* MPI tests of store/ + comm/: distributed blocks equal the single-process sampler's on the input
 * graph, pulled rows equal the input rows, cache hooks, counters, error agreement and netem. */
// halo-mpi: -np 2
// halo-mpi: -np 4
// halo-mpi: -np 4 --mca btl tcp,self
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"
#include "graph/graph.h"
#include "part/partition.h"
#include "sample/sample.h"
#include "store/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The input graph, the same on every rank: random in-degrees in [0, 30], node 7 a hub with 400
 * in-neighbours, 16 features per node (row values encode node and column), every 3rd node train. */
static halo_graph *make_graph(int64_t n)
{
    halo_rng r;
    halo_rng_init(&r, 99, HALO_RNG_TEST, 0, 0, 0);
    int64_t *deg = HALO_NEW(int64_t, n);
    int64_t m = 0;
    for (int64_t v = 0; v < n; v++) {
        deg[v] = v == 7 ? 400 : (int64_t)halo_rng_below(&r, 31);
        m += deg[v];
    }
    halo_graph *g = halo_graph_alloc(n, m, 16, 3, 0);
    uint8_t *mark = HALO_NEW(uint8_t, n);
    for (int64_t v = 0; v < n; v++) {
        int64_t e = g->indptr[v], k = 0;
        while (k < deg[v]) {
            int32_t u = (int32_t)halo_rng_below(&r, (uint64_t)n);
            if (!mark[u]) {
                mark[u] = 1;
                g->indices[e + k++] = u;
            }
        }
        for (int64_t j = 0; j < k; j++) {
            mark[g->indices[e + j]] = 0;
        }
        g->indptr[v + 1] = e + k;
        g->label[v] = (int32_t)(v % 3);
        g->split[v] = v % 3 == 0 ? HALO_SPLIT_TRAIN : HALO_SPLIT_TEST;
        for (int c = 0; c < 16; c++) {
            g->feat[v * 16 + c] = (float)v + (float)c / 32.0f;
        }
    }
    halo_free(mark);
    halo_free(deg);
    return g;
}

static halo_graph *g;       /* input graph */
static int64_t *orig;       /* [nodes] partition id -> input id */
static halo_store *st;      /* this rank's store */
static char pdir[4096];     /* partition directory */

/* Rank 0 partitions g (a random assignment) into a fresh directory; every rank opens its part. */
static void setup(void)
{
    g = make_graph(3000);
    if (rank == 0) {
        const char *tmp = getenv("HALO_TEST_TMP");
        snprintf(pdir, sizeof pdir, "%s/store-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (mkdtemp(pdir) == NULL) {
            halo_comm_fail(comm, halo_errorf(HALO_EIO, "mkdtemp %s failed", pdir));
        }
        strcat(pdir, "/p");
        int32_t *assign = HALO_ALLOC(int32_t, g->nodes);
        for (int64_t v = 0; v < g->nodes; v++) {
            uint64_t h = halo_hash5(5, HALO_RNG_TEST, (uint64_t)v, 0, 0);
            assign[v] = (int32_t)(h % (uint64_t)ranks);
        }
        halo_partition_opts opts;
        halo_partition_opts_init(&opts);
        opts.choice.method = HALO_PARTITION_CUSTOM;
        opts.choice.assignment = assign;
        opts.choice.assignment_len = g->nodes;
        opts.parts = ranks;
        MUST(halo_partition_write(g, assign, &opts, pdir, NULL));
        halo_free(assign);
    }
    MUST(halo_comm_bcast(comm, pdir, sizeof pdir, 0));
    MUST(halo_store_open(comm, pdir, &st));
    char path[4200], *data = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/orig_id.i64", pdir);
    MUST(halo_file_read_all(path, &data, &len));
    orig = (int64_t *)data;
}

static int32_t sorted_find(const int32_t *a, int64_t n, int32_t x)
{
    for (int64_t i = 0; i < n; i++) {
        if (a[i] == x) {
            return 1;
        }
    }
    return 0;
}

/* Compares a distributed block (partition ids) with a single-process one (input ids). */
static void expect_same_block(const halo_block *d, const halo_block *r)
{
    EXPECT(d->num_dst == r->num_dst);
    EXPECT(d->num_src == r->num_src);
    EXPECT(d->num_edges == r->num_edges);
    if (d->num_dst != r->num_dst || d->num_src != r->num_src || d->num_edges != r->num_edges) {
        return;
    }
    int bad = 0;
    for (int32_t i = 0; i < d->num_src; i++) {
        bad += orig[d->src_gid[i]] != r->src_gid[i];
    }
    EXPECT(bad == 0);
    EXPECT(memcmp(d->indptr, r->indptr, ((size_t)d->num_dst + 1) * 8) == 0);
    EXPECT(memcmp(d->indices, r->indices, (size_t)d->num_edges * 4) == 0);
}

/* Samples `batches` batches of seeds drawn from `from` (this rank's training nodes or another
 * part's nodes) distributed and single-process, and compares every block. */
static void compare_batches(const int *fanouts, int layers, int from_other_part, int batches)
{
    halo_sampler *s = halo_sampler_new();
    halo_minibatch md, mr;
    memset(&md, 0, sizeof md);
    memset(&mr, 0, sizeof mr);
    int32_t seeds[40], rseeds[40];
    int other = (rank + 1) % ranks;
    int64_t o0 = halo_store_info(st)->start[other], on = halo_store_info(st)->start[other + 1] - o0;
    for (int epoch = 0; epoch < 2; epoch++) {
        for (int b = 0; b < batches; b++) {
            int32_t ns = 0;
            for (int i = 0; i < 40; i++) {
                int32_t v;
                if (from_other_part) {
                    v = (int32_t)(o0 + (b * 40 + i) % on);
                } else {
                    v = halo_store_part(st)->train[(b * 40 + i) % halo_store_part(st)->num_train];
                }
                if (!sorted_find(seeds, ns, v)) {
                    seeds[ns] = v;
                    rseeds[ns] = (int32_t)orig[v];
                    ns++;
                }
            }
            halo_sample_key k = {17, epoch, b};
            MUST(halo_store_sample(st, s, fanouts, layers, &k, seeds, ns, &md));
            MUST(halo_sample_graph(s, g, fanouts, layers, &k, rseeds, ns, &mr));
            EXPECT(md.layers == layers);
            for (int l = 0; l < layers; l++) {
                expect_same_block(&md.blocks[l], &mr.blocks[l]);
            }
            /* edges exist and fanouts hold, checked directly on the partition ids */
            for (int l = 0; l < layers; l++) {
                const halo_block *bl = &md.blocks[l];
                for (int32_t i = 0; i < bl->num_dst; i++) {
                    int64_t v = orig[bl->src_gid[i]];
                    int64_t deg = g->indptr[v + 1] - g->indptr[v];
                    int64_t cnt = bl->indptr[i + 1] - bl->indptr[i];
                    EXPECT(cnt == (fanouts[l] < 0 || deg <= fanouts[l] ? deg : fanouts[l]));
                    for (int64_t e = bl->indptr[i]; e < bl->indptr[i + 1]; e++) {
                        int32_t u = (int32_t)orig[bl->src_gid[bl->indices[e]]];
                        EXPECT(sorted_find(g->indices + g->indptr[v], deg, u));
                    }
                }
            }
        }
    }
    halo_sample_free(&md);
    halo_sample_free(&mr);
    halo_sampler_free(s);
}

static void distributed_blocks_equal_single_process_blocks(void)
{
    int f2[2] = {5, 10};
    compare_batches(f2, 2, 0, 4);
    int f3[3] = {3, -1, 8};
    compare_batches(f3, 3, 0, 2);
    report("distributed_blocks_equal_single_process_blocks");
}

static void remote_seeds_are_sampled_by_their_owners(void)
{
    int64_t before = halo_store_stats_get(st)->sample_remote_nodes;
    int f2[2] = {4, 6};
    compare_batches(f2, 2, 1, 3);
    EXPECT(ranks == 1 || halo_store_stats_get(st)->sample_remote_nodes > before);
    report("remote_seeds_are_sampled_by_their_owners");
}

static void owner_lookup_matches_range_table(void)
{
    for (int32_t v = 0; v < g->nodes; v++) {
        int want = -1;
        for (int p = 0; p < ranks; p++) {
            if (v >= halo_store_info(st)->start[p] && v < halo_store_info(st)->start[p + 1]) {
                want = p;
            }
        }
        EXPECT(halo_store_owner(st, v) == want);
    }
    EXPECT(halo_store_owner(st, -1) == -1);
    EXPECT(halo_store_owner(st, (int32_t)g->nodes) == -1);
    halo_store_memory m = halo_store_mem(st);
    EXPECT(m.mapped_bytes >= (halo_store_end(st) - halo_store_start(st)) * (16 * 4 + 8));
    report("owner_lookup_matches_range_table_and_memory_is_reported");
}

/* Input nodes of a sampled batch: the ids a trainer pulls. */
static int32_t *batch_inputs(int32_t *n)
{
    halo_sampler *s = halo_sampler_new();
    halo_minibatch mb;
    memset(&mb, 0, sizeof mb);
    int32_t seeds[30];
    for (int i = 0; i < 30; i++) {
        seeds[i] = halo_store_part(st)->train[i % halo_store_part(st)->num_train];
    }
    int f[2] = {10, 10};
    halo_sample_key k = {3, 0, 0};
    int32_t ns = halo_store_part(st)->num_train < 30 ? (int32_t)halo_store_part(st)->num_train : 30;
    MUST(halo_store_sample(st, s, f, 2, &k, seeds, ns, &mb));
    int32_t *ids = HALO_ALLOC(int32_t, mb.num_input);
    memcpy(ids, mb.input, (size_t)mb.num_input * 4);
    *n = mb.num_input;
    halo_sample_free(&mb);
    halo_sampler_free(s);
    return ids;
}

static void pulled_rows_equal_input_rows(void)
{
    int32_t n;
    int32_t *ids = batch_inputs(&n);
    float *rows = HALO_ALLOC(float, (int64_t)n * 16);
    halo_store_pull p;
    memset(&p, 0, sizeof p);
    halo_store_stats before = *halo_store_stats_get(st);
    MUST(halo_store_pull_rows(st, ids, n, rows, &p));
    int64_t remote = 0;
    for (int32_t i = 0; i < n; i++) {
        EXPECT(memcmp(rows + (int64_t)i * 16, g->feat + orig[ids[i]] * 16, 64) == 0);
        remote += ids[i] < halo_store_start(st) || ids[i] >= halo_store_end(st);
    }
    EXPECT(p.fetched == remote);
    EXPECT(p.bytes == remote * 64);
    EXPECT(halo_store_stats_get(st)->remote_nodes - before.remote_nodes == remote);
    EXPECT(halo_store_stats_get(st)->bytes_remote - before.bytes_remote == remote * 64);
    EXPECT(halo_store_stats_get(st)->local_nodes - before.local_nodes == n - remote);
    EXPECT(ranks == 1 || remote > 0);
    halo_store_pull_free(&p);
    halo_free(rows);
    halo_free(ids);
    report("pulled_rows_equal_input_rows_and_counts_are_kept");
}

/* Byte j of row r of rank q's rows in the rows-exchange test (an independent formula). */
static uint8_t rows_pattern(int q, int64_t r, int64_t j)
{
    return (uint8_t)(q * 131 + r * 7 + j * 13 + (r >> 8));
}

/* Rank p asks rank q for rows (source index list and destination slot of each entry), the same
 * on both sides: seeded by the pair. The first RX_SEQ sources are consecutive rows (the first
 * pieces are sent in place, the one across the end of the run is gathered), and for half of the
 * pairs the first RX_RUN destinations are consecutive slots (pieces inside them are received in
 * place); the rest is random (gathered and scattered). */
#define RX_ROWS 700 /* rows each rank asks of each other rank: pieces of 63, 127, 255, 255 rows */
#define RX_RB 1028  /* bytes per row (not a power of two) */
#define RX_OWN 900  /* rows each rank owns */
#define RX_SEQ 300  /* consecutive source rows at the start of each list */
#define RX_RUN 255  /* consecutive destination slots at the start, when in place */
static void rows_lists(int p, int q, int64_t *src, int64_t *slot_of_piece0)
{
    halo_rng r;
    halo_rng_init(&r, 7, HALO_RNG_TEST, (uint64_t)p, (uint64_t)q, 0);
    int64_t base = (int64_t)halo_rng_below(&r, RX_OWN - RX_SEQ);
    for (int64_t i = 0; i < RX_ROWS; i++) {
        src[i] = i < RX_SEQ ? base + i : (int64_t)halo_rng_below(&r, RX_OWN);
    }
    *slot_of_piece0 = (int64_t)halo_rng_below(&r, 2); /* 0: a run of slots first; 1: none */
}

/* The rows exchange (comm/) that carries pull replies: replies of several pieces per peer, with
 * pieces sent and received in place and gathered / scattered ones, land every row in its slot;
 * the counters see one exchange and every byte. */
static void rows_exchange_puts_rows_of_many_pieces_in_place(void)
{
    int P = ranks;
    uint8_t *own = halo_malloc((size_t)RX_OWN * RX_RB);
    for (int64_t r = 0; r < RX_OWN; r++) {
        for (int64_t j = 0; j < RX_RB; j++) {
            own[r * RX_RB + j] = rows_pattern(rank, r, j);
        }
    }
    int64_t nslots = (int64_t)(P - 1) * RX_ROWS;
    uint8_t *out = halo_calloc(1, (size_t)(nslots > 0 ? nslots : 1) * RX_RB);
    int64_t *rdisp = HALO_NEW(int64_t, nslots + 1), *sdisp = HALO_NEW(int64_t, nslots + 1);
    int64_t *src = HALO_NEW(int64_t, RX_ROWS), *rsrc = HALO_NEW(int64_t, nslots + 1);
    int *rowner = HALO_NEW(int, nslots + 1);
    int64_t *roff = HALO_NEW(int64_t, P + 1), *soff = HALO_NEW(int64_t, P + 1);
    /* slots: a shuffled order of all slots; the runs at the start are taken first */
    int64_t *perm = HALO_NEW(int64_t, nslots + 1);
    for (int64_t i = 0; i < nslots; i++) {
        perm[i] = i;
    }
    halo_rng r;
    halo_rng_init(&r, 8, HALO_RNG_TEST, (uint64_t)rank, 0, 0);
    for (int64_t i = nslots - 1; i > 0; i--) {
        int64_t j = (int64_t)halo_rng_below(&r, (uint64_t)i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int64_t n = 0, k = 0;
    for (int q = 0; q < P; q++) {
        roff[q] = n;
        if (q == rank) {
            continue;
        }
        int64_t mode;
        rows_lists(rank, q, src, &mode);
        for (int64_t i = 0; i < RX_ROWS; i++, n++) {
            /* peer slot block k*RX_ROWS..: the block's first RX_RUN slots in order */
            int64_t slot = mode == 0 && i < RX_RUN ? k * RX_ROWS + i : -1;
            rsrc[n] = src[i];
            rowner[n] = q;
            rdisp[n] = slot;
        }
        k++;
    }
    roff[P] = n;
    /* the other entries take the remaining slots in shuffled order */
    uint8_t *used = halo_calloc(1, (size_t)nslots + 1);
    for (int64_t i = 0; i < n; i++) {
        if (rdisp[i] >= 0) {
            used[rdisp[i]] = 1;
        }
    }
    int64_t pi = 0;
    for (int64_t i = 0; i < n; i++) {
        if (rdisp[i] < 0) {
            while (used[perm[pi]]) {
                pi++;
            }
            rdisp[i] = perm[pi++];
        }
    }
    for (int64_t i = 0; i < n; i++) {
        rdisp[i] *= RX_RB;
    }
    /* what this rank sends: the lists the others ask of it */
    int64_t m = 0;
    for (int p = 0; p < P; p++) {
        soff[p] = m;
        if (p == rank) {
            continue;
        }
        int64_t mode;
        rows_lists(p, rank, src, &mode);
        for (int64_t i = 0; i < RX_ROWS; i++) {
            sdisp[m++] = src[i] * RX_RB;
        }
    }
    soff[P] = m;
    halo_rows_xchg x;
    memset(&x, 0, sizeof x);
    /* twice: buffers are reused; a third time completed by halo_comm_rows_test alone (every
     * row in its slot, staged ones scattered, before halo_comm_rows_wait is called) */
    for (int round = 0; round < 3; round++) {
        memset(out, 0, (size_t)nslots * RX_RB);
        halo_comm_stats c0 = halo_comm_get_stats(comm);
        MUST(halo_comm_rows_recv(comm, &x, out, rdisp, roff, RX_RB));
        MUST(halo_comm_barrier(comm)); /* the replies' receives are posted everywhere */
        MUST(halo_comm_rows_send(comm, &x, own, sdisp, soff, RX_RB));
        if (round == 2) {
            int64_t missing = n;
            double t0 = halo_now();
            while (missing > 0 && halo_now() - t0 < 20) { /* a bound, not a timing check */
                MUST(halo_comm_rows_test(comm, &x));
                missing = 0;
                for (int64_t i = 0; i < n; i++) {
                    const uint8_t *row = out + rdisp[i];
                    missing += row[0] != rows_pattern(rowner[i], rsrc[i], 0) ||
                               row[RX_RB - 1] != rows_pattern(rowner[i], rsrc[i], RX_RB - 1);
                }
            }
            EXPECT(missing == 0);
        }
        MUST(halo_comm_rows_wait(comm, &x));
        halo_comm_stats c1 = halo_comm_get_stats(comm);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *row = out + rdisp[i];
            for (int64_t j = 0; j < RX_RB; j++) {
                bad += row[j] != rows_pattern(rowner[i], rsrc[i], j);
            }
        }
        EXPECT(bad == 0);
        EXPECT(c1.exchanges - c0.exchanges == 1);
        EXPECT(c1.bytes_recv - c0.bytes_recv == n * RX_RB);
        EXPECT(c1.bytes_sent - c0.bytes_sent == m * RX_RB);
    }
    halo_rows_xchg_free(&x);
    halo_free(used);
    halo_free(perm);
    halo_free(roff);
    halo_free(soff);
    halo_free(rowner);
    halo_free(rsrc);
    halo_free(src);
    halo_free(sdisp);
    halo_free(rdisp);
    halo_free(out);
    halo_free(own);
    report("rows_exchange_puts_rows_of_many_pieces_in_place");
}

/* The cache hooks: the caller serves every other remote id itself (a hit) and adds prefetch ids
 * (remote and local) to the same request. */
static void pull_plan_takes_cache_hits_and_prefetches(void)
{
    int32_t n;
    int32_t *ids = batch_inputs(&n);
    float *rows = HALO_ALLOC(float, (int64_t)n * 16);
    halo_store_pull p;
    memset(&p, 0, sizeof p);
    MUST(halo_store_pull_plan(st, ids, n, &p));
    int64_t hits = 0;
    for (int64_t r = 0; r < p.num_remote; r += 2) {
        memcpy(rows + p.remote_pos[r] * 16, g->feat + orig[p.remote_id[r]] * 16, 64);
        p.skip[r] = 1;
        hits++;
    }
    int32_t extra[20];
    int64_t extra_remote = 0;
    for (int i = 0; i < 20; i++) {
        extra[i] = (int32_t)((i * 149 + rank * 7) % g->nodes);
        extra_remote += extra[i] < halo_store_start(st) || extra[i] >= halo_store_end(st);
    }
    MUST(halo_store_pull_add_extra(&p, st, extra, 10));
    MUST(halo_store_pull_add_extra(&p, st, extra + 10, 10));
    MUST(halo_store_pull_exec(st, &p, rows));
    for (int32_t i = 0; i < n; i++) {
        EXPECT(memcmp(rows + (int64_t)i * 16, g->feat + orig[ids[i]] * 16, 64) == 0);
    }
    for (int i = 0; i < 20; i++) {
        EXPECT(memcmp(p.extra_rows + i * 16, g->feat + orig[extra[i]] * 16, 64) == 0);
    }
    EXPECT(p.fetched == p.num_remote - hits + extra_remote);
    halo_store_pull_free(&p);
    halo_free(rows);
    halo_free(ids);
    report("pull_plan_takes_cache_hits_and_prefetches");
}

/* The shared-memory path: same rows and counts, and no row bytes in messages. */
static void direct_pull_reads_same_host_rows_without_messages(void)
{
    MUST(halo_store_set_direct(st, 1));
    int32_t n;
    int32_t *ids = batch_inputs(&n);
    float *rows = HALO_ALLOC(float, (int64_t)n * 16);
    halo_store_pull p;
    memset(&p, 0, sizeof p);
    halo_comm_stats c0 = halo_comm_get_stats(comm);
    MUST(halo_store_pull_plan(st, ids, n, &p));
    int32_t extra[8];
    for (int i = 0; i < 8; i++) {
        extra[i] = (int32_t)((i * 331 + rank) % g->nodes);
    }
    MUST(halo_store_pull_add_extra(&p, st, extra, 8));
    if (p.num_remote > 0) { /* one cache hit */
        memcpy(rows + p.remote_pos[0] * 16, g->feat + orig[p.remote_id[0]] * 16, 64);
        p.skip[0] = 1;
    }
    MUST(halo_store_pull_exec(st, &p, rows));
    halo_comm_stats c1 = halo_comm_get_stats(comm);
    int64_t remote = 0;
    for (int32_t i = 0; i < n; i++) {
        EXPECT(memcmp(rows + (int64_t)i * 16, g->feat + orig[ids[i]] * 16, 64) == 0);
        remote += ids[i] < halo_store_start(st) || ids[i] >= halo_store_end(st);
    }
    int64_t extra_remote = 0;
    for (int i = 0; i < 8; i++) {
        EXPECT(memcmp(p.extra_rows + i * 16, g->feat + orig[extra[i]] * 16, 64) == 0);
        extra_remote += extra[i] < halo_store_start(st) || extra[i] >= halo_store_end(st);
    }
    EXPECT(p.fetched == remote - (p.num_remote > 0) + extra_remote);
    EXPECT(c1.bytes_recv == c0.bytes_recv); /* every peer is on this host */
    MUST(halo_store_set_direct(st, 0));
    halo_store_pull_free(&p);
    halo_free(rows);
    halo_free(ids);
    report("direct_pull_reads_same_host_rows_without_messages");
}

static void agree_names_the_failing_rank(void)
{
    int mine = rank == ranks - 1 ? halo_errorf(HALO_EINPUT, "bad thing on purpose") : 0;
    int rc = halo_comm_agree(comm, mine);
    EXPECT(rc == HALO_EINPUT);
    if (rank != ranks - 1) {
        char want[64];
        snprintf(want, sizeof want, "rank %d failed", ranks - 1);
        EXPECT(strstr(halo_errmsg(), want) != NULL);
    } else {
        EXPECT(strstr(halo_errmsg(), "on purpose") != NULL);
    }
    EXPECT(halo_comm_agree(comm, 0) == 0);
    report("agree_names_the_failing_rank");
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* With lat=20ms each pull (two exchanges that cross ranks) takes >= 40ms; the delay is slept,
 * not spun: process CPU time stays below half the wall time. */
static void netem_delays_remote_requests_without_spinning(void)
{
    halo_netem ne;
    MUST(halo_netem_parse("lat=50us,bw=10Gbit", &ne));
    EXPECT(ne.lat_s > 49e-6 && ne.lat_s < 51e-6);
    EXPECT(ne.bw_bits == 1e10);
    EXPECT(halo_netem_delay(&ne, 125000) > 149e-6 && halo_netem_delay(&ne, 125000) < 151e-6);
    EXPECT(halo_netem_delay(&ne, 0) == 0);
    EXPECT(halo_netem_parse("lat=4parsecs", &ne) == HALO_EUSAGE);
    EXPECT(halo_netem_parse("off", &ne) == 0 && ne.lat_s == 0 && ne.bw_bits == 0);
    MUST(halo_netem_parse("lat=20ms", &ne));
    int32_t n;
    int32_t *ids = batch_inputs(&n);
    float *rows = HALO_ALLOC(float, (int64_t)n * 16);
    halo_store_pull p;
    memset(&p, 0, sizeof p);
    halo_comm_set_netem(comm, &ne);
    halo_comm_stats s0 = halo_comm_get_stats(comm);
    MUST(halo_comm_barrier(comm));
    double t0 = halo_now(), c0 = cpu_now();
    for (int i = 0; i < 4; i++) {
        MUST(halo_store_pull_rows(st, ids, n, rows, &p));
    }
    double wall = halo_now() - t0, cpu = cpu_now() - c0;
    halo_comm_stats s1 = halo_comm_get_stats(comm);
    double slept = s1.netem_wait_s - s0.netem_wait_s;
    halo_netem off = {0, 0};
    halo_comm_set_netem(comm, &off);
    printf("# rank %d: 4 pulls with lat=20ms: wall %.1f ms, cpu %.1f ms, slept %.1f ms\n", rank,
           wall * 1e3, cpu * 1e3, slept * 1e3);
    EXPECT(ranks == 1 || wall >= 4 * 2 * 0.020);
    EXPECT(cpu < 0.5 * wall); /* slept (netem and the polling waits), not spun */
    halo_store_pull_free(&p);
    halo_free(rows);
    halo_free(ids);
    report("netem_delays_remote_requests_without_spinning");
}

/* The sampler's draws depend on the order of a node's in-edges (invariant 1 says: as in the input
 * graph), so a part must list each row's sources in input order. */
static void part_rows_keep_input_order(void)
{
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < halo_store_end(st) - halo_store_start(st); i++) {
        int64_t v = orig[halo_store_start(st) + i];
        int64_t d = g->indptr[v + 1] - g->indptr[v];
        const int32_t *row = halo_store_part(st)->indices + halo_store_part(st)->indptr[i];
        for (int64_t j = 0; j < d; j++) {
            if (orig[row[j]] != g->indices[g->indptr[v] + j]) {
                bad++;
                first = first < 0 ? halo_store_start(st) + i : first;
                break;
            }
        }
    }
    if (bad > 0) {
        printf("# rank %d: %lld rows of part-%d (first: node %lld) list their sources in another "
               "order than the input graph (runtime/part/partition.c sorts them), so distributed "
               "samples cannot equal the input graph's\n", rank, (long long)bad, rank,
               (long long)first);
    }
    EXPECT(bad == 0);
    report("part_rows_keep_input_order");
}

/* The sampling thread of the concurrency test. */
typedef struct thread_job {
    halo_store *st; /* clone on its own channel */
    int failures;   /* blocks that differ from the single-process sampler's */
} thread_job;

static void *sampling_thread(void *arg)
{
    thread_job *job = arg;
    halo_sampler *s = halo_sampler_new();
    halo_minibatch md, mr;
    memset(&md, 0, sizeof md);
    memset(&mr, 0, sizeof mr);
    int f[2] = {4, 8};
    int32_t seeds[20], rseeds[20];
    for (int b = 0; b < 6; b++) {
        for (int i = 0; i < 20; i++) {
            seeds[i] =
                halo_store_part(job->st)->train[(b * 20 + i) % halo_store_part(job->st)->num_train];
            rseeds[i] = (int32_t)orig[seeds[i]];
        }
        int32_t ns = halo_store_part(job->st)->num_train < 20
                         ? (int32_t)halo_store_part(job->st)->num_train
                         : 20;
        halo_sample_key k = {23, 1, b};
        if (halo_store_sample(job->st, s, f, 2, &k, seeds, ns, &md) < 0 ||
            halo_sample_graph(s, g, f, 2, &k, rseeds, ns, &mr) < 0) {
            job->failures++;
            continue;
        }
        for (int l = 0; l < 2; l++) {
            const halo_block *d = &md.blocks[l], *r = &mr.blocks[l];
            int same = d->num_src == r->num_src && d->num_edges == r->num_edges;
            for (int32_t i = 0; same && i < d->num_src; i++) {
                same = orig[d->src_gid[i]] == r->src_gid[i];
            }
            job->failures += !same;
        }
    }
    halo_sample_free(&md);
    halo_sample_free(&mr);
    halo_sampler_free(s);
    return NULL;
}

/* A pipeline's shape: a second thread samples on a clone of the store over its own channel while
 * the main thread pulls features (needs MPI_THREAD_MULTIPLE). */
static void clone_samples_on_a_thread_while_main_pulls(void)
{
    if (halo_comm_thread_level() < 3) {
        if (rank == 0) {
            printf("ok %d - clone_samples_on_a_thread_while_main_pulls # SKIP no "
                   "MPI_THREAD_MULTIPLE\n", ++test_no);
        }
        return;
    }
    halo_comm *c2;
    MUST(halo_comm_dup(comm, &c2));
    thread_job job = {halo_store_clone(st, c2), 0};
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, sampling_thread, &job) == 0);
    int32_t n;
    int32_t *ids = batch_inputs(&n);
    float *rows = HALO_ALLOC(float, (int64_t)n * 16);
    halo_store_pull p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 6; i++) {
        MUST(halo_store_pull_rows(st, ids, n, rows, &p));
        for (int32_t j = 0; j < n; j++) {
            EXPECT(memcmp(rows + (int64_t)j * 16, g->feat + orig[ids[j]] * 16, 64) == 0);
        }
    }
    pthread_join(th, NULL);
    EXPECT(job.failures == 0);
    EXPECT(halo_store_stats_get(job.st)->sample_calls == 6);
    halo_store_close(job.st);
    halo_comm_free(c2);
    halo_store_pull_free(&p);
    halo_free(rows);
    halo_free(ids);
    report("clone_samples_on_a_thread_while_main_pulls");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    if (rank == 0) {
        printf("# %d ranks, MPI thread level %d\n", ranks, halo_comm_thread_level());
    }
    setup();
    owner_lookup_matches_range_table();
    part_rows_keep_input_order();
    distributed_blocks_equal_single_process_blocks();
    remote_seeds_are_sampled_by_their_owners();
    pulled_rows_equal_input_rows();
    rows_exchange_puts_rows_of_many_pieces_in_place();
    pull_plan_takes_cache_hits_and_prefetches();
    direct_pull_reads_same_host_rows_without_messages();
    agree_names_the_failing_rank();
    clone_samples_on_a_thread_while_main_pulls();
    netem_delays_remote_requests_without_spinning();
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_store_close(st);
    halo_free(orig);
    halo_graph_free(g);
    halo_comm_finalize(comm);
    return total_failed > 0;
}
