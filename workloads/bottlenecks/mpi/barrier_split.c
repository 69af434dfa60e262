/* Wait at Barrier in a sub-communicator: the even ranks and the odd ranks
 * each synchronize on their own; among the even ones rank 2 computes
 * 30 ms before each barrier, everyone else 1 ms. Only rank 0 waits. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    MPI_Comm half;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 2 ? 30 : 1);
        MPI_Barrier(half);
    }
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
