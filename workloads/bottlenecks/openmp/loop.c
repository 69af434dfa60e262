/* A statically scheduled loop of three blocks, one per thread, whose last
 * block takes 300 ms longer: threads 0 and 1 wait at the loop's implicit
 * barrier for thread 2. */
#include "../bn.h"

int main(void) {
#pragma omp parallel num_threads(3)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 3; i++)
            work_ms(i == 2 ? 400 : 100);
        work_ms(20);
    }
    return 0;
}
