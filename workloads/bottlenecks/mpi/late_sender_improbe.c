/* Late Sender polled with a matched probe: rank 1 calls MPI_Improbe until
 * the message is there, then receives it with MPI_Imrecv and MPI_Wait;
 * rank 0 computes 30 ms before each send. Rank 1 computes 1 ms after each
 * receive, so it polls 29 ms each time. */
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
            int there = 0;
            MPI_Message msg;
            MPI_Request req;
            while (!there)
                MPI_Improbe(0, 0, MPI_COMM_WORLD, &there, &msg, MPI_STATUS_IGNORE);
            MPI_Imrecv(&x, 1, MPI_INT, &msg, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            work_ms(1);
        }
    }
    MPI_Finalize();
    return 0;
}
