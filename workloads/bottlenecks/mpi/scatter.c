/* Late Broadcast through MPI_Scatter: the root (rank 2) computes 30 ms
 * before each scatter, the others 1 ms. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 0, all[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 2 ? 30 : 1);
        MPI_Scatter(all, 1, MPI_INT, &x, 1, MPI_INT, 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
