/* What every program of workloads/user shares: the clock around the
 * kernel call, the line that reports it, and the arguments. */
#ifndef USER_TIMING_H
#define USER_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The line the accuracy bench reads: one per timed kernel call (per rank
 * in an MPI program). */
static inline void report_kernel(const char *kernel, int rank, double seconds)
{
    printf("{\"kernel\":\"%s\",\"rank\":%d,\"seconds\":%.9f}\n", kernel, rank, seconds);
    fflush(stdout);
}

/* `PROGRAM KERNEL N`: the kernel's name and its size (iterations or
 * rounds); exits with a usage line when either is missing or invalid. */
static inline long parse_args(int argc, char **argv, const char *const *kernels,
                              const char **kernel)
{
    long n = argc == 3 ? atol(argv[2]) : 0;
    if (n > 0) {
        for (const char *const *k = kernels; *k; k++) {
            if (strcmp(argv[1], *k) == 0) {
                *kernel = *k;
                return n;
            }
        }
    }
    fprintf(stderr, "usage: %s KERNEL N (KERNEL:", argv[0]);
    for (const char *const *k = kernels; *k; k++)
        fprintf(stderr, " %s", *k);
    fprintf(stderr, "; N > 0)\n");
    exit(2);
}

#endif
