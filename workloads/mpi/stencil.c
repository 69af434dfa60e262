/* A 1-D Jacobi stencil mini-app for overhead measurements: each rank owns
 * N points; every iteration exchanges halos with its neighbours (Irecv,
 * Isend, Waitall), sweeps, and every 10 iterations reduces the residual
 * (Allreduce). Build with -finstrument-functions to measure its functions
 * too. Rank 0 prints the time of the iterations.  stencil [N] [ITERS] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void exchange(double *u, int n, int left, int right) {
    MPI_Request r[4];
    MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

static void sweep(const double *u, double *v, int n) {
    for (int i = 1; i <= n; i++)
        v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
}

static double residual(const double *u, const double *v, int n) {
    double s = 0;
    for (int i = 1; i <= n; i++)
        s += fabs(u[i] - v[i]);
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 100000, iters = argc > 2 ? atoi(argv[2]) : 1000;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double *u = calloc(n + 2, sizeof(double)), *v = calloc(n + 2, sizeof(double));
    for (int i = 1; i <= n; i++)
        u[i] = (double)((rank * n + i) % 97);
    double res = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        exchange(u, n, left, right);
        sweep(u, v, n);
        if (it % 10 == 0) {
            double local = residual(u, v, n);
            MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        double *t = u;
        u = v;
        v = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    if (rank == 0)
        printf("residual %g\nloop_seconds %.6f\n", res, t1 - t0);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
