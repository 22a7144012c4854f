/* halo train: synchronous data-parallel GraphSAGE or RGCN training over a partition under mpirun. */
#include "cli/cli.h"

#include "comm/comm.h"
#include "core/args.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "embed/embed.h"
#include "model/model.h"
#include "pipe/timeline.h"
#include "train/train.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The flags of `halo train` that are not fields of halo_train_opts as they are. */
typedef struct train_cli {
    halo_train_opts o;        /* the run */
    const char *policy;       /* --policy as given */
    const char *fanouts;      /* --fanouts */
    const char *device;       /* --device auto|cpu|gpu */
    const char *eval;         /* --eval sampled|full|none */
    const char *eval_fanouts; /* --eval-fanouts */
    const char *metrics;      /* --metrics */
    const char *checkpoint;   /* --checkpoint */
    const char *netem;        /* --netem */
    const char *batching;     /* --batching local|global */
    const char *model;        /* --model sage|rgcn|gat */
    const char *embed_optim;  /* --embed-optimizer */
    const char *timeline;     /* --timeline */
    const char *batch;        /* --batch, NULL: the model's default */
    const char *hidden;       /* --hidden, NULL: the model's default */
    const char *lr;           /* --lr, NULL: the model's default */
    int64_t seed;             /* --seed */
    bool resume;              /* --resume */
    bool check;               /* --check */
    bool quiet_table;         /* --no-table */
    halo_strlist sets;        /* --set */
    char policy_buf[4096];    /* the resolved --policy path */
} train_cli;

enum { TRAIN_NOPTS = 40 }; /* room for train_flags' table */

