/* A 2-D Jacobi solver whose last rank owns twice the rows of the others
 * (an uneven decomposition): every iteration exchanges halo rows with the
 * neighbours (MPI_Sendrecv), sweeps its rows and reduces the residual
 * (MPI_Allreduce), so the other ranks wait for the overloaded one.
 * Without compiler instrumentation only the MPI calls are regions: the
 * sweeps are the time outside them.  jacobi_overloaded [ROWS] [ITERS] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS 512

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = argc > 1 ? atoi(argv[1]) : 256;
    int iters = argc > 2 ? atoi(argv[2]) : 30;
    if (rank == size - 1)
        rows *= 2;
    size_t n = (size_t)(rows + 2) * COLS;
    double *u = calloc(n, sizeof *u), *v = calloc(n, sizeof *v);
    if (!u || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < COLS; j++)
            u[(size_t)i * COLS + j] = (double)((rank * 31 + i * 7 + j) % 101);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double global = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(&u[COLS], COLS, MPI_DOUBLE, up, 0, &u[(size_t)(rows + 1) * COLS], COLS,
                     MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[(size_t)rows * COLS], COLS, MPI_DOUBLE, down, 1, &u[0], COLS, MPI_DOUBLE,
                     up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = 0;
        for (int k = 0; k < 12; k++) {
            for (int i = 1; i <= rows; i++)
                for (int j = 1; j < COLS - 1; j++) {
                    size_t c = (size_t)i * COLS + j;
                    v[c] = 0.25 * (u[c - 1] + u[c + 1] + u[c - COLS] + u[c + COLS]);
                    local += fabs(v[c] - u[c]);
                }
            memcpy(&u[COLS], &v[COLS], (size_t)rows * COLS * sizeof *u);
        }
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("residual %.6f\n", global);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
