/* Lock convoy: four workers take one mutex ten times each; worker 1 holds
 * it 20 ms each time and computes 4 ms between, the others hold it 1 ms and
 * compute 5 ms. The others queue behind worker 1 and then behind each
 * other: every wait is mostly worker 1's. Worker 1 comes back after the
 * others have had their turn and before they return, so it does not wait
 * (beyond the start). */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *a) {
    long id = (long)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(id == 1 ? 4 : 5);
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
