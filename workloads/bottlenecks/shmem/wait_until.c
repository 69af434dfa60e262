/* Wait on a value: PE 1 computes 30 ms before each put of the next value
 * into a word of PE 0, which waits for it in shmem_long_wait_until and
 * then computes 1 ms, ten times. */
#include <shmem.h>
#include "../bn.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    long *word = shmem_calloc(1, sizeof(long));
    shmem_barrier_all(); /* start together */
    for (long i = 1; i <= 10; i++) {
        if (me == 1) {
            work_ms(30);
            shmem_long_p(word, i, 0);
            shmem_quiet();
        } else if (me == 0) {
            shmem_long_wait_until(word, SHMEM_CMP_GE, i);
            work_ms(1);
        }
    }
    shmem_barrier_all();
    shmem_free(word);
    shmem_finalize();
    return 0;
}
