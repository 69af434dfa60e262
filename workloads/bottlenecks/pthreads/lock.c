/* Lock contention: thread 1 holds the lock for 30 ms per step; thread 2
 * asks for it 1 ms later and waits. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t go;

static void *holder(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        pthread_mutex_lock(&m);
        work_ms(30);
        pthread_mutex_unlock(&m);
        work_ms(2);
    }
    return NULL;
}

static void *waiter(void *a) {
    (void)a;
    bn_hello();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 10; i++) {
        work_ms(1);
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        work_ms(1);
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
