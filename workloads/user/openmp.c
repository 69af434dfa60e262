/* OpenMP loops of four kinds, in a team of two threads:
 *
 *   openmp static N    N rounds of two statically scheduled parallel loops
 *                      (Livermore's hydro fragment and equation of state,
 *                      on 64 blocks of 20-40 us each)
 *   openmp dynamic N   N rounds of a self-scheduled loop (dynamic, chunks
 *                      of one) of uneven iterations, 4-40 us
 *   openmp ordered N   N rounds of a self-scheduled loop whose iterations
 *                      end with an ordered part, in iteration order
 *                      (DOACROSS)
 *   openmp critical N  N rounds of a static loop whose iterations add into
 *                      a shared value in a critical section
 *
 * The main thread times the kernel and prints one JSON line, then a
 * checksum. */
#include <omp.h>

#include "timing.h"
#include "work.h"

#define THREADS 2
#define BLOCKS 64
#define BLOCK 256

static long rounds;
static double x[BLOCKS * BLOCK], y[BLOCKS * BLOCK], z[BLOCKS * BLOCK];
static uint64_t shared;

/* Livermore kernel 1 on block `b`, with the instrumented leaf's work. */
static uint64_t hydro(long b, uint64_t s)
{
    for (long k = b * BLOCK; k < (b + 1) * BLOCK; k++)
        x[k] = 0.5 + y[k] * (0.25 * z[k + 10 < BLOCKS * BLOCK ? k + 10 : k] + 0.125 * z[k]);
    return compute(s + (uint64_t)b, 500);
}

/* Livermore kernel 7 on block `b`. */
static uint64_t state(long b, uint64_t s)
{
    for (long k = b * BLOCK; k < (b + 1) * BLOCK - 3; k++)
        x[k] = y[k] + 0.5 * (z[k] + 0.25 * (y[k + 1] + 0.5 * (z[k + 2] + 0.25 * y[k + 3])));
    return compute(s ^ (uint64_t)b, 1000);
}

static uint64_t static_loops(void)
{
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(static) num_threads(THREADS) reduction(^ : sum)
        for (long b = 0; b < BLOCKS; b++)
            sum ^= hydro(b, (uint64_t)r);
#pragma omp parallel for schedule(static) num_threads(THREADS) reduction(^ : sum)
        for (long b = 0; b < BLOCKS; b++)
            sum ^= state(b, (uint64_t)r);
    }
    return sum;
}

static uint64_t dynamic_loop(void)
{
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(THREADS) reduction(^ : sum)
        for (long i = 0; i < BLOCKS; i++)
            sum ^= compute((uint64_t)(r + i), 100 + (i * 37) % 900);
    }
    return sum;
}

static uint64_t ordered_loop(void)
{
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++) {
#pragma omp parallel for ordered schedule(dynamic, 1) num_threads(THREADS)
        for (long i = 0; i < BLOCKS / 2; i++) {
            uint64_t v = compute((uint64_t)(r * i), 300 + (i * 53) % 500);
#pragma omp ordered
            sum = compute(sum + v, 60);
        }
    }
    return sum;
}

static uint64_t critical_loop(void)
{
    for (long r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(static) num_threads(THREADS)
        for (long i = 0; i < BLOCKS; i++) {
            uint64_t v = compute((uint64_t)(r + i), 300);
#pragma omp critical
            shared = compute(shared + v, 60);
        }
    }
    return shared;
}

__attribute__((noinline)) uint64_t timed_kernel(char kind)
{
    switch (kind) {
    case 's':
        return static_loops();
    case 'd':
        return dynamic_loop();
    case 'o':
        return ordered_loop();
    default:
        return critical_loop();
    }
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"static", "dynamic", "ordered", "critical", NULL};
    const char *kernel;
    rounds = parse_args(argc, argv, kernels, &kernel);
    for (long k = 0; k < BLOCKS * BLOCK; k++) {
        y[k] = 1.0 / (double)(k + 1);
        z[k] = 2.0 / (double)(k + 3);
    }
    double t0 = now_s();
    uint64_t s = timed_kernel(kernel[0]);
    double t1 = now_s();
    report_kernel(kernel, 0, t1 - t0);
    printf("checksum %llu\n", (unsigned long long)(s ^ (uint64_t)(x[7] * 1e6)));
    return 0;
}
