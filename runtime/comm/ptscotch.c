/* PT-Scotch on a channel: builds Scotch's distributed graph from each rank's slice, partitions
 * it with a k-way strategy and turns Scotch's error printing into halo errors. The only file that
 * includes <ptscotch.h> (the 64-bit SCOTCH_Num build, so that 2E may exceed 2^31). */
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

_Static_assert(sizeof(SCOTCH_Num) == sizeof(int64_t), "halo links the 64-bit PT-Scotch build");

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

/* Second level: each machine's induced subgraph (collective, one machine after the other) into
 * its trainers; out[i] (the machine of local row i on entry) becomes machine x trainers +
 * trainer. Scotch's status (non-zero on failure). */
static int split_machines(MPI_Comm comm, SCOTCH_Dgraph *dg, SCOTCH_Num n_local, int machines,
                          int trainers, SCOTCH_Strat *strat, SCOTCH_Num *out)
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
        SCOTCH_Dgraph ind;
        st = SCOTCH_dgraphInit(&ind, comm) != 0;
        if (st == 0) {
            st = SCOTCH_dgraphInducePart(dg, mach, m, nm, &ind);
        }
        if (st == 0) {
            st = SCOTCH_dgraphPart(&ind, trainers, strat, sub);
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

int halo_comm_ptscotch_part(halo_comm *c, int64_t n_local, const int64_t *xadj,
                            const int64_t *adj, const int64_t *vwgt, int machines, int trainers,
                            double imbalance, uint64_t seed, int32_t *part)
{
    scotch_msg[0] = '\0';
    SCOTCH_randomSeed((SCOTCH_Num)(seed & 0x7fffffffu));
    SCOTCH_randomReset();
    SCOTCH_Dgraph dg;
    int rc = scotch_agree(c, SCOTCH_dgraphInit(&dg, halo_comm_mpi(c)), "SCOTCH_dgraphInit");
    if (rc < 0) {
        return rc;
    }
    /* Scotch wants non-const arrays but does not write them: halo's stay read-only */
    int st = SCOTCH_dgraphBuild(&dg, 0, n_local, n_local, (SCOTCH_Num *)xadj, NULL,
                                (SCOTCH_Num *)vwgt, NULL, xadj[n_local], xadj[n_local],
                                (SCOTCH_Num *)adj, NULL, NULL);
    rc = scotch_agree(c, st, "SCOTCH_dgraphBuild");
    /* two levels: each gets the square root of the tolerance, as imbalances multiply */
    double tol = trainers > 1 ? sqrt(imbalance) - 1.0 : imbalance - 1.0;
    SCOTCH_Strat strat, strat2;
    bool have_strat = false, have_strat2 = false;
    if (rc == 0) {
        have_strat = SCOTCH_stratInit(&strat) == 0;
        have_strat2 = SCOTCH_stratInit(&strat2) == 0;
        st = !have_strat || !have_strat2 ||
             SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATQUALITY, machines, machines, tol) !=
                 0 ||
             SCOTCH_stratDgraphMapBuild(&strat2, SCOTCH_STRATQUALITY, trainers, trainers, tol) !=
                 0;
        rc = scotch_agree(c, st, "SCOTCH_stratDgraphMapBuild");
    }
    /* a context asks Scotch's threads for a deterministic run with halo's seed */
    SCOTCH_Context ctx;
    SCOTCH_Dgraph cdg;
    bool have_ctx = false;
    if (rc == 0) {
        have_ctx = SCOTCH_contextInit(&ctx) == 0;
        st = !have_ctx;
        if (have_ctx) {
            SCOTCH_contextRandomSeed(&ctx, (SCOTCH_Num)(seed & 0x7fffffffu));
            st = SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0 ||
                 SCOTCH_contextBindDgraph(&ctx, &dg, &cdg) != 0;
        }
        rc = scotch_agree(c, st, "SCOTCH_contextBindDgraph");
    }
    SCOTCH_Num *out = NULL;
    if (rc == 0) {
        out = HALO_NEW(SCOTCH_Num, n_local > 0 ? n_local : 1);
        rc = scotch_agree(c, SCOTCH_dgraphPart(&cdg, machines, &strat, out),
                          "SCOTCH_dgraphPart");
        if (rc == 0 && trainers > 1) {
            rc = scotch_agree(c, split_machines(halo_comm_mpi(c), &cdg, n_local, machines, trainers, &strat2, out),
                              "the second level (SCOTCH_dgraphInducePart, SCOTCH_dgraphPart)");
        }
        SCOTCH_dgraphExit(&cdg);
    }
    for (int64_t i = 0; rc == 0 && i < n_local; i++) {
        part[i] = (int32_t)out[i];
    }
    halo_free(out);
    if (have_strat) {
        SCOTCH_stratExit(&strat);
    }
    if (have_strat2) {
        SCOTCH_stratExit(&strat2);
    }
    SCOTCH_dgraphExit(&dg);
    if (have_ctx) {
        SCOTCH_contextExit(&ctx);
    }
    return rc;
}
