/* A pthread kernel for overhead measurements: THREADS workers take TASKS
 * tasks from a shared counter under a mutex; a task computes for about
 * WORK inner steps; every 100 tasks of its own a worker waits at a barrier
 * with the others. Build with -finstrument-functions to measure its
 * functions too. Prints the time from the first create to the last join.
 *   tasks [THREADS] [TASKS] [WORK] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static long next_task, tasks, work, per_thread;
static double total;

static double do_task(long t) {
    double s = 0;
    for (unsigned long k = 0; k < (unsigned long)work; k++)
        s += (double)(((unsigned long)t + k) % 13) * 0.25;
    return s;
}

static long take(void) {
    pthread_mutex_lock(&lock);
    long t = next_task < tasks ? next_task++ : -1;
    pthread_mutex_unlock(&lock);
    return t;
}

static void *worker(void *arg) {
    double s = 0;
    (void)arg;
    for (long mine = 0; mine < per_thread; mine++) {
        long t = take();
        if (t >= 0)
            s += do_task(t);
        if (mine % 100 == 99)
            pthread_barrier_wait(&barrier);
    }
    pthread_mutex_lock(&lock);
    total += s;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    tasks = argc > 2 ? atol(argv[2]) : 20000;
    work = argc > 3 ? atol(argv[3]) : 20000;
    per_thread = tasks / threads;
    pthread_t t[64];
    pthread_barrier_init(&barrier, NULL, threads);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("total %g\nloop_seconds %.6f\n", total,
           (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
    return 0;
}
