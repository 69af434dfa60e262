/* Every MPI collective once, blocking and non-blocking, with known sizes,
 * on MPI_COMM_WORLD and on a communicator of the ranks in reverse order
 * (Comm_split), for the interposition tests.  coll
 *
 * Counts are per rank: Bcast 4 ints from root 1, Reduce 2 doubles to root
 * 2, Allreduce 3 ints, Gather 2 ints to root 0, Gatherv 1 + rank ints to
 * root 0, Scatter 2 ints from root 0, Scatterv 1 + rank ints from root 0,
 * Allgather 1 int, Allgatherv 1 + rank ints, Alltoall 1 int per rank,
 * Alltoallv 1 int per rank, Scan 1 int, Exscan 1 int, Reduce_scatter 1 int
 * per rank, Reduce_scatter_block 1 int per rank, Barrier; then the
 * non-blocking forms with the same sizes; then a Barrier between
 * MPI_Pcontrol(0) and MPI_Pcontrol(1) (not to be recorded); then Allreduce
 * of 5 ints and Bcast of 6 ints from its rank 0 on the reversed
 * communicator. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm w = MPI_COMM_WORLD;
    int *a = calloc(1024, sizeof(int)), *b = calloc(1024, sizeof(int));
    double d[4] = {0}, e[4];
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int *ones = malloc(sizeof(int) * size), *odispls = malloc(sizeof(int) * size);
    for (int i = 0, off = 0; i < size; i++) {
        counts[i] = 1 + i;
        displs[i] = off;
        off += counts[i];
        ones[i] = 1;
        odispls[i] = i;
    }
    for (int nb = 0; nb < 2; nb++) {
        MPI_Request r[16];
        int n = 0;
#define CALL(blocking, nonblocking) \
    do {                            \
        if (nb)                     \
            nonblocking;            \
        else                        \
            blocking;               \
    } while (0)
        CALL(MPI_Bcast(a, 4, MPI_INT, 1, w), MPI_Ibcast(a, 4, MPI_INT, 1, w, &r[n++]));
        CALL(MPI_Reduce(d, e, 2, MPI_DOUBLE, MPI_SUM, 2, w),
             MPI_Ireduce(d, e, 2, MPI_DOUBLE, MPI_SUM, 2, w, &r[n++]));
        CALL(MPI_Allreduce(a, b, 3, MPI_INT, MPI_SUM, w),
             MPI_Iallreduce(a, b, 3, MPI_INT, MPI_SUM, w, &r[n++]));
        CALL(MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 0, w),
             MPI_Igather(a, 2, MPI_INT, b, 2, MPI_INT, 0, w, &r[n++]));
        CALL(MPI_Gatherv(a, 1 + rank, MPI_INT, b + 100, counts, displs, MPI_INT, 0, w),
             MPI_Igatherv(a, 1 + rank, MPI_INT, b + 100, counts, displs, MPI_INT, 0, w, &r[n++]));
        CALL(MPI_Scatter(a, 2, MPI_INT, b + 200, 2, MPI_INT, 0, w),
             MPI_Iscatter(a, 2, MPI_INT, b + 200, 2, MPI_INT, 0, w, &r[n++]));
        CALL(MPI_Scatterv(a, counts, displs, MPI_INT, b + 300, 1 + rank, MPI_INT, 0, w),
             MPI_Iscatterv(a, counts, displs, MPI_INT, b + 300, 1 + rank, MPI_INT, 0, w, &r[n++]));
        CALL(MPI_Allgather(a, 1, MPI_INT, b + 400, 1, MPI_INT, w),
             MPI_Iallgather(a, 1, MPI_INT, b + 400, 1, MPI_INT, w, &r[n++]));
        CALL(MPI_Allgatherv(a, 1 + rank, MPI_INT, b + 500, counts, displs, MPI_INT, w),
             MPI_Iallgatherv(a, 1 + rank, MPI_INT, b + 500, counts, displs, MPI_INT, w, &r[n++]));
        CALL(MPI_Alltoall(a, 1, MPI_INT, b + 600, 1, MPI_INT, w),
             MPI_Ialltoall(a, 1, MPI_INT, b + 600, 1, MPI_INT, w, &r[n++]));
        CALL(MPI_Alltoallv(a, ones, odispls, MPI_INT, b + 700, ones, odispls, MPI_INT, w),
             MPI_Ialltoallv(a, ones, odispls, MPI_INT, b + 700, ones, odispls, MPI_INT, w, &r[n++]));
        CALL(MPI_Scan(a, b + 800, 1, MPI_INT, MPI_SUM, w),
             MPI_Iscan(a, b + 800, 1, MPI_INT, MPI_SUM, w, &r[n++]));
        CALL(MPI_Exscan(a, b + 801, 1, MPI_INT, MPI_SUM, w),
             MPI_Iexscan(a, b + 801, 1, MPI_INT, MPI_SUM, w, &r[n++]));
        CALL(MPI_Reduce_scatter(a, b + 802, ones, MPI_INT, MPI_SUM, w),
             MPI_Ireduce_scatter(a, b + 802, ones, MPI_INT, MPI_SUM, w, &r[n++]));
        CALL(MPI_Reduce_scatter_block(a, b + 803, 1, MPI_INT, MPI_SUM, w),
             MPI_Ireduce_scatter_block(a, b + 803, 1, MPI_INT, MPI_SUM, w, &r[n++]));
        CALL(MPI_Barrier(w), MPI_Ibarrier(w, &r[n++]));
        if (nb)
            MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    }
    MPI_Pcontrol(0);
    MPI_Barrier(w);
    MPI_Pcontrol(1);
    MPI_Comm rev;
    MPI_Comm_split(w, 0, size - rank, &rev);
    MPI_Allreduce(a, b, 5, MPI_INT, MPI_SUM, rev);
    MPI_Bcast(a, 6, MPI_INT, 0, rev);
    MPI_Comm_free(&rev);
    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
