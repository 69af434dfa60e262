/* Early Reduce: rank 3 computes 30 ms before each reduction to root 0,
 * the others 1 ms. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    double x = 1.0, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 3 ? 30 : 1);
        MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
