/* Many small transfers to one target: rank 0 sends 200000 single integers
 * to rank 1 instead of one array. */
#include <mpi.h>

int main(int argc, char **argv) {
    static int x[200000];
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    for (int i = 0; i < 200000; i++) {
        if (rank == 0)
            MPI_Send(&x[i], 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(&x[i], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
