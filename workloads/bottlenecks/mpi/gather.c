/* Early Reduce through MPI_Gather: the root (rank 1) is ready at once,
 * rank 3 computes 30 ms before each gather, the others 1 ms. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 0, all[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 3) {
            work_ms(30);
        } else if (rank != 1) {
            work_ms(1);
        }
        MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
