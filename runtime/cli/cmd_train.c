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

int halo_cmd_train(int argc, char **argv)
{
    halo_train_opts o;
    halo_train_opts_default(&o);
    const char *policy = NULL, *fanouts = NULL, *device = "auto", *eval = "sampled";
    const char *eval_fanouts = NULL, *metrics = NULL, *checkpoint = NULL, *netem = NULL;
    const char *batching = "local", *model = "sage", *embed_optim = "adam";
    const char *timeline = NULL;
    const char *batch_s = NULL, *hidden_s = NULL, *lr_s = NULL; /* NULL: the model's default */
    int64_t seed = (int64_t)o.seed;
    bool resume = false, check = false, quiet_table = false;
    halo_strlist sets = {.n = 0};
    const halo_opt opts[] = {
        {"policy", 0, HALO_OPT_STRING, &policy, "FILE|NAME",
         "policy file, or NAME of policies/NAME.lua (default: built-in defaults)"},
        {"set", 0, HALO_OPT_LIST, &sets, "NAME=VALUE", "set a policy parameter (repeatable)"},
        {"epochs", 'e', HALO_OPT_INT, &o.epochs, "E",
         "epochs to train (a resumed run goes up to E)"},
        {"batch", 'b', HALO_OPT_STRING, &batch_s, "B",
         "seeds per mini-batch (per rank with --batching local; default 2000, 500 with --model "
         "rgcn)"},
        {"batching", 0, HALO_OPT_STRING, &batching, "local|global",
         "local: each rank cuts its own shuffled seeds (DistDGL); global: one global order, "
         "batch b is the same seeds whatever the rank count"},
        {"fanouts", 'f', HALO_OPT_STRING, &fanouts, "LIST",
         "fanouts, input layer first (overrides the policy's fanout hook); on a typed partition "
         "also per relation, 'cites=10,*=5;*=10' (docs/hetero.md)"},
        {"model", 0, HALO_OPT_STRING, &model, "sage|rgcn",
         "GraphSAGE (mean), or RGCN: a weight per relation, mean per relation (docs/rgcn.md)"},
        {"bases", 0, HALO_OPT_INT, &o.bases, "B",
         "RGCN: relations share B basis matrices (0: one weight per relation)"},
        {"embed-optimizer", 0, HALO_OPT_STRING, &embed_optim, "adam|adagrad",
         "sparse optimiser of the learnable rows of featureless node types (docs/hetero.md)"},
        {"embed-lr", 0, HALO_OPT_DOUBLE, &o.embed_lr, "X", "their learning rate"},
        {"hidden", 0, HALO_OPT_STRING, &hidden_s, "H",
         "hidden width (default 16; 64 with --model rgcn)"},
        {"lr", 0, HALO_OPT_STRING, &lr_s, "X",
         "Adam learning rate (default 0.003; 0.01 with --model rgcn)"},
        {"dropout", 0, HALO_OPT_DOUBLE, &o.dropout, "P", "dropout probability"},
        {"weight-decay", 0, HALO_OPT_DOUBLE, &o.weight_decay, "X", "Adam L2 coefficient"},
        {"seed", 's', HALO_OPT_I64, &seed, "S", "seed of every random choice"},
        {"device", 0, HALO_OPT_STRING, &device, "auto|cpu|gpu",
         "where to compute (auto: GPU when one exists)"},
        {"threads", 0, HALO_OPT_INT, &o.threads, "N",
         "CPU threads per rank (0: cores / ranks on this machine)"},
        {"eval", 0, HALO_OPT_STRING, &eval, "sampled|full|none",
         "evaluation: sampled inference or layer-wise full-neighbour"},
        {"eval-fanouts", 0, HALO_OPT_STRING, &eval_fanouts, "LIST",
         "fanouts of sampled evaluation (default: the training fanouts)"},
        {"eval-every", 0, HALO_OPT_INT, &o.eval_every, "N",
         "evaluate every N epochs and at the end"},
        {"eval-batch", 0, HALO_OPT_I64, &o.eval_batch, "B", "nodes per evaluation batch per rank"},
        {"metrics", 'm', HALO_OPT_STRING, &metrics, "FILE", "JSON Lines metrics (rank 0 writes)"},
        {"trace", 0, HALO_OPT_STRING, &o.trace, "FILE",
         "access trace for `halo trace replay` (FILE.rR per rank when P > 1)"},
        {"checkpoint", 0, HALO_OPT_STRING, &checkpoint, "DIR", "checkpoint directory"},
        {"checkpoint-every", 0, HALO_OPT_INT, &o.checkpoint_every, "N",
         "write the checkpoint every N epochs and at the end"},
        {"resume", 0, HALO_OPT_FLAG, &resume, NULL, "continue from --checkpoint DIR"},
        {"check", 0, HALO_OPT_FLAG, &check, NULL,
         "compare the parameter checksum of every rank after each epoch"},
        {"netem", 0, HALO_OPT_STRING, &netem, "SPEC", "emulated network, e.g. lat=50us,bw=10Gbit"},
        {"depth", 0, HALO_OPT_INT | HALO_OPT_SIGNED, &o.depth, "N",
         "pipeline depth: batches prepared ahead of the compute (-1: the policy's)"},
        {"sampler-threads", 0, HALO_OPT_INT, &o.sampler_threads, "N",
         "sampling threads of the pipeline (0: the policy's)"},
        {"timeline", 0, HALO_OPT_STRING, &timeline, "FILE",
         "write every stage's start and end per rank and batch (see halo timeline)"},
        {"no-table", 0, HALO_OPT_FLAG, &quiet_table, NULL, "no per-epoch table on stderr"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    const halo_cmd_help help = {
        "mpirun -np P halo train PDIR [--policy F] [--set k=v] [--epochs E] [--batch B] "
        "[--device auto|cpu|gpu] [--metrics FILE.jsonl] [--checkpoint DIR] [--resume]",
        "Trains GraphSAGE on the partition PDIR with one MPI rank per part (P = parts):\n"
        "each rank trains on its part's training seeds, sampling ego-networks that reach into\n"
        "other parts and pulling remote features; gradients are summed with one allreduce per\n"
        "step, so every rank holds the same weights. Rank 0 prints a row per epoch (loss, train\n"
        "and validation accuracy, time and stage breakdown) and the final test accuracy.\n"
        "Same configuration and ranks: the same losses, bit for bit on the CPU. --model rgcn\n"
        "trains an RGCN (a weight per relation) instead.",
    };
    char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = halo_cli_parse(&help, opts, argc, argv, pos, &npos);
    if (rc >= 0) {
        return rc;
    }
    if (npos != 1) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "train: one partition directory expected"));
    }
    if (sets.n > 0 && policy == NULL) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "train: --set needs --policy"));
    }
    o.pdir = pos[0];
    char policy_buf[4096];
    o.policy = halo_cli_policy_path(policy, policy_buf, sizeof policy_buf);
    o.sets = sets.v;
    o.nsets = sets.n;
    o.fanouts = fanouts;
    o.eval_fanouts = eval_fanouts;
    o.metrics = metrics;
    o.checkpoint = checkpoint;
    o.netem = netem;
    o.timeline = timeline;
    o.resume = resume;
    o.check = check;
    o.table = !quiet_table;
    o.seed = (uint64_t)seed;
    if (halo_train_parse_batching(batching, &o.batching) < 0 ||
        halo_model_device_parse(device, &o.device) < 0 ||
        halo_model_kind_parse(model, &o.model) < 0 ||
        halo_embed_optim_parse(embed_optim, &o.embed_optim) < 0 ||
        halo_train_parse_eval(eval, &o.eval) < 0) {
        return halo_cli_fail(HALO_EUSAGE);
    }
    halo_train_opts_for_model(&o);
    int64_t hidden = o.hidden;
    if ((batch_s != NULL && halo_parse_i64(batch_s, "--batch", &o.batch) < 0) ||
        (hidden_s != NULL && halo_parse_i64(hidden_s, "--hidden", &hidden) < 0) ||
        (lr_s != NULL && halo_parse_f64(lr_s, "--lr", &o.lr) < 0)) {
        return halo_cli_fail(HALO_EUSAGE);
    }
    if (hidden > INT32_MAX || hidden < INT32_MIN) {
        return halo_cli_fail(halo_errorf(HALO_EUSAGE, "--hidden: %s is out of range", hidden_s));
    }
    o.hidden = (int)hidden; /* below 1: refused by halo_train_opts_check */
    halo_comm *comm;
    rc = halo_comm_init(&argc, &argv, &comm);
    if (rc < 0) {
        return halo_cli_fail(rc);
    }
    /* checked after MPI start-up, so that every rank says it before any exits (mpirun ends the
     * job at the first non-zero exit) */
    rc = halo_train_opts_check(&o);
    if (rc == 0 && checkpoint != NULL) {
        /* before training, not at the first checkpoint: never replace what is not one */
        rc = halo_output_check(checkpoint, "params.f32", "checkpoint");
    }
    if (rc == 0 && timeline != NULL) {
        /* written at the end: refused now, not after the run */
        rc = halo_error_prefix(
            halo_output_file_check(timeline, "timeline file", HALO_TIMELINE_SIG, false),
            "--timeline");
    }
    if (rc == 0 && netem != NULL) {
        halo_netem ne;
        rc = halo_netem_parse(netem, &ne);
    }
    halo_train_result res;
    if (rc == 0) {
        rc = halo_train_run(comm, &o, &res);
    }
    /* every rank gets here (failures are agreed); one line per distinct error, no abort */
    int code = halo_comm_report(comm, rc);
    if (code != 0) {
        halo_comm_finalize(comm);
        return code;
    }
    if (halo_comm_rank(comm) == 0) {
        printf("halo train: %d epoch%s on %d rank%s (%s), mean epoch %.3f s", res.epochs,
               halo_plural(res.epochs), halo_comm_size(comm), halo_plural(halo_comm_size(comm)),
               res.device, res.mean_epoch_s);
        if (res.test_acc >= 0) {
            printf(", val acc %.4f, test acc %.4f", res.val_acc, res.test_acc);
        }
        printf(", params %016" PRIx64, res.param_checksum);
        if (res.embed_checksum != 0) {
            printf(", embeddings %016" PRIx64, res.embed_checksum);
        }
        printf("\n");
        fflush(stdout);
    }
    halo_comm_finalize(comm);
    return 0;
}
