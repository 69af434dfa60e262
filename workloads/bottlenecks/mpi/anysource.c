/* Late Sender through wildcard receives: rank 0 takes one message from
 * each other rank per step with MPI_ANY_SOURCE and the step as tag; rank 3
 * computes 30 ms before sending, ranks 1 and 2 1 ms. Rank 0's last
 * receive of each step waits for rank 3, while ranks 1 and 2, which never
 * wait, have already sent the next steps' messages: in Scalasca's terms
 * those waits are also Wrong Order (a message sent earlier was pending),
 * all but the last step's. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            for (int k = 1; k < size; k++)
                MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            work_ms(rank == 3 ? 30 : 1);
            MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
