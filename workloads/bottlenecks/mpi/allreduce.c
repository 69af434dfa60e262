/* Wait at N x N: every rank computes 10 ms per step, rank 1 40 ms, then
 * all reduce. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    double x = 1.0, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 1 ? 40 : 10);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
