/* Lock convoy: four workers take one mutex ten times each, computing 2 ms
 * between; worker 1 holds it 20 ms each time, the others 1 ms. The others
 * queue behind worker 1 and then behind each other: every wait is mostly
 * worker 1's. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *a) {
    long id = (long)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(2);
        pthread_mutex_lock(&m);
        work_ms(id == 1 ? 20 : 1);
        total++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        bn_spawn(&t[i], worker, i + 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
