/* Three rounds of 100 ms of serial work on the initial thread, each
 * followed by a balanced parallel loop for two: thread 1 is idle during
 * the serial parts after the first (it begins in the first team). */
#include "../bn.h"

int main(void) {
    for (int r = 0; r < 3; r++) {
        work_ms(100);
#pragma omp parallel for schedule(static) num_threads(2)
        for (int i = 0; i < 2; i++)
            work_ms(50);
    }
    return 0;
}
