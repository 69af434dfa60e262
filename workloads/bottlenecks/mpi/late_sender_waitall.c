/* Late Sender among several requests: rank 2 posts a receive from each of
 * ranks 0 and 1 and completes both in MPI_Waitall; rank 0 sends at once,
 * rank 1 computes 30 ms before each send. Rank 2 waits 30 ms each time, for
 * rank 1. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x[2] = {0, 0};
    MPI_Request req[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 2) {
            MPI_Irecv(&x[0], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(&x[1], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            work_ms(1);
        } else {
            if (rank == 1)
                work_ms(30);
            MPI_Send(&x[0], 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
