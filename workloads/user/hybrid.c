/* MPI and threads, built with mpicc -pthread -finstrument-functions: on
 * every rank (2 in the accuracy suite),
 *
 *   hybrid forkjoin N   N rounds: the rank's thread and one it creates
 *                       compute uneven shares (the late thread and rank
 *                       change every round), the new thread is joined,
 *                       and the ranks allreduce their results
 *
 * Every rank times the kernel (after a barrier) and prints its own JSON
 * line; rank 0 prints the checksum. */
#include <mpi.h>
#include <pthread.h>

#include "timing.h"
#include "work.h"

#define THREADS 2
#define UNIT 5000

struct share {
    uint64_t x;
    long calls;
};

static void *worker(void *arg)
{
    struct share *s = arg;
    s->x = compute(s->x, s->calls);
    return NULL;
}

__attribute__((noinline)) uint64_t timed_kernel(int rank, long rounds)
{
    uint64_t x = (uint64_t)rank;
    for (long r = 0; r < rounds; r++) {
        pthread_t th[THREADS];
        struct share s[THREADS];
        for (int t = 0; t < THREADS; t++) {
            s[t].x = x + (uint64_t)t;
            s[t].calls = UNIT * (2 + (t + rank + r) % 3);
        }
        /* Thread 0 is the rank's own. */
        for (int t = 1; t < THREADS; t++) {
            if (pthread_create(&th[t], NULL, worker, &s[t]) != 0) {
                perror("pthread_create");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        worker(&s[0]);
        uint64_t mine = s[0].x;
        for (int t = 1; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            mine ^= s[t].x;
        }
        uint64_t all;
        MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
        x = all;
    }
    return x;
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"forkjoin", NULL};
    const char *kernel;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    long rounds = parse_args(argc, argv, kernels, &kernel);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    uint64_t x = timed_kernel(rank, rounds);
    double t1 = now_s();
    report_kernel(kernel, rank, t1 - t0);
    if (rank == 0)
        printf("checksum %llu\n", (unsigned long long)x);
    MPI_Finalize();
    return 0;
}
