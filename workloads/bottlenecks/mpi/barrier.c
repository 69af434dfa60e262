/* Wait at Barrier: every rank computes 10 ms per step, rank 2 40 ms. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 2 ? 40 : 10);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
