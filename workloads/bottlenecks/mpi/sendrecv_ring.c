/* Late Sender passed around a ring: every step each rank computes, then
 * sends to its right neighbour and receives from its left one in one
 * MPI_Sendrecv. Rank 1 computes 30 ms, the others 1 ms: rank 2 waits for
 * rank 1 from the first step on, rank 3 for rank 2 from the second, rank 0
 * for rank 3 from the third (each held up by the one before; rank 1's
 * computation is the root cause). */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, size, x = 0, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 1 ? 30 : 1);
        MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 0, &y, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
