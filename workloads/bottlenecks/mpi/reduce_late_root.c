/* No waiting: the root of each MPI_Reduce (rank 0) computes 30 ms before
 * it, the others 1 ms. The others' small contributions leave at once, so
 * only the root's own computation is long: load imbalance, no wait state. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    double x = 1.0, sum = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 0 ? 30 : 1);
        MPI_Reduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
