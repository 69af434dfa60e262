/* The computation of the parallel programs of workloads/user: calls of a
 * small instrumented leaf, so that measured, their work is perturbed by
 * the probes of ordinary function calls as well as by those of their
 * synchronization. */
#ifndef USER_WORK_H
#define USER_WORK_H

#include <stdint.h>

#define LEAF_ROUNDS 24
#define GOLDEN 0x9E3779B97F4A7C15ull

__attribute__((noinline)) static uint64_t leaf(uint64_t x)
{
    for (int r = 0; r < LEAF_ROUNDS; r++)
        x = (x ^ (x >> 29)) * GOLDEN;
    return x;
}

/* `calls` calls of the leaf, chained. */
__attribute__((noinline)) static uint64_t compute(uint64_t x, long calls)
{
    for (long i = 0; i < calls; i++)
        x = leaf(x + (uint64_t)i);
    return x;
}

#endif
