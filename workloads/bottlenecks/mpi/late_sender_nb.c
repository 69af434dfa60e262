/* Late Sender through non-blocking calls: rank 1 posts MPI_Irecv, computes
 * 5 ms and waits in MPI_Wait; rank 0 computes 30 ms, then MPI_Isend and
 * MPI_Wait. Rank 1 waits 25 ms each time. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            work_ms(30);
            MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
            work_ms(5);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
