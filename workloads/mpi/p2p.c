/* Point-to-point MPI with known behaviour, for the interposition tests.
 * Needs at least 2 ranks (4 in the tests).  p2p [ITERS]
 *
 * Each rank, with next = rank + 1 and prev = rank - 1 (mod size):
 *  - ITERS blocking ring steps: Send 8 ints to next (tag 10), Recv from prev;
 *    even ranks send first, odd ranks receive first;
 *  - ITERS non-blocking steps: Irecv from prev and Isend 16 doubles to next
 *    (tag 20), Waitall;
 *  - one Issend (tag 30, 100 bytes) completed by Wait, its Irecv completed
 *    by a Test loop;
 *  - three Irecv/Isend pairs (tags 41..43, 4 chars) completed by Waitany,
 *    Waitsome (until all done) and Testall (until done);
 *  - 3 rounds of persistent Send_init/Recv_init (tag 50, 2 longs) started
 *    with Startall and completed with Waitall; then Request_free;
 *  - one Sendrecv (tag 60, 1 int each way);
 *  - every rank but 0 sends 3 ints with tag 70 + rank to rank 0, which
 *    receives them with MPI_ANY_SOURCE and MPI_ANY_TAG;
 *  - in a communicator of the even and one of the odd ranks (Comm_split),
 *    rank 0 of it sends 5 ints (tag 80) to its rank 1, if it has one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int ibuf[8] = {0}, ibuf2[8];
    double dbuf[16] = {0}, dbuf2[16];
    char cbuf[100] = {0}, cbuf2[100];
    MPI_Request rq[6];

    for (int i = 0; i < iters; i++) {
        if (rank % 2 == 0) {
            MPI_Send(ibuf, 8, MPI_INT, next, 10, MPI_COMM_WORLD);
            MPI_Recv(ibuf2, 8, MPI_INT, prev, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(ibuf2, 8, MPI_INT, prev, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(ibuf, 8, MPI_INT, next, 10, MPI_COMM_WORLD);
        }
    }
    for (int i = 0; i < iters; i++) {
        MPI_Irecv(dbuf2, 16, MPI_DOUBLE, prev, 20, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(dbuf, 16, MPI_DOUBLE, next, 20, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }

    MPI_Irecv(cbuf2, 100, MPI_CHAR, prev, 30, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend(cbuf, 100, MPI_CHAR, next, 30, MPI_COMM_WORLD, &rq[1]);
    int flag = 0;
    while (!flag)
        MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);

    char small[3][4], small2[3][4];
    for (int k = 0; k < 3; k++)
        MPI_Irecv(small2[k], 4, MPI_CHAR, prev, 41 + k, MPI_COMM_WORLD, &rq[k]);
    for (int k = 0; k < 3; k++)
        MPI_Isend(small[k], 4, MPI_CHAR, next, 41 + k, MPI_COMM_WORLD, &rq[3 + k]);
    int index, done = 0, outcount, indices[6];
    MPI_Waitany(3, rq, &index, MPI_STATUS_IGNORE);
    while (done < 2) {
        MPI_Waitsome(3, rq, &outcount, indices, MPI_STATUSES_IGNORE);
        if (outcount != MPI_UNDEFINED)
            done += outcount;
    }
    flag = 0;
    while (!flag)
        MPI_Testall(3, rq + 3, &flag, MPI_STATUSES_IGNORE);

    long lbuf[2] = {1, 2}, lbuf2[2];
    MPI_Request pr[2];
    MPI_Recv_init(lbuf2, 2, MPI_LONG, prev, 50, MPI_COMM_WORLD, &pr[0]);
    MPI_Send_init(lbuf, 2, MPI_LONG, next, 50, MPI_COMM_WORLD, &pr[1]);
    for (int k = 0; k < 3; k++) {
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);

    int one = rank, got;
    MPI_Sendrecv(&one, 1, MPI_INT, next, 60, &got, 1, MPI_INT, prev, 60, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    if (rank == 0) {
        for (int k = 1; k < size; k++) {
            MPI_Status st;
            MPI_Recv(ibuf2, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        }
    } else {
        MPI_Send(ibuf, 3, MPI_INT, 0, 70 + rank, MPI_COMM_WORLD);
    }

    MPI_Comm half;
    int hrank, hsize;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    if (hsize > 1 && hrank == 0)
        MPI_Send(ibuf, 5, MPI_INT, 1, 80, half);
    else if (hsize > 1 && hrank == 1)
        MPI_Recv(ibuf2, 5, MPI_INT, 0, 80, half, MPI_STATUS_IGNORE);
    MPI_Comm_free(&half);

    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
