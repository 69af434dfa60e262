/* Wait at Barrier through shmem_barrier_all: PE 1 computes 30 ms before
 * each barrier, the others 1 ms. */
#include <shmem.h>
#include "../bn.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    shmem_barrier_all(); /* start together */
    for (int i = 0; i < 10; i++) {
        work_ms(me == 1 ? 30 : 1);
        shmem_barrier_all();
    }
    shmem_finalize();
    return 0;
}
