/* PT-Scotch on a channel: builds Scotch's distributed graph from each rank's slice, partitions
 * it with a k-way strategy and turns Scotch's error printing into halo errors. The only file that
 * includes <ptscotch.h>, compiled twice: against the 64-bit SCOTCH_Num build into bin/halo (so
 * that 2E may exceed 2^31) and against the 32-bit one into bin/halo-ptscotch32 (half the memory). */
#include "comm/comm_mpi.h"
#include "comm/ptscotch.h"

#include "core/err.h"
#include "core/mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ptscotch.h>

_Static_assert(sizeof(SCOTCH_Num) == sizeof(int64_t) || sizeof(SCOTCH_Num) == sizeof(int32_t),
               "halo links Debian's 64-bit or 32-bit PT-Scotch build");

/* PT-Scotch's last error message on this rank (its library prints through the hooks below). */
static char scotch_msg[512];

/* Scotch's error hook (its libptscotcherr would print to stderr and let the call fail): halo
 * keeps the first message of a call to report it as one line. The name is Scotch's. */
void SCOTCH_errorPrint(const char *const fmt, ...);
void SCOTCH_errorPrint(const char *const fmt, ...)
{
    if (scotch_msg[0] != '\0') {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(scotch_msg, sizeof scotch_msg, fmt, ap);
    va_end(ap);
}

/* Scotch's warning hook: warnings are dropped (halo checks the partition it gets itself). */
void SCOTCH_errorPrintW(const char *const fmt, ...);
void SCOTCH_errorPrintW(const char *const fmt, ...)
{
    (void)fmt;
}

/* Scotch's hook naming the program in its messages (unused: halo names the call instead). */
void SCOTCH_errorProg(const char *const name);
void SCOTCH_errorProg(const char *const name)
{
    (void)name;
}

/* Agrees on a local Scotch status over c: 0 when every rank's is 0, else a HALO_EMETIS error
 * with this rank's message (or the failing rank's number when this rank did not fail). */
static int scotch_agree(halo_comm *c, int status, const char *what)
{
    int bad = status != 0, any = 0;
    if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, halo_comm_mpi(c)) != MPI_SUCCESS) {
        return halo_errorf(HALO_EMPI, "ptscotch: %s: MPI_Allreduce failed", what);
    }
    if (any == 0) {
        return 0;
    }
    if (bad) {
        return halo_errorf(HALO_EMETIS, "ptscotch: %s failed: %s", what,
                           scotch_msg[0] != '\0' ? scotch_msg : "no message");
    }
    return halo_errorf(HALO_EMETIS, "ptscotch: %s failed on another rank", what);
}

int halo_comm_ptscotch_bits(void)
{
    return (int)(8 * sizeof(SCOTCH_Num));
}

/* Refuses, on every rank alike, a graph this build's SCOTCH_Num cannot hold: Scotch sums the
 * ranks' adjacency entries and vertex weights itself, and a sum past SCOTCH_NUMMAX would wrap. */
static int scotch_fits(halo_comm *c, int64_t n_local, const int64_t *xadj, const int64_t *vwgt)
{
    int64_t sum[2] = {xadj[n_local], vwgt == NULL ? n_local : 0};
    for (int64_t i = 0; vwgt != NULL && i < n_local; i++) {
        sum[1] += vwgt[i];
    }
    HALO_CHECK(halo_comm_allreduce_sum_i64(c, sum, 2));
    if (sum[0] > (int64_t)SCOTCH_NUMMAX || sum[1] > (int64_t)SCOTCH_NUMMAX) {
        return halo_errorf(HALO_EUSAGE, "ptscotch: %lld adjacency entries and a vertex weight "
                                        "sum of %lld exceed this build's %d-bit SCOTCH_Num",
                           (long long)sum[0], (long long)sum[1], halo_comm_ptscotch_bits());
    }
    return 0;
}

