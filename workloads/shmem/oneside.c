/* OpenSHMEM with known behaviour, for the interposition tests (at least 2
 * PEs, 4 in the tests).  oneside [ITERS]
 *
 * Each PE, with next = me + 1 and prev = me - 1 (mod npes):
 *  - ITERS long puts of 8 elements to `dst` on next, ITERS int put_nbi of
 *    4 elements to `idst` on next, then shmem_quiet; one shmem_int_p of
 *    `flag` on next;
 *  - ITERS long gets of 8 elements from `dst` on prev, ITERS get_nbi of 4
 *    ints from `idst` on prev, then shmem_quiet; one shmem_int_g;
 *  - ITERS atomic fetch-adds and ITERS atomic incs of `counter` on PE 0;
 *    one deprecated fadd of `lcounter` on PE 0;
 *  - ITERS times set_lock(`lock`), an atomic fetch of `counter` on PE 0,
 *    clear_lock;
 *  - PE 0 waits until `counter` is 2 * ITERS * npes (wait_until);
 *  - barrier_all; a barrier of the even PEs (start 0, stride 2^1);
 *  - broadcast64 of 4 longs from PE 1, fcollect64 of 2 longs, collect64 of
 *    1 + me longs, alltoall64 of 1 long, int sum_to_all of 3 ints;
 *  - shmem_fence; shmem_finalize.
 * PE 0 prints the addresses of the symmetric objects. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static long dst[8], src[8], buf[8];
static int idst[4], isrc[4], ibuf[4];
static int flag, counter;
static long lcounter, lock;
static long bsrc[4], bdst[4], fsrc[2], fdst[2 * 64], csrc[64], cdst[64 * 65], asrc[64], adst[64];
static int rsrc[3], rdst[3];
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 5;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    for (int i = 0; i < iters; i++)
        shmem_long_put(dst, src, 8, next);
    for (int i = 0; i < iters; i++)
        shmem_int_put_nbi(idst, isrc, 4, next);
    shmem_quiet();
    shmem_int_p(&flag, 1, next);
    shmem_barrier_all();

    for (int i = 0; i < iters; i++)
        shmem_long_get(buf, dst, 8, prev);
    for (int i = 0; i < iters; i++)
        shmem_int_get_nbi(ibuf, idst, 4, prev);
    shmem_quiet();
    int f = shmem_int_g(&flag, prev);

    for (int i = 0; i < iters; i++)
        shmem_int_atomic_fetch_add(&counter, 1, 0);
    for (int i = 0; i < iters; i++)
        shmem_int_atomic_inc(&counter, 0);
    shmem_long_fadd(&lcounter, 1, 0);

    for (int i = 0; i < iters; i++) {
        shmem_set_lock(&lock);
        (void)shmem_int_atomic_fetch(&counter, 0);
        shmem_clear_lock(&lock);
    }
    if (me == 0)
        shmem_int_wait_until(&counter, SHMEM_CMP_EQ, 2 * iters * npes);
    shmem_barrier_all();
    if (me % 2 == 0)
        shmem_barrier(0, 1, (npes + 1) / 2, psync);
    shmem_barrier_all();

    shmem_broadcast64(bdst, bsrc, 4, 1, 0, 0, npes, psync);
    shmem_barrier_all();
    shmem_fcollect64(fdst, fsrc, 2, 0, 0, npes, psync);
    shmem_barrier_all();
    shmem_collect64(cdst, csrc, 1 + me, 0, 0, npes, psync);
    shmem_barrier_all();
    shmem_alltoall64(adst, asrc, 1, 0, 0, npes, psync);
    shmem_barrier_all();
    shmem_int_sum_to_all(rdst, rsrc, 3, 0, 0, npes, pwrk, psync);
    shmem_fence();
    if (me == 0)
        printf("dst=%lu idst=%lu flag=%lu counter=%lu lcounter=%lu lock=%lu got=%d\n",
               (unsigned long)dst, (unsigned long)idst, (unsigned long)&flag,
               (unsigned long)&counter, (unsigned long)&lcounter, (unsigned long)&lock, f);
    shmem_finalize();
    return 0;
}
