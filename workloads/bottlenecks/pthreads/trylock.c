/* Lock contention through a polling loop: thread 1 holds the lock for
 * 30 ms per step and computes 2 ms between steps; thread 2, once thread 1
 * holds the lock for the step (told by a plain atomic counter, which
 * records nothing), calls pthread_mutex_trylock until it gets the lock,
 * and waits about 30 ms each step. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;

static void *holder(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        pthread_mutex_lock(&m);
        atomic_fetch_add(&held, 1);
        work_ms(30);
        pthread_mutex_unlock(&m);
        work_ms(2);
    }
    return NULL;
}

static void *poller(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        while (atomic_load(&held) <= i)
            sched_yield();
        while (pthread_mutex_trylock(&m) != 0) {
        }
        work_ms(1);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    bn_spawn(&t[0], holder, 0);
    bn_spawn(&t[1], poller, 0);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    return 0;
}
