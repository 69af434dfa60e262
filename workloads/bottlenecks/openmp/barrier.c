/* A team of three where thread 2 works 200 ms longer before an explicit
 * barrier: threads 0 and 1 wait there for it. */
#include <omp.h>

#include "../bn.h"

int main(void) {
#pragma omp parallel num_threads(3)
    {
        int me = omp_get_thread_num();
        work_ms(me == 2 ? 250 : 50);
#pragma omp barrier
        work_ms(20);
    }
    return 0;
}
