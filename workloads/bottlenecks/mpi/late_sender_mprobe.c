/* Late Sender behind a matched probe: rank 1 waits in MPI_Mprobe, then
 * receives the matched message with MPI_Mrecv; rank 0 computes 30 ms
 * before each send. */
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
            MPI_Message msg;
            MPI_Mprobe(0, 0, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
            MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
            work_ms(1);
        }
    }
    MPI_Finalize();
    return 0;
}
