/* Thread 1 holds a critical section for 300 ms; thread 0 asks for it
 * 50 ms later and waits 250 ms; both then end together. */
#include <omp.h>

#include "../bn.h"

int main(void) {
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0)
            work_ms(50);
#pragma omp critical
        {
            if (omp_get_thread_num() == 1)
                work_ms(300);
        }
        work_ms(20);
    }
    return 0;
}
