/* OpenMP constructs of known counts, for the tests of OpenMP recording:
 * a team of 3 with a dynamic, a guided and a static loop, a barrier and a
 * critical section; a combined parallel loop; sections; an ordered loop.
 * Prints what it did: the thread that ran each iteration of the dynamic and
 * of the guided loop, and the count of critical sections entered. */
#include <omp.h>
#include <stdio.h>

#define N 1000

static double work(int i) {
    double s = 0;
    for (int k = 0; k < 200 * (i % 5 + 1); k++)
        s += k * 0.5;
    return s;
}

int main(void) {
    static char dyn[N + 1], gui[N + 1];
    double tot = 0;
    int crit = 0, sections = 0, ordered = 0;
#pragma omp parallel num_threads(3) reduction(+ : tot)
    {
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < N; i++) {
            dyn[i] = (char)('0' + omp_get_thread_num());
            tot += work(i);
        }
#pragma omp for schedule(guided, 2)
        for (int i = 0; i < N; i++) {
            gui[i] = (char)('0' + omp_get_thread_num());
            tot += work(i);
        }
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++)
            tot += work(i);
#pragma omp barrier
#pragma omp critical
        crit++;
    }
#pragma omp parallel for schedule(dynamic) num_threads(2) reduction(+ : tot)
    for (int i = 0; i < 100; i++)
        tot += work(i);
#pragma omp parallel sections num_threads(2) reduction(+ : sections)
    {
#pragma omp section
        sections++;
#pragma omp section
        sections++;
#pragma omp section
        sections++;
    }
#pragma omp parallel num_threads(2)
    {
#pragma omp for ordered schedule(dynamic)
        for (int i = 0; i < 10; i++) {
            double w = work(i);
#pragma omp ordered
            {
                ordered++;
                tot += w;
            }
        }
    }
    printf("dynamic=%s\nguided=%s\n", dyn, gui);
    printf("critical=%d sections=%d ordered=%d total=%.0f\n", crit, sections, ordered, tot);
    return 0;
}
