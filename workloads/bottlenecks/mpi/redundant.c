/* Redundant Barrier: each step exchanges a value around the ring and
 * synchronizes twice; the second barrier follows the first with no
 * communication in between. */
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x = 0, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 100000; i++) {
        MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 0, &y, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