/* Scotch's form of a halo_malloc'd int64 array of n values (NULL stays NULL), made in place: the
 * array itself with a 64-bit SCOTCH_Num; else each value narrowed into the first half (element i
 * is read before any write reaches its bytes) and the second half handed back. The values fit:
 * scotch_fits bounds every sum they add up to. */
static SCOTCH_Num *to_scotch(int64_t *a, int64_t n)
{
    if (a == NULL || sizeof(SCOTCH_Num) == sizeof(int64_t)) {
        return (SCOTCH_Num *)a;
    }
    SCOTCH_Num *s = (SCOTCH_Num *)a;
    for (int64_t i = 0; i < n; i++) {
        s[i] = (SCOTCH_Num)a[i];
    }
    return halo_realloc(s, (size_t)(n > 0 ? n : 1) * sizeof *s);
}

/* What one partitioning holds of Scotch's, set up step by step and freed by run_free. */
typedef struct scotch_run {
    SCOTCH_Dgraph dg;      /* the ranks' slices */
    SCOTCH_Dgraph cdg;     /* dg bound to ctx (valid when bound) */
    SCOTCH_Context ctx;    /* deterministic threads, halo's seed */
    SCOTCH_Strat strat;    /* k-way into the machines (or all parts) */
    SCOTCH_Strat strat2;   /* k-way of one machine into its trainers */
    bool have_dg, have_strat, have_strat2, have_ctx, bound; /* what to free */
} scotch_run;

static void run_free(scotch_run *r)
{
    if (r->bound) {
        SCOTCH_dgraphExit(&r->cdg);
    }
    if (r->have_strat) {
        SCOTCH_stratExit(&r->strat);
    }
    if (r->have_strat2) {
        SCOTCH_stratExit(&r->strat2);
    }
    if (r->have_dg) {
        SCOTCH_dgraphExit(&r->dg);
    }
    if (r->have_ctx) {
        SCOTCH_contextExit(&r->ctx);
    }
}

/* Builds Scotch's graph from the slices, the strategies (two levels: each gets the square root
 * of the tolerance, as imbalances multiply) and a context asking Scotch's threads for a
 * deterministic run with halo's seed; agreed over c step by step. */
