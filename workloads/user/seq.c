/* Sequential C kernel at three granularities, built with
 * -finstrument-functions: every function call below is a pair of probes
 * when measured.
 *
 *   seq_c fine N     N iterations of five nested tiny inline functions
 *   seq_c medium N   N calls of a leaf of MEDIUM_ROUNDS rounds
 *   seq_c coarse N   N calls of a leaf of COARSE_ROUNDS rounds
 *
 * Prints the kernel's wall time (one JSON line) and a checksum. */
#include <stdint.h>

#include "timing.h"

#define MEDIUM_ROUNDS 16
#define COARSE_ROUNDS 96
#define GOLDEN 0x9E3779B97F4A7C15ull

/* Inlined, they keep their probes: five function calls measured, almost
 * no work between them. */
static inline uint64_t scramble(uint64_t x) { return x * GOLDEN; }
static inline uint64_t fold(uint64_t x) { return scramble(x ^ (x >> 29)); }
static inline uint64_t bump(uint64_t x) { return fold(x + 1); }
static inline uint64_t flip(uint64_t x) { return bump(x ^ 5); }
static inline uint64_t step(uint64_t x, uint64_t i) { return flip(x + i); }

__attribute__((noinline)) uint64_t leaf(uint64_t x, long rounds)
{
    for (long r = 0; r < rounds; r++)
        x = (x ^ (x >> 29)) * GOLDEN;
    return x;
}

__attribute__((noinline)) uint64_t timed_kernel(long rounds, long n)
{
    uint64_t x = 1;
    if (rounds == 0) {
        for (long i = 0; i < n; i++)
            x = step(x, (uint64_t)i);
    } else {
        for (long i = 0; i < n; i++)
            x = leaf(x + (uint64_t)i, rounds);
    }
    return x;
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"fine", "medium", "coarse", NULL};
    const char *kernel;
    long n = parse_args(argc, argv, kernels, &kernel);
    long rounds = kernel[0] == 'f' ? 0 : kernel[0] == 'm' ? MEDIUM_ROUNDS : COARSE_ROUNDS;
    double t0 = now_s();
    uint64_t x = timed_kernel(rounds, n);
    double t1 = now_s();
    report_kernel(kernel, 0, t1 - t0);
    printf("checksum %llu\n", (unsigned long long)x);
    return 0;
}
