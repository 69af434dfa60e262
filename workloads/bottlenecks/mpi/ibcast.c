/* Late Broadcast through a non-blocking broadcast: every rank starts
 * MPI_Ibcast, computes 1 ms and completes it in MPI_Wait; the root computes
 * 30 ms before starting it, the others 1 ms, so the others wait 28 ms in
 * MPI_Wait each time. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank;
    double x[16] = {0};
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 0 ? 30 : 1);
        MPI_Ibcast(x, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
        work_ms(1);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
