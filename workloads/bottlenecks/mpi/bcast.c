/* Late Broadcast: the root computes 30 ms before each broadcast, the
 * others 1 ms. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    double x[16] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 0 ? 30 : 1);
        MPI_Bcast(x, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
