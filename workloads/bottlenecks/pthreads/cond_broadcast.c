/* Condition wait with a broadcast: three workers wait for thread 1, which
 * works 30 ms before releasing them all, five rounds. */
#include "pt.h"
#include "../bn.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int round_no;
static atomic_int waiting;

static void *master(void *a) {
    (void)a;
    bn_hello();
    for (int r = 1; r <= 5; r++) {
        work_ms(30);
        /* Every worker waits before the round is released. The work comes
         * first: a worker that the scheduler keeps from waiting again
         * then shortens only its own wait, not the others'. */
        while (atomic_load(&waiting) < 3 * r)
            sched_yield();
        pthread_mutex_lock(&m);
        round_no = r;
        pthread_cond_broadcast(&c);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *worker(void *a) {
    (void)a;
    bn_hello();
    for (int r = 1; r <= 5; r++) {
        pthread_mutex_lock(&m);
        atomic_fetch_add(&waiting, 1);
        while (round_no < r)
            pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[4];
    bn_spawn(&t[0], master, 0);
    for (long i = 1; i < 4; i++)
        bn_spawn(&t[i], worker, i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
