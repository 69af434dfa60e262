/* Lock contention: thread 1 holds the lock for 30 ms per step and takes
 * it again 1 ms after releasing it; thread 2 asks for it once thread 1
 * holds it for the step (told by a plain atomic counter, which records
 * nothing), at least 1 ms after its previous turn, and waits 29–30 ms
 * each step. Timing alone cannot order the two: on a busy machine a 1 ms
 * sleep sometimes lasts 4, and a waiter that finds the lock free once
 * ends a step before the holder. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held; /* steps in which thread 1 has taken the lock */
static pthread_barrier_t go;

static void *holder(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        pthread_mutex_lock(&m);
        atomic_store(&held, i + 1);
        work_ms(30);
        pthread_mutex_unlock(&m);
        work_ms(1);
    }
    return NULL;
}

static void *waiter(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        work_ms(1);
        while (atomic_load(&held) <= i)
            work_ms(0.1);
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    pthread_barrier_init(&go, NULL, 2);
    bn_spawn(&t[0], holder, 0);
    bn_spawn(&t[1], waiter, 1);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    return 0;
}
