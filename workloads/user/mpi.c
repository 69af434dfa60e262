/* MPI kernels, built with mpicc -finstrument-functions, for an even
 * number of ranks (2 in the accuracy suite):
 *
 *   mpi p2p N    N rounds: each even rank computes longer and sends to
 *                the next odd rank, which computes less and waits in its
 *                receive (a late sender every round)
 *   mpi coll N   N rounds of uneven work (the late rank changes every
 *                round), then an allreduce, a broadcast and a barrier
 *
 * Every rank times the kernel (after a barrier) and prints its own JSON
 * line; rank 0 prints the checksum. */
#include <mpi.h>

#include "timing.h"
#include "work.h"

#define UNIT 1000

__attribute__((noinline)) static uint64_t p2p(int rank, int size, long rounds)
{
    uint64_t x = (uint64_t)rank;
    double msg[8] = {0};
    int partner = rank ^ 1;
    for (long r = 0; r < rounds; r++) {
        if (partner >= size) {
            x = compute(x, 3 * UNIT);
        } else if (rank % 2 == 0) {
            x = compute(x, 3 * UNIT);
            msg[0] = (double)(x & 0xffff);
            MPI_Send(msg, 8, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD);
        } else {
            x = compute(x, 2 * UNIT);
            MPI_Recv(msg, 8, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            x += (uint64_t)msg[0];
        }
    }
    return x;
}

__attribute__((noinline)) static uint64_t coll(int rank, int size, long rounds)
{
    uint64_t x = (uint64_t)rank;
    double v, sum, b[4] = {0};
    for (long r = 0; r < rounds; r++) {
        x = compute(x, UNIT * (2 + (rank + r) % size));
        v = (double)(x & 0xff);
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int root = (int)(r % size);
        if (rank == root)
            b[0] = sum;
        MPI_Bcast(b, 4, MPI_DOUBLE, root, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        x += (uint64_t)b[0];
    }
    return x;
}

__attribute__((noinline)) uint64_t timed_kernel(char kind, int rank, int size, long rounds)
{
    return kind == 'p' ? p2p(rank, size, rounds) : coll(rank, size, rounds);
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"p2p", "coll", NULL};
    const char *kernel;
    MPI_Init(&argc, &argv);
    long rounds = parse_args(argc, argv, kernels, &kernel);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    uint64_t x = timed_kernel(kernel[0], rank, size, rounds);
    double t1 = now_s();
    report_kernel(kernel, rank, t1 - t0);
    uint64_t all = 0;
    MPI_Reduce(&x, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("checksum %llu\n", (unsigned long long)all);
    MPI_Finalize();
    return 0;
}
