/* Late Sender behind MPI_Probe: rank 1 probes for the message to learn
 * its size, then receives it; rank 0 computes 30 ms before each send. The
 * waiting happens in the probe. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, n, x[4] = {0};
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            work_ms(30);
            MPI_Send(x, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Probe(0, 0, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            MPI_Recv(x, n, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
