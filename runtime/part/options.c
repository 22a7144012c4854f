/* Partitioning options: defaults, the parsing of each flag, the part count they resolve to, the
 * assignment check and the dispatch to the partitioners (metis.c, stream.c, assign.c, random.c). */
#include "part/partition.h"

#include "core/args.h"
#include "core/err.h"
#include "core/log.h"
#include "core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[] = {"metis", "multilevel", "random", "stream", "custom",
                                             "ptscotch"};
static const char *const constraint_names[3] = {"nodes", "train", "edges"};

const char *halo_partition_constraint_name(int c)
{
    return c >= 0 && c < 3 ? constraint_names[c] : "?";
}

void halo_partition_opts_init(halo_partition_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->choice.method = HALO_PARTITION_METIS;
    opts->choice.constraints = HALO_PCON_ALL;
    opts->choice.imbalance = 1.05;
    opts->choice.objective = HALO_POBJ_CUT;
    opts->choice.stream = HALO_STREAM_LDG;
    opts->seed = 1;
}

const char *halo_partition_method_name(int method)
{
    if (method < 0 || method > HALO_PARTITION_PTSCOTCH) {
        return "?";
    }
    return method_names[method];
}

int halo_partition_parse_method(const char *s, int *method)
{
    for (int m = 0; m <= HALO_PARTITION_PTSCOTCH; m++) {
        if (strcmp(s, method_names[m]) == 0) {
            *method = m;
            return 0;
        }
    }
    return halo_errorf(HALO_EUSAGE,
                       "--method: '%s' is not one of metis, multilevel, random, stream, custom, "
                       "ptscotch", s);
}

/* Parses a comma-separated subset of nodes,train,edges ("none" is not allowed: METIS needs a
 * column, so an empty list means nodes). */
int halo_partition_parse_constraints(const char *s, unsigned *constraints)
{
    char buf[256], *v[16];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) {
        return halo_errorf(HALO_EUSAGE, "--constraints: list is too long");
    }
    int n = halo_split_list(buf, "--constraints", v, 16);
    if (n < 0) {
        return n;
    }
    unsigned c = 0;
    for (int k = 0; k < n; k++) {
        bool found = false;
        for (int i = 0; i < 3; i++) {
            if (strcmp(v[k], constraint_names[i]) == 0) {
                c |= 1u << i;
                found = true;
            }
        }
        if (!found) {
            return halo_errorf(HALO_EUSAGE, "--constraints: '%s' is not one of nodes, train, edges",
                               v[k]);
        }
    }
    *constraints = c;
    return 0;
}

int halo_partition_parse_objective(const char *s, int *objective)
{
    if (strcmp(s, "cut") == 0) {
        *objective = HALO_POBJ_CUT;
    } else if (strcmp(s, "vol") == 0) {
        *objective = HALO_POBJ_VOL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--objective: '%s' is not cut or vol", s);
    }
    return 0;
}

int halo_partition_parse_stream(const char *s, int *stream)
{
    if (strcmp(s, "ldg") == 0) {
        *stream = HALO_STREAM_LDG;
    } else if (strcmp(s, "fennel") == 0) {
        *stream = HALO_STREAM_FENNEL;
    } else {
        return halo_errorf(HALO_EUSAGE, "--stream: '%s' is not ldg or fennel", s);
    }
    return 0;
}

/* P, machines and trainers per machine from opts: P = machines * trainers, with whichever of
 * parts / machines is missing derived from the other. */