static int run_setup(halo_comm *c, scotch_run *r, SCOTCH_Num n_local, SCOTCH_Num *xadj,
                     SCOTCH_Num *adj, SCOTCH_Num *vwgt, int machines, int trainers,
                     double imbalance, uint64_t seed)
{
    r->have_dg = SCOTCH_dgraphInit(&r->dg, halo_comm_mpi(c)) == 0;
    HALO_CHECK(scotch_agree(c, !r->have_dg, "SCOTCH_dgraphInit"));
    /* Scotch uses the arrays as they are (no copy) and does not write them */
    int st = SCOTCH_dgraphBuild(&r->dg, 0, n_local, n_local, xadj, NULL, vwgt, NULL,
                                xadj[n_local], xadj[n_local], adj, NULL, NULL);
    HALO_CHECK(scotch_agree(c, st, "SCOTCH_dgraphBuild"));
    double tol = trainers > 1 ? sqrt(imbalance) - 1.0 : imbalance - 1.0;
    r->have_strat = SCOTCH_stratInit(&r->strat) == 0;
    r->have_strat2 = SCOTCH_stratInit(&r->strat2) == 0;
    st = !r->have_strat || !r->have_strat2 ||
         SCOTCH_stratDgraphMapBuild(&r->strat, SCOTCH_STRATQUALITY, machines, machines, tol) ||
         SCOTCH_stratDgraphMapBuild(&r->strat2, SCOTCH_STRATQUALITY, trainers, trainers, tol);
    HALO_CHECK(scotch_agree(c, st, "SCOTCH_stratDgraphMapBuild"));
    r->have_ctx = SCOTCH_contextInit(&r->ctx) == 0;
    st = !r->have_ctx;
    if (r->have_ctx) {
        SCOTCH_contextRandomSeed(&r->ctx, (SCOTCH_Num)(seed & 0x7fffffffu));
        st = SCOTCH_contextOptionSetNum(&r->ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0;
        r->bound = st == 0 && SCOTCH_contextBindDgraph(&r->ctx, &r->dg, &r->cdg) == 0;
        st = st != 0 || !r->bound;
    }
    return scotch_agree(c, st, "SCOTCH_contextBindDgraph");
}

/* Second level: each machine's induced subgraph (collective, one machine after the other, bound
 * to the run's context) into its trainers; out[i] (the machine of local row i on entry) becomes
 * machine x trainers + trainer. Scotch's status (non-zero on failure). */
static int split_machines(MPI_Comm comm, scotch_run *r, SCOTCH_Num n_local, int machines,
                          int trainers, SCOTCH_Num *out)
{
    SCOTCH_Num *sub = HALO_NEW(SCOTCH_Num, n_local > 0 ? n_local : 1);
    SCOTCH_Num *mach = HALO_ALLOC(SCOTCH_Num, n_local > 0 ? n_local : 1);
    memcpy(mach, out, (size_t)n_local * sizeof *mach);
    int st = 0;
    for (int m = 0; m < machines && st == 0; m++) {
        SCOTCH_Num nm = 0;
        for (SCOTCH_Num i = 0; i < n_local; i++) {
            nm += mach[i] == m;
        }
        SCOTCH_Dgraph ind, cind;
        st = SCOTCH_dgraphInit(&ind, comm) != 0;
        if (st == 0) {
            st = SCOTCH_dgraphInducePart(&r->cdg, mach, m, nm, &ind);
        }
        bool bound = st == 0 && SCOTCH_contextBindDgraph(&r->ctx, &ind, &cind) == 0;
        st = st != 0 || !bound;
        if (st == 0) {
            st = SCOTCH_dgraphPart(&cind, trainers, &r->strat2, sub);
        }
        if (bound) {
            SCOTCH_dgraphExit(&cind);
        }
        SCOTCH_dgraphExit(&ind);
        for (SCOTCH_Num i = 0, j = 0; st == 0 && i < n_local; i++) {
            if (mach[i] == m) { /* induced rows keep the order of the original local rows */
                out[i] = m * trainers + sub[j++];
            }
        }
    }
    halo_free(sub);
    halo_free(mach);
    return st;
}

int halo_comm_ptscotch_part(halo_comm *c, int64_t n_local, int64_t *xadj, int64_t *adj,
                            int64_t *vwgt, int machines, int trainers, double imbalance,
                            uint64_t seed, int32_t *part)
{
    scotch_msg[0] = '\0';
    scotch_run r;
    memset(&r, 0, sizeof r);
    int rc = scotch_fits(c, n_local, xadj, vwgt);
    int64_t n_adj = xadj[n_local];
    SCOTCH_Num *sxadj = to_scotch(xadj, n_local + 1), *sadj = to_scotch(adj, n_adj);
    SCOTCH_Num *svwgt = to_scotch(vwgt, n_local);
    if (rc == 0) {
        rc = run_setup(c, &r, (SCOTCH_Num)n_local, sxadj, sadj, svwgt, machines, trainers,
                       imbalance, seed);
    }
    SCOTCH_Num *out = HALO_NEW(SCOTCH_Num, n_local > 0 ? n_local : 1);
    if (rc == 0) {
        rc = scotch_agree(c, SCOTCH_dgraphPart(&r.cdg, machines, &r.strat, out),
                          "SCOTCH_dgraphPart");
    }
    if (rc == 0 && trainers > 1) {
        rc = scotch_agree(c, split_machines(halo_comm_mpi(c), &r, n_local, machines, trainers, out),
                          "the second level (SCOTCH_dgraphInducePart, SCOTCH_dgraphPart)");
    }
    for (int64_t i = 0; rc == 0 && i < n_local; i++) {
        part[i] = (int32_t)out[i];
    }
    halo_free(out);
    run_free(&r); /* before the arrays it refers to */
    halo_free(sxadj);
    halo_free(sadj);
    halo_free(svwgt);
    return rc;
}
