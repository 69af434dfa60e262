/* Wait at barrier with two late workers: per step worker 2 computes
 * 25 ms, worker 3 15 ms, workers 1 and 4 5 ms. Everyone waits for worker 2,
 * the last to arrive: workers 1 and 4 20 ms a step, worker 3 10 ms. */
#include "pt.h"
#include "../bn.h"

static pthread_barrier_t b;

static void *worker(void *a) {
    long id = (long)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(id == 2 ? 25 : id == 3 ? 15 : 5);
        pthread_barrier_wait(&b);
    }
    return NULL;
}

int main(void) {
    pthread_t t[4];
    pthread_barrier_init(&b, NULL, 4);
    for (long i = 0; i < 4; i++)
        bn_spawn(&t[i], worker, i + 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