int halo_partition_resolve(const halo_graph *g, const halo_partition_opts *opts, int *parts,
                           int *machines, int *trainers)
{
    int t = opts->trainers_per_machine > 0 ? opts->trainers_per_machine : 1;
    int p = opts->parts, m = opts->machines;
    if (p < 0 || m < 0 || opts->trainers_per_machine < 0) {
        return halo_errorf(HALO_EUSAGE, "partition: parts, machines and trainers must be >= 1");
    }
    if (p == 0 && m == 0) {
        return halo_errorf(HALO_EUSAGE, "partition: --parts must be >= 1 (got 0)");
    }
    if (m == 0) {
        if (p % t != 0) {
            return halo_errorf(HALO_EUSAGE,
                               "partition: --parts %d is not a multiple of --trainers %d",
                               p, t);
        }
        m = p / t;
    }
    if ((int64_t)m * t > (1 << 20)) {
        return halo_errorf(HALO_EUSAGE, "partition: %d machines x %d trainers is too many", m, t);
    }
    if (p == 0) {
        p = m * t;
    }
    if (p != m * t) {
        return halo_errorf(HALO_EUSAGE,
                           "partition: --parts %d != --machines %d x --trainers %d", p,
                           m, t);
    }
    if (p > g->nodes) {
        return halo_errorf(HALO_EUSAGE, "partition: %d parts for a graph of %lld nodes", p,
                           (long long)g->nodes);
    }
    *parts = p;
    *machines = m;
    *trainers = t;
    return 0;
}

/* Checks that every entry of assignment lies in [0, parts) and that no part is left empty (a
 * part without nodes has no rank's work and breaks the contiguous id ranges' meaning). */
int halo_partition_check_assignment(const int32_t *a, int64_t n, int parts, const char *where)
{
    int64_t *count = HALO_NEW(int64_t, (size_t)parts);
    int rc = 0;
    for (int64_t v = 0; v < n && rc == 0; v++) {
        if (a[v] < 0 || a[v] >= parts) {
            rc = halo_errorf(HALO_EINPUT, "%s: node %lld is assigned to part %d, not in [0, %d)",
                             where, (long long)v, a[v], parts);
        } else {
            count[a[v]]++;
        }
    }
    for (int k = 0; k < parts && rc == 0; k++) {
        if (count[k] == 0) {
            rc = halo_errorf(HALO_EINPUT, "%s: part %d of %d has no node", where, k, parts);
        }
    }
    halo_free(count);
    return rc;
}

int halo_partition_assign(const halo_graph *g, const halo_partition_opts *opts,
                          int32_t *assignment)
{
    int p, m, t;
    HALO_CHECK(halo_partition_resolve(g, opts, &p, &m, &t));
    const halo_partition_choice *c = &opts->choice;
    unsigned con = c->constraints != 0 ? c->constraints : HALO_PCON_NODES;
    if (c->imbalance < 1.0) {
        return halo_errorf(HALO_EUSAGE, "partition: imbalance %g is below 1", c->imbalance);
    }
    switch (c->method) {
    case HALO_PARTITION_METIS:
        return halo_partition_metis(g, p, con, c->imbalance, c->objective, opts->seed, assignment);
    case HALO_PARTITION_MULTILEVEL:
        return halo_partition_multilevel(g, m, t, con, c->imbalance, c->objective, opts->seed,
                                         assignment);
    case HALO_PARTITION_RANDOM: return halo_partition_random(g, p, opts->seed, assignment);
    case HALO_PARTITION_STREAM:
        return halo_partition_stream(g, p, con, c->imbalance, c->stream, opts->seed, assignment);
    case HALO_PARTITION_PTSCOTCH: /* the ranks' assignment, checked and used as a custom one */
    case HALO_PARTITION_CUSTOM:
        if (c->assignment == NULL) {
            return halo_errorf(HALO_EUSAGE, "partition: custom method without an assignment");
        }
        if (c->assignment_len != g->nodes) {
            return halo_errorf(HALO_EINPUT,
                               "custom assignment: %lld entries for a graph of %lld nodes",
                               (long long)c->assignment_len, (long long)g->nodes);
        }
        HALO_CHECK(halo_partition_check_assignment(c->assignment, g->nodes, p, "custom assignment"));
        memcpy(assignment, c->assignment, (size_t)g->nodes * sizeof *assignment);
        return 0;
    default: return halo_errorf(HALO_EUSAGE, "partition: unknown method %d", c->method);
    }
}
