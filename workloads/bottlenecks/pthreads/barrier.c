/* Wait at barrier: four workers compute 5 ms per step, worker 2 25 ms. */
#include "pt.h"
#include "../bn.h"

static pthread_barrier_t b;

static void *worker(void *a) {
    long id = (long)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(id == 2 ? 25 : 5);
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
