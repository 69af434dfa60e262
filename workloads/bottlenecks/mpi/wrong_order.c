/* Wrong Order: rank 0 sends tag 1, computes 30 ms, sends tag 2; rank 1
 * receives tag 2 first, waiting while the tag-1 message is already there. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
            work_ms(30);
            MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