/* The flag table of `halo train`, pointing into c. */
static void train_flags(train_cli *c, halo_opt opts[TRAIN_NOPTS])
{
    const halo_opt t[] = {
        {"policy", 0, HALO_OPT_STRING, &c->policy, "FILE|NAME",
         "policy file, or NAME of policies/NAME.lua (default: built-in defaults)"},
        {"set", 0, HALO_OPT_LIST, &c->sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"epochs", 'e', HALO_OPT_INT, &c->o.epochs, "E",
         "epochs to train (a resumed run goes up to E)"},
        {"batch", 'b', HALO_OPT_STRING, &c->batch, "B",
         "seeds per mini-batch (per rank with --batching local; default 2000, 500 with --model "
         "rgcn)"},
        {"batching", 0, HALO_OPT_STRING, &c->batching, "local|global",
         "local: each rank cuts its own shuffled seeds (DistDGL); global: one global order, "
         "batch b is the same seeds whatever the rank count"},
        {"fanouts", 'f', HALO_OPT_STRING, &c->fanouts, "LIST",
         "fanouts, input layer first (overrides the policy's fanout hook); on a typed partition "
         "also per relation, 'cites=10,*=5;*=10' (docs/hetero.md)"},
        {"model", 0, HALO_OPT_STRING, &c->model, "sage|rgcn|gat",
         "GraphSAGE (mean), RGCN: a weight per relation, mean per relation (docs/rgcn.md), or "
         "GAT: attention over the sampled neighbours, as DGL's GATConv (docs/model.md)"},
        {"heads", 0, HALO_OPT_INT, &c->o.heads, "H",
         "GAT: attention heads of each hidden layer, concatenated"},
        {"out-heads", 0, HALO_OPT_INT, &c->o.out_heads, "H",
         "GAT: attention heads of the output layer, averaged"},
        {"bases", 0, HALO_OPT_INT, &c->o.bases, "B",
         "RGCN: relations share B basis matrices (0: one weight per relation)"},
        {"embed-optimizer", 0, HALO_OPT_STRING, &c->embed_optim, "adam|adagrad",
         "sparse optimiser of the learnable rows of featureless node types (docs/hetero.md)"},
        {"embed-lr", 0, HALO_OPT_DOUBLE, &c->o.embed_lr, "X", "their learning rate"},
        {"hidden", 0, HALO_OPT_STRING, &c->hidden, "H",
         "hidden width (default 16; 64 with --model rgcn; with --model gat per head, default 8)"},
        {"lr", 0, HALO_OPT_STRING, &c->lr, "X",
         "Adam learning rate (default 0.003; 0.01 with --model rgcn, 0.005 with --model gat)"},
        {"dropout", 0, HALO_OPT_DOUBLE, &c->o.dropout, "P", "dropout probability"},
        {"weight-decay", 0, HALO_OPT_DOUBLE, &c->o.weight_decay, "X", "Adam L2 coefficient"},
        {"seed", 's', HALO_OPT_I64, &c->seed, "S", "seed of every random choice"},
        {"device", 0, HALO_OPT_STRING, &c->device, "auto|cpu|gpu",
         "where to compute (auto: GPU when one exists)"},
        {"threads", 0, HALO_OPT_INT, &c->o.threads, "N",
         "CPU threads per rank (0: cores / ranks on this machine)"},
        {"eval", 0, HALO_OPT_STRING, &c->eval, "sampled|full|none",
         "evaluation: sampled inference or layer-wise full-neighbour"},
        {"eval-fanouts", 0, HALO_OPT_STRING, &c->eval_fanouts, "LIST",
         "fanouts of sampled evaluation (default: the training fanouts)"},
        {"eval-every", 0, HALO_OPT_INT, &c->o.eval_every, "N",
         "evaluate every N epochs and at the end"},
        {"eval-batch", 0, HALO_OPT_I64, &c->o.eval_batch, "B", "nodes per evaluation batch per rank"},
        {"metrics", 'm', HALO_OPT_STRING, &c->metrics, "FILE", "JSON Lines metrics (rank 0 writes)"},
        {"trace", 0, HALO_OPT_STRING, &c->o.trace, "FILE",
         "access trace for `halo trace replay` (FILE.rR per rank when P > 1)"},
        {"checkpoint", 0, HALO_OPT_STRING, &c->checkpoint, "DIR", "checkpoint directory"},
        {"checkpoint-every", 0, HALO_OPT_INT, &c->o.checkpoint_every, "N",
         "write the checkpoint every N epochs and at the end"},
        {"resume", 0, HALO_OPT_FLAG, &c->resume, NULL, "continue from --checkpoint DIR"},
        {"check", 0, HALO_OPT_FLAG, &c->check, NULL,
         "compare the parameter checksum of every rank after each epoch"},
        {"netem", 0, HALO_OPT_STRING, &c->netem, "SPEC", "emulated network, e.g. lat=50us,bw=10Gbit"},
        {"depth", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &c->o.depth, "N",
         "pipeline depth: batches prepared ahead of the compute (-1: the policy's)"},
        {"sampler-threads", 0, HALO_OPT_INT, &c->o.sampler_threads, "N",
         "sampling threads of the pipeline (0: the policy's)"},
        {"timeline", 0, HALO_OPT_STRING, &c->timeline, "FILE",
         "write every stage's start and end per rank and batch (see halo timeline)"},
        {"no-table", 0, HALO_OPT_FLAG, &c->quiet_table, NULL, "no per-epoch table on stderr"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    _Static_assert(sizeof t / sizeof t[0] <= TRAIN_NOPTS, "TRAIN_NOPTS too small");
    memcpy(opts, t, sizeof t);
}

/* c->o from the flags: the enumerations, the model's defaults (halo_train_opts_for_model), then
 * the --batch, --hidden and --lr given. */
static int train_options(train_cli *c, int npos, char **pos)
{
    if (npos != 1) {
        return halo_errorf(HALO_EUSAGE, "train: one partition directory expected");
    }
    if (c->sets.n > 0 && c->policy == NULL) {
        return halo_errorf(HALO_EUSAGE, "train: --set needs --policy");
    }
    halo_train_opts *o = &c->o;
    o->pdir = pos[0];
    o->policy = halo_cli_policy_path(c->policy, c->policy_buf, sizeof c->policy_buf);
    o->sets = c->sets.v;
    o->nsets = c->sets.n;
    o->fanouts = c->fanouts;
    o->eval_fanouts = c->eval_fanouts;
    o->metrics = c->metrics;
    o->checkpoint = c->checkpoint;
    o->netem = c->netem;
    o->timeline = c->timeline;
    o->resume = c->resume;
    o->check = c->check;
    o->table = !c->quiet_table;
    o->seed = (uint64_t)c->seed;
    if (halo_train_parse_batching(c->batching, &o->batching) < 0 ||
        halo_model_device_parse(c->device, &o->device) < 0 ||
        halo_model_kind_parse(c->model, &o->model) < 0 ||
        halo_embed_optim_parse(c->embed_optim, &o->embed_optim) < 0 ||
        halo_train_parse_eval(c->eval, &o->eval) < 0) {
        return HALO_EUSAGE;
    }
    halo_train_opts_for_model(o);
    int64_t hidden = o->hidden;
    if ((c->batch != NULL && halo_parse_i64(c->batch, "--batch", &o->batch) < 0) ||
        (c->hidden != NULL && halo_parse_i64(c->hidden, "--hidden", &hidden) < 0) ||
        (c->lr != NULL && halo_parse_f64(c->lr, "--lr", &o->lr) < 0)) {
        return HALO_EUSAGE;
    }
    if (hidden > INT32_MAX || hidden < INT32_MIN) {
        return halo_errorf(HALO_EUSAGE, "--hidden: %s is out of range", c->hidden);
    }
    o->hidden = (int)hidden; /* below 1: refused by halo_train_opts_check */
    return 0;
}

/* The checks after MPI start-up, so that every rank says it before any exits (mpirun ends the
 * job at the first non-zero exit). */
static int train_check(const train_cli *c)
{
    int rc = halo_train_opts_check(&c->o);
    if (rc == 0 && c->checkpoint != NULL) {
        /* before training, not at the first checkpoint: never replace what is not one */
        rc = halo_output_check(c->checkpoint, "params.f32", "checkpoint");
    }
    if (rc == 0 && c->timeline != NULL) {
        /* written at the end: refused now, not after the run */
        rc = halo_error_prefix(
            halo_output_file_check(c->timeline, "timeline file", HALO_TIMELINE_SIG, false),
            "--timeline");
    }
    if (rc == 0 && c->netem != NULL) {
        halo_netem ne;
        rc = halo_netem_parse(c->netem, &ne);
    }
    return rc;
}

/* Rank 0's line of a finished run. */
static void train_print(const halo_train_result *res, int ranks)
{
    printf("halo train: %d epoch%s on %d rank%s (%s), mean epoch %.3f s", res->epochs,
           halo_plural(res->epochs), ranks, halo_plural(ranks), res->device, res->mean_epoch_s);
    if (res->test_acc >= 0) {
        printf(", val acc %.4f, test acc %.4f", res->val_acc, res->test_acc);
    }
    printf(", params %016" PRIx64, res->param_checksum);
    if (res->embed_checksum != 0) {
        printf(", embeddings %016" PRIx64, res->embed_checksum);
    }
    printf("\n");
    fflush(stdout);
}

int halo_cmd_train(int argc, char **argv)
{
    train_cli c = {.device = "auto", .eval = "sampled", .batching = "local", .model = "sage",
                   .embed_optim = "adam"};
    halo_train_opts_default(&c.o);
    c.seed = (int64_t)c.o.seed;
    halo_opt opts[TRAIN_NOPTS];
    train_flags(&c, opts);
    const halo_cmd_help help = {
        "mpirun -np P halo train PDIR [--policy F] [--set k=v] [--epochs E] [--batch B] "
        "[--device auto|cpu|gpu] [--metrics FILE.jsonl] [--checkpoint DIR] [--resume]",
        "Trains GraphSAGE on the partition PDIR with one MPI rank per part (P = parts):\n"
        "each rank trains on its part's training seeds, sampling ego-networks that reach into\n"
        "other parts and pulling remote features; gradients are summed with one allreduce per\n"
        "step, so every rank holds the same weights. Rank 0 prints a row per epoch (loss, train\n"
        "and validation accuracy, time and stage breakdown) and the final test accuracy.\n"
        "Same configuration and ranks: the same losses, bit for bit on the CPU. --model rgcn\n"
        "trains an RGCN (a weight per relation) instead, --model gat a GAT (DGL's GATConv:\n"
        "--heads heads of attention per hidden layer, concatenated, then ReLU; --out-heads\n"
        "heads on the output layer, averaged; --hidden is per head).",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    rc = train_options(&c, npos, pos);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    halo_comm *comm;
    rc = halo_comm_init(&argc, &argv, &comm);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    rc = train_check(&c);
    halo_train_result res;
    if (rc == 0) {
        rc = halo_train_run(comm, &c.o, &res);
    }
    /* every rank gets here (failures are agreed); one line per distinct error, no abort */
    int code = halo_comm_report(comm, rc);
    if (code != 0) {
        halo_comm_finalize(comm);
        return code;
    }
    if (halo_comm_rank(comm) == 0) {
        train_print(&res, halo_comm_size(comm));
    }
    halo_comm_finalize(comm);
    return 0;
}
