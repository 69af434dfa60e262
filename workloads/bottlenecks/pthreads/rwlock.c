/* Reader-writer lock contention: thread 1 holds the write lock for 30 ms
 * per step and takes it again 1 ms after releasing it; threads 2 and 3
 * ask for the read lock once thread 1 holds it for the step (told by a
 * plain atomic counter, which records nothing), at least 1 ms after their
 * previous turn, wait 29–30 ms each step, and read together. */
#include "pt.h"
#include "../bn.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int held; /* steps in which thread 1 has taken the lock */
static pthread_barrier_t go;

static void *writer(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        pthread_rwlock_wrlock(&rw);
        atomic_store(&held, i + 1);
        work_ms(30);
        pthread_rwlock_unlock(&rw);
        work_ms(1);
    }
    return NULL;
}

static void *reader(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        work_ms(1);
        while (atomic_load(&held) <= i)
            work_ms(0.1);
        pthread_rwlock_rdlock(&rw);
        work_ms(0.5);
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

int main(void) {
    pthread_t t[3];
    pthread_barrier_init(&go, NULL, 3);
    bn_spawn(&t[0], writer, 0);
    bn_spawn(&t[1], reader, 1);
    bn_spawn(&t[2], reader, 2);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
