/* Late Sender through MPI_Waitany: rank 0 posts a receive from each other
 * rank and completes them one at a time with MPI_Waitany; rank 3 computes
 * 30 ms before sending, ranks 1 and 2 1 ms. As in the wildcard program,
 * ranks 1 and 2 never wait and have sent the next steps' messages while
 * rank 0 waits for rank 3: in Scalasca's terms those waits are also Wrong
 * Order, all but the last step's. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, size, x = 0, in[8], idx;
    MPI_Request req[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            for (int k = 1; k < size; k++)
                MPI_Irecv(&in[k], 1, MPI_INT, k, i, MPI_COMM_WORLD, &req[k - 1]);
            for (int k = 1; k < size; k++)
                MPI_Waitany(size - 1, req, &idx, MPI_STATUS_IGNORE);
        } else {
            work_ms(rank == 3 ? 30 : 1);
            MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
