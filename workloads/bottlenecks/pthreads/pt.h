/* Threads numbered in creation order: the measurement numbers a thread
 * at its first event (its start), so each creation waits until the new
 * thread has started. The flag is a plain atomic, which records nothing. */
#ifndef PT_H
#define PT_H
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static atomic_int bn_started;

static void bn_spawn(pthread_t *t, void *(*fn)(void *), long arg) {
    int before = atomic_load(&bn_started);
    pthread_create(t, NULL, fn, (void *)arg);
    while (atomic_load(&bn_started) == before)
        sched_yield();
}

static void bn_hello(void) { atomic_fetch_add(&bn_started, 1); }
#endif
