/* Link test: a program made of the deciding modules (sample/ cache/ part/ policy/ order/ sim/
 * and what they use) without MPI. tests/e2e/layering.sh links it with no -lmpi and runs it on a
 * partition: it prints the simulated counts. */
#include "core/err.h"
#include "sim/sim.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sim_nompi PDIR [POLICY]\n");
        return 2;
    }
    halo_sim_opts o;
    halo_sim_opts_default(&o);
    o.pdir = argv[1];
    o.policy = argc > 2 ? argv[2] : NULL;
    o.epochs = 1;
    o.batch = 200;
    halo_sim_result res;
    int rc = halo_sim_run(&o, &res);
    if (rc < 0) {
        fprintf(stderr, "sim_nompi: %s: %s\n", halo_strerror(rc), halo_errmsg());
        return 1;
    }
    printf("sim_nompi: %d ranks, %lld sampled edges, %lld remote nodes\n", res.ranks,
           (long long)res.total.sampled_edges, (long long)res.total.remote_nodes);
    return 0;
}
