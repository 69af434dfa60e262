/* Late Sender in a halo exchange: each step every rank computes, then
 * exchanges with both ring neighbours through MPI_Irecv, MPI_Isend and
 * MPI_Waitall. Rank 2 computes 30 ms, the others 1 ms: its neighbours
 * (ranks 1 and 3) wait for it, and from the second step on rank 0 waits
 * for them, which were held up by rank 2 (the delay's root cause). */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, size, out = 0, in[2];
    MPI_Request req[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(rank == 2 ? 30 : 1);
        MPI_Irecv(&in[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&in[1], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&out, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
