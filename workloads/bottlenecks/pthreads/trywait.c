/* Condition wait through a polling loop: thread 1 posts a semaphore after
 * 30 ms of work, ten times; thread 2 calls sem_trywait until it gets
 * each post, then computes 1 ms, so it waits 29 ms each time. */
#include <semaphore.h>
#include "pt.h"
#include "../bn.h"

static sem_t s;

static void *producer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        work_ms(30);
        sem_post(&s);
    }
    return NULL;
}

static void *consumer(void *a) {
    (void)a;
    bn_hello();
    for (int i = 0; i < 10; i++) {
        while (sem_trywait(&s) != 0) {
        }
        work_ms(1);
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    sem_init(&s, 0, 0);
    bn_spawn(&t[0], producer, 0);
    bn_spawn(&t[1], consumer, 0);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    return 0;
}
