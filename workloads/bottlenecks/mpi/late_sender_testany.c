/* Late Sender polled with MPI_Testany: rank 1 posts one receive from rank 0
 * and tests it with MPI_Testany until it completes; rank 0 computes 30 ms
 * before each send. Rank 1 computes 1 ms after each receive, so it polls
 * 29 ms each time. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            work_ms(30);
            MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Request req;
            int idx, done = 0;
            MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
            while (!done)
                MPI_Testany(1, &req, &idx, &done, MPI_STATUS_IGNORE);
            work_ms(1);
        }
    }
    MPI_Finalize();
    return 0;
}
