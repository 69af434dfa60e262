/* A self-scheduled loop in C: THREADS threads take the iterations of each
 * of PASSES loops one at a time from a shared counter, each iteration a
 * region of uneven work (every 50th is 60 times longer), and record every
 * hand-out with px_iteration, so that `parallax compensate --liberal=loops`
 * can hand them out again.
 *
 * usage: selfsched THREADS ITERATIONS PASSES */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pxprobe.h"

static long n;
static uint64_t next, loop_id;
static px_site body = {"selfsched body", PX_LOOP, 0};
static volatile uint64_t sink;

static uint64_t work(uint64_t k) {
    uint64_t steps = (k % 50 == 0) ? 12000 : 200, x = k + 1;
    for (uint64_t s = 0; s < steps; s++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void *worker(void *arg) {
    (void)arg;
    uint64_t acc = 0;
    for (;;) {
        uint64_t k = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
        px_iteration(loop_id, k < (uint64_t)n ? k : PX_NO_ITERATION);
        if (k >= (uint64_t)n)
            break;
        int in = px_enter(&body);
        acc += work(k);
        px_leave(in);
    }
    sink += acc;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s THREADS ITERATIONS PASSES\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]), passes = atoi(argv[3]);
    n = atol(argv[2]);
    if (threads < 1 || threads > 64 || n < 1 || passes < 1) {
        fprintf(stderr, "%s: THREADS 1..64, ITERATIONS and PASSES at least 1\n", argv[0]);
        return 2;
    }
    pthread_t t[64];
    for (int p = 0; p < passes; p++) {
        next = 0;
        loop_id = (uint64_t)p + 1;
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
    }
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
