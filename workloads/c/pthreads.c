/* POSIX threads with known behaviour, for the interposition tests: each of
 * THREADS workers does ITERS rounds of every kind of synchronization.
 *
 *   pthreads [THREADS] [ITERS]
 *
 * Per worker and round: mutex lock/unlock, trylock (and unlock if it got
 * the lock), read lock, write lock, spin lock, semaphore wait (main posts
 * THREADS * ITERS times), barrier wait. Once: a condition wait for a flag
 * that main sets and broadcasts. The program prints the addresses of its
 * objects and the counts that depend on timing, for the tests to compare
 * with what was recorded. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t flag_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flag_cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t barrier;
static sem_t sem;
static int flag;
static int iters;
static long shared_sum;
static long trylock_ok, cond_waits;

static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < iters; i++) {
        pthread_mutex_lock(&mutex);
        shared_sum += id;
        pthread_mutex_unlock(&mutex);
        if (pthread_mutex_trylock(&mutex) == 0) {
            trylock_ok++;
            pthread_mutex_unlock(&mutex);
        }
        pthread_rwlock_rdlock(&rwlock);
        long seen = shared_sum;
        pthread_rwlock_unlock(&rwlock);
        pthread_rwlock_wrlock(&rwlock);
        shared_sum += seen & 1;
        pthread_rwlock_unlock(&rwlock);
        pthread_spin_lock(&spin);
        shared_sum += 1;
        pthread_spin_unlock(&spin);
        sem_wait(&sem);
        pthread_barrier_wait(&barrier);
    }
    pthread_mutex_lock(&flag_mutex);
    while (!flag) {
        cond_waits++;
        pthread_cond_wait(&flag_cond, &flag_mutex);
    }
    pthread_mutex_unlock(&flag_mutex);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 3;
    iters = argc > 2 ? atoi(argv[2]) : 10;
    pthread_t *t = malloc(sizeof *t * threads);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_init(&barrier, NULL, threads);
    sem_init(&sem, 0, 0);
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads * iters; i++)
        sem_post(&sem);
    pthread_mutex_lock(&flag_mutex);
    flag = 1;
    pthread_cond_broadcast(&flag_cond);
    pthread_mutex_unlock(&flag_mutex);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    /* The same barrier made again, for main alone: a group of its own. */
    pthread_barrier_destroy(&barrier);
    pthread_barrier_init(&barrier, NULL, 1);
    pthread_barrier_wait(&barrier);
    printf("mutex=%lu flag_mutex=%lu flag_cond=%lu rwlock=%lu spin=%lu barrier=%lu sem=%lu\n",
           (unsigned long)&mutex, (unsigned long)&flag_mutex, (unsigned long)&flag_cond,
           (unsigned long)&rwlock, (unsigned long)&spin, (unsigned long)&barrier,
           (unsigned long)&sem);
    printf("trylock_ok=%ld cond_waits=%ld sum=%ld\n", trylock_ok, cond_waits, shared_sum);
    free(t);
    return 0;
}
