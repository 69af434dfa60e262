/* MPI with threads (MPI_THREAD_MULTIPLE): each rank starts THREADS
 * pthreads; thread t sends ITERS messages of t + 1 ints with tag t to
 * thread t of the next rank and receives as many from the previous rank.
 *   hybrid [THREADS] [ITERS] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, iters;

static void *work(void *arg) {
    int t = (int)(long)arg, out[16] = {0}, in[16];
    for (int i = 0; i < iters; i++) {
        MPI_Request r;
        MPI_Isend(out, t + 1, MPI_INT, (rank + 1) % size, t, MPI_COMM_WORLD, &r);
        MPI_Recv(in, 16, MPI_INT, (rank + size - 1) % size, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, threads = argc > 1 ? atoi(argv[1]) : 2;
    iters = argc > 2 ? atoi(argv[2]) : 10;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t tid[16];
    for (long t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, work, (void *)t);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
