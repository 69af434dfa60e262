/* No bottleneck: four balanced workers, a short critical section and a
 * barrier per step. */
#include "pt.h"
#include "../bn.h"

static pthread_barrier_t b;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *a) {
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(50);
        pthread_mutex_lock(&m);
        total += (long)a;
        pthread_mutex_unlock(&m);
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
    return total == 100 ? 0 : 1;
}
