/* Balanced work in a team of two: a static loop and a dynamic one of
 * equal iterations, nothing to find. */
#include "../bn.h"

int main(void) {
    for (int r = 0; r < 3; r++) {
#pragma omp parallel for schedule(static) num_threads(2)
        for (int i = 0; i < 4; i++)
            work_ms(20);
#pragma omp parallel for schedule(dynamic) num_threads(2)
        for (int i = 0; i < 8; i++)
            work_ms(10);
    }
    return 0;
}
