/* Two POSIX threads synchronizing the three common ways, built with
 * -finstrument-functions:
 *
 *   threads barrier N   N rounds of uneven work, a barrier after each
 *   threads mutex N     N iterations per thread of work outside and
 *                       inside one contended mutex
 *   threads condvar N   a producer hands N items to a consumer through a
 *                       bounded queue (a mutex and two condition variables)
 *
 * The main thread times the kernel (threads created, run and joined) and
 * prints one JSON line, then a checksum. */
#include <pthread.h>

#include "timing.h"
#include "work.h"

#define THREADS 2
#define BARRIER_CALLS 200
#define MUTEX_OUTSIDE 24
#define MUTEX_INSIDE 12
#define PRODUCE_CALLS 40
#define CONSUME_CALLS 48
#define QUEUE 8

static long rounds;
static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static uint64_t shared, queue[QUEUE];
static long head, count;
static uint64_t result[THREADS];

static void *barrier_thread(void *arg)
{
    long t = (long)arg;
    uint64_t x = (uint64_t)t;
    for (long r = 0; r < rounds; r++) {
        /* The late thread alternates: 3 units against 2. */
        long calls = BARRIER_CALLS * (((r + t) % 2) ? 3 : 2) / 2;
        x = compute(x, calls);
        pthread_barrier_wait(&barrier);
    }
    result[t] = x;
    return NULL;
}

static void *mutex_thread(void *arg)
{
    long t = (long)arg;
    uint64_t x = (uint64_t)t;
    for (long r = 0; r < rounds; r++) {
        x = compute(x, MUTEX_OUTSIDE);
        pthread_mutex_lock(&lock);
        shared = compute(shared + x, MUTEX_INSIDE);
        pthread_mutex_unlock(&lock);
    }
    result[t] = x;
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    uint64_t x = 7;
    for (long r = 0; r < rounds; r++) {
        x = compute(x, PRODUCE_CALLS);
        pthread_mutex_lock(&lock);
        while (count == QUEUE)
            pthread_cond_wait(&not_full, &lock);
        queue[(head + count) % QUEUE] = x;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    result[0] = x;
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&not_empty, &lock);
        uint64_t item = queue[head];
        head = (head + 1) % QUEUE;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
        sum += compute(item, CONSUME_CALLS);
    }
    result[1] = sum;
    return NULL;
}

__attribute__((noinline)) uint64_t timed_kernel(char kind)
{
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) {
        void *(*body)(void *) = kind == 'b'   ? barrier_thread
                                : kind == 'm' ? mutex_thread
                                : t == 0      ? producer
                                              : consumer;
        if (pthread_create(&th[t], NULL, body, (void *)t) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (long t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    return result[0] ^ result[1] ^ shared;
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"barrier", "mutex", "condvar", NULL};
    const char *kernel;
    rounds = parse_args(argc, argv, kernels, &kernel);
    pthread_barrier_init(&barrier, NULL, THREADS);
    double t0 = now_s();
    uint64_t x = timed_kernel(kernel[0]);
    double t1 = now_s();
    report_kernel(kernel, 0, t1 - t0);
    printf("checksum %llu\n", (unsigned long long)x);
    return 0;
}
