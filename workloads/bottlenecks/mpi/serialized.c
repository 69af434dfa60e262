/* Serialized transfers: rank 0 receives a 16 MiB block from every other
 * rank with blocking receives, one after another. */
#include <mpi.h>
#include <stdlib.h>

#define N (1 << 21)

int main(int argc, char **argv) {
    int rank, size;
    double *buf = calloc(N, sizeof(double));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 20; i++) {
        if (rank == 0) {
            for (int src = 1; src < size; src++)
                MPI_Recv(buf, N, MPI_DOUBLE, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            /* Non-blocking, so that the senders do not wait in turn. */
            MPI_Request r;
            MPI_Isend(buf, N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    free(buf);
    return 0;
}
