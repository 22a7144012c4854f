/* The MPI communicator behind a channel, for the other files of comm/ (they alone include MPI). */
#ifndef HALO_COMM_MPI_H
#define HALO_COMM_MPI_H

#include "comm/comm.h"

#include <mpi.h>

/* The private communicator of channel c (collectives on it reach c's ranks only). */
MPI_Comm halo_comm_mpi(const halo_comm *c);

#endif
