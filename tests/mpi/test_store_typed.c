/* MPI tests of typed sampling in store/: on a mag-shaped graph partitioned by METIS, the
 * distributed per-relation sampler's blocks (and their relations) equal the single-process
 * typed sampler's on the input graph, for local and remote seeds; typed part files agree with
 * the input graph. */
// halo-mpi: -np 2
// halo-mpi: -np 3
// halo-mpi: -np 4 --mca btl tcp,self
#include "../common/mpitap.h"
#include "comm/comm.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/mem.h"
#include "graph/gen.h"
#include "graph/graph.h"
#include "part/partition.h"
#include "sample/sample.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static halo_graph *g;   /* input graph, the same on every rank */
static int64_t *orig;   /* [nodes] partition id -> input id */
static halo_store *st;  /* this rank's store */
static char pdir[4096]; /* partition directory */

/* Every rank generates the same small mag graph; rank 0 partitions it with METIS. */
static void setup(void)
{
    halo_gen_hetero_params p;
    MUST(halo_gen_hetero_defaults("mag", 0.002, &p));
    p.classes = 20;
    p.feat_dim = 4;
    MUST(halo_gen_hetero_graph(&p, &g));
    if (rank == 0) {
        const char *tmp = getenv("HALO_TEST_TMP");
        snprintf(pdir, sizeof pdir, "%s/store-typed-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (mkdtemp(pdir) == NULL) {
            halo_comm_fail(comm, halo_errorf(HALO_EIO, "mkdtemp %s failed", pdir));
        }
        strcat(pdir, "/p");
        halo_partition_opts opts;
        halo_partition_opts_init(&opts);
        opts.parts = ranks;
        MUST(halo_partition_run(g, &opts, pdir, NULL));
    }
    MUST(halo_comm_bcast(comm, pdir, sizeof pdir, 0));
    MUST(halo_store_open(comm, pdir, &st));
    char path[4200], *data = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/orig_id.i64", pdir);
    MUST(halo_file_read_all(path, &data, &len));
    orig = (int64_t *)data;
}

static void typed_part_files_match_the_input_graph(void)
{
    const halo_part *pt = halo_store_part(st);
    EXPECT(pt->nrels == g->nrels && pt->etype != NULL && pt->ntype != NULL);
    EXPECT(halo_store_info(st)->nrels == g->nrels && halo_store_info(st)->ntypes == g->ntypes);
    for (int64_t i = 0; i < pt->nodes && pt->ntype != NULL; i++) {
        int64_t v = orig[pt->start + i];
        EXPECT(pt->ntype[i] == g->ntype[v]);
        EXPECT(pt->indptr[i + 1] - pt->indptr[i] == g->indptr[v + 1] - g->indptr[v]);
        for (int64_t e = 0; e < pt->indptr[i + 1] - pt->indptr[i] && pt->etype != NULL; e++) {
            EXPECT(pt->etype[pt->indptr[i] + e] == g->etype[g->indptr[v] + e]);
            EXPECT(orig[pt->indices[pt->indptr[i] + e]] == g->indices[g->indptr[v] + e]);
        }
    }
    for (int64_t h = 0; h < pt->num_halo && pt->halo_ntype != NULL; h++) {
        EXPECT(pt->halo_ntype[h] == g->ntype[orig[pt->halo[h]]]);
    }
    /* the type ranges of partition.json hold exactly the nodes of each type */
    int T1 = halo_store_info(st)->ntypes + 1;
    for (int t = 0; t < g->ntypes && halo_store_info(st)->type_start != NULL; t++) {
        const int64_t *ts = halo_store_info(st)->type_start + (size_t)rank * T1;
        for (int64_t id = ts[t]; id < ts[t + 1]; id++) {
            EXPECT(g->ntype[orig[id]] == t);
        }
    }
    report("typed_part_files_match_the_input_graph");
}

/* Compares the distributed and single-process blocks of a few batches of seeds from this
 * rank's training nodes or from the next part's papers. */
static void compare(const char *spec, int from_other_part)
{
    halo_rel_fanouts fan;
    int layers = halo_sample_parse_rel_fanouts(spec, g->rel, g->nrels, fan, HALO_MAX_LAYERS);
    MUST(layers);
    halo_sampler *s = halo_sampler_new();
    halo_minibatch md, mr;
    memset(&md, 0, sizeof md);
    memset(&mr, 0, sizeof mr);
    int other = (rank + 1) % ranks;
    const int64_t *ts = halo_store_info(st)->type_start + (size_t)other * (halo_store_info(st)->ntypes + 1);
    for (int b = 0; b < 3; b++) {
        int32_t seeds[32], rseeds[32], ns = 0;
        for (int i = 0; i < 32; i++) {
            int32_t v = from_other_part
                            ? (int32_t)(ts[0] + (b * 32 + i) % (ts[1] - ts[0] > 0 ? ts[1] - ts[0]
                                                                                    : 1))
                            : halo_store_part(st)->train[(b * 32 + i) % halo_store_part(st)->num_train];
            int dup = 0;
            for (int j = 0; j < ns; j++) {
                dup |= seeds[j] == v;
            }
            if (!dup) {
                seeds[ns] = v;
                rseeds[ns++] = (int32_t)orig[v];
            }
        }
        halo_sample_key k = {23, 1, b};
        MUST(halo_store_sample_typed(st, s, fan, layers, &k, seeds, ns, &md));
        MUST(halo_sample_graph_typed(s, g, fan, layers, &k, rseeds, ns, &mr));
        for (int l = 0; l < layers; l++) {
            const halo_block *d = &md.blocks[l], *r = &mr.blocks[l];
            EXPECT(d->num_dst == r->num_dst && d->num_src == r->num_src &&
                   d->num_edges == r->num_edges);
            EXPECT(d->etype != NULL);
            if (d->num_src != r->num_src || d->num_edges != r->num_edges || d->etype == NULL) {
                continue;
            }
            int bad = 0;
            for (int32_t i = 0; i < d->num_src; i++) {
                bad += orig[d->src_gid[i]] != r->src_gid[i];
            }
            EXPECT(bad == 0);
            EXPECT(memcmp(d->indices, r->indices, (size_t)d->num_edges * 4) == 0);
            EXPECT(memcmp(d->etype, r->etype, (size_t)d->num_edges) == 0);
        }
    }
    halo_sample_free(&md);
    halo_sample_free(&mr);
    halo_sampler_free(s);
}

static void distributed_typed_blocks_equal_single_process_blocks(void)
{
    int64_t before = halo_store_stats_get(st)->sample_remote_nodes;
    compare("cites=4,writes=3,rev_has_topic=2,*=1;cites=6,*=3", 0);
    compare("2,5", 0);
    compare("rev_cites=-1,writes=2;has_topic=3,rev_writes=2,*=0;cites=5,writes=5", 1);
    EXPECT(ranks == 1 || halo_store_stats_get(st)->sample_remote_nodes > before);
    report("distributed_typed_blocks_equal_single_process_blocks");
}

int main(int argc, char **argv)
{
    MUST(halo_comm_init(&argc, &argv, &comm));
    rank = halo_comm_rank(comm);
    ranks = halo_comm_size(comm);
    setup();
    typed_part_files_match_the_input_graph();
    distributed_typed_blocks_equal_single_process_blocks();
    if (rank == 0) {
        printf("1..%d\n", test_no);
    }
    halo_store_close(st);
    halo_free(orig);
    halo_graph_free(g);
    halo_comm_finalize(comm);
    return total_failed > 0;
}
