/* A task queue: a producer thread makes one task every 10 ms (30 in all);
 * three workers take tasks from a queue guarded by a mutex and a condition
 * variable and run each for 1 ms. The workers wait for the producer almost
 * all the time: 30 x 10 ms of production, 10 tasks each. */
#include "pt.h"
#include "../bn.h"

#define TASKS 30
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int queued, made, done;

static void *producer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < TASKS; i++) {
        work_ms(10);
        pthread_mutex_lock(&m);
        queued++;
        made++;
        pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
    }
    pthread_mutex_lock(&m);
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *worker(void *a) {
    (void)a;
    bn_hello();
    for (;;) {
        pthread_mutex_lock(&m);
        while (queued == 0 && made < TASKS)
            pthread_cond_wait(&c, &m);
        if (queued == 0) {
            pthread_mutex_unlock(&m);
            return NULL;
        }
        queued--;
        pthread_mutex_unlock(&m);
        work_ms(1);
        pthread_mutex_lock(&m);
        done++;
        pthread_mutex_unlock(&m);
    }
}

int main(void) {
    pthread_t t[4];
    bn_spawn(&t[0], producer, 0);
    for (long i = 1; i < 4; i++)
        bn_spawn(&t[i], worker, i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
