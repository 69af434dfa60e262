/* Waiting on a semaphore: thread 2 takes an item that thread 1 posts
 * after 30 ms of work, ten times; the producer makes the next item once
 * the last one is taken. */
#include <semaphore.h>
#include "pt.h"
#include "../bn.h"

static sem_t items;
static atomic_int taken;

static void *producer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(30);
        sem_post(&items);
        while (atomic_load(&taken) <= i)
            sched_yield();
    }
    return NULL;
}

static void *consumer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        sem_wait(&items);
        atomic_fetch_add(&taken, 1);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    sem_init(&items, 0, 0);
    bn_spawn(&t[0], producer, 0);
    bn_spawn(&t[1], consumer, 1);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    return 0;
}
