/* PT-Scotch on a channel: builds Scotch's distributed graph from each rank's slice, partitions
 * it with a k-way strategy and turns Scotch's error printing into halo errors. The only file that
 * includes <ptscotch.h> (the 64-bit SCOTCH_Num build, so that 2E may exceed 2^31). */
#include "comm/comm_mpi.h"
#include "comm/ptscotch.h"

#include "core/err.h"
#include "core/mem.h"

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

int halo_comm_ptscotch_part(halo_comm *c, int64_t n_local, const int64_t *xadj,
                            const int64_t *adj, const int64_t *vwgt, int parts, double imbalance,
                            uint64_t seed, int32_t *part)
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
    SCOTCH_Strat strat;
    bool have_strat = false;
    if (rc == 0) {
        have_strat = SCOTCH_stratInit(&strat) == 0;
        st = !have_strat || SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATQUALITY, parts, parts,
                                                       imbalance - 1.0) != 0;
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
        rc = scotch_agree(c, SCOTCH_dgraphPart(&cdg, parts, &strat, out), "SCOTCH_dgraphPart");
        SCOTCH_dgraphExit(&cdg);
    }
    for (int64_t i = 0; rc == 0 && i < n_local; i++) {
        part[i] = (int32_t)out[i];
    }
    halo_free(out);
    if (have_strat) {
        SCOTCH_stratExit(&strat);
    }
    SCOTCH_dgraphExit(&dg);
    if (have_ctx) {
        SCOTCH_contextExit(&ctx);
    }
    return rc;
}
