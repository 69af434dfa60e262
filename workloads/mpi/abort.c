/* A rank that calls MPI_Abort (or, with `segv`, dies of a segmentation
 * fault) after some communication, for the robustness tests: every rank
 * does 3 Barriers and 3 Allreduces, then rank 1 aborts with code 3 while
 * the others wait in a Barrier.  abort [segv] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, x = 1, y;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 1 && argc > 1 && !strcmp(argv[1], "segv")) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (rank == 1) {
        fprintf(stderr, "rank 1 aborts\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    sleep(5);
    MPI_Finalize();
    return 0;
}
