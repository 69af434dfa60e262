/* Late Sender waited for by probing: rank 1 calls MPI_Iprobe until the
 * message is there, then receives it; rank 0 computes 30 ms before each
 * send. Rank 1 computes 1 ms after each receive, so it probes 29 ms each
 * time. */
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
            while (!there)
                MPI_Iprobe(0, 0, MPI_COMM_WORLD, &there, MPI_STATUS_IGNORE);
            MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            work_ms(1);
        }
    }
    MPI_Finalize();
    return 0;
}
