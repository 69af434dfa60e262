/* No bottleneck: balanced steps, a ring exchange and an all-reduce. */
#include <mpi.h>
#include "../bn.h"

int main(int argc, char **argv) {
    int rank, size, x = 0, y;
    double a = 1.0, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 20; i++) {
        work_ms(10);
        MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 0, &y, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
