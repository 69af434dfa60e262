/* Join wait: four workers compute 50 ms, worker 3 250 ms; the main thread
 * joins them in order. */
#include "pt.h"
#include "../bn.h"

static void *worker(void *a) {
    bn_hello();
    work_ms((long)a == 3 ? 250 : 50);
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
