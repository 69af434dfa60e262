/* Condition wait: thread 2 waits for a signal that thread 1 gives after
 * 30 ms of work, ten times. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, taken;

static void *producer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(30);
        pthread_mutex_lock(&m);
        ready = 1;
        pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
        /* The next round starts once the consumer took this one. */
        while (atomic_load((atomic_int *)&taken) <= i)
            sched_yield();
    }
    return NULL;
}

static void *consumer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        pthread_mutex_lock(&m);
        while (!ready)
            pthread_cond_wait(&c, &m);
        ready = 0;
        pthread_mutex_unlock(&m);
        atomic_fetch_add((atomic_int *)&taken, 1);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    bn_spawn(&t[0], producer, 0);
    bn_spawn(&t[1], consumer, 1);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    return 0;
}
