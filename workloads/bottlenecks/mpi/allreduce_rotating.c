/* Imbalance that moves: in step i rank i % 4 computes 20 ms more before an
 * MPI_Allreduce. Over the 8 steps every rank computes as much as the
 * others, so the run is balanced as a whole, but in each step three ranks
 * wait 20 ms for the fourth: 6 x 20 ms at each rank. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 8; i++) {
        work_ms(2);
        if (i % 4 == rank)
            work_ms(20);
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
