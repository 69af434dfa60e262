/* Parallel kernels on MPI ranks for the accuracy of perturbation
 * compensation: the MPI counterparts of workloads/src/parallel.
 *
 *   accuracy [--kernels barrier,forkjoin,pipeline,reduce|all]
 *            [--level raw|full] [--reps N] [--warmup N] [--scale test|bench]
 *
 * Kernels (every rank runs each; p ranks):
 *   barrier   many short phases: n bodies on each rank, then MPI_Barrier;
 *   forkjoin  uneven work: rank r does (r+1) x n bodies, then all ranks
 *             combine their results with MPI_Allreduce;
 *   pipeline  a message chain with a late sender: rank 0 does 4 x n
 *             bodies, then sends to rank 1; rank r > 0 receives from r-1,
 *             does n bodies and sends to r+1; the last rank only receives;
 *   reduce    Livermore 3 on ranks: each rank's share of an inner product,
 *             n blocks of 128 elements, one body a block; the partial sums
 *             (fixed point, so that the order of addition does not matter)
 *             go to rank 0 with MPI_Reduce.
 * each `passes` times (phases, rounds, messages, sweeps). The bodies of
 * barrier, forkjoin and pipeline chain on the previous body's result on
 * the rank, the index's mix included (see workloads/src/parallel/kernels.rs).
 *
 * Levels: raw, no probes of its own (run it without the interposition
 * library: the reference time T); full, a region of kind Loop around
 * every body (run it under the library, which also records every MPI
 * call through PMPI: the measured T_m). The bodies are the same code at
 * both levels: `full` only decides whether the probe around them is
 * entered.
 *
 * Each kernel run is bracketed by MPI_Barrier; its time, and the region
 * `kernel:<name>` on rank 0, span from the return of the first barrier
 * to the return of the second. Then rank 0 collects the checksum
 * (MPI_Reduce of every rank's) and prints one JSON line:
 *   {"kernel":"pipeline","level":"full","ranks":4,"rep":0,"n":..,
 *    "passes":..,"seconds":s,"checksum":c,"bodies":b}
 * with `bodies` the loop bodies of all ranks together. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c/pxprobe.h"

/* 64 well-mixed bits of x (the SplitMix64 finalizer). */
static uint64_t mix(uint64_t x) {
    uint64_t z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* `steps` rounds of a multiply-rotate-xor chain: dependent integer work
 * of about 2.5 ns a step that the compiler cannot shorten. */
static __attribute__((noinline)) uint64_t grain(uint64_t x, unsigned steps) {
    __asm__ volatile("" : "+r"(steps));
    for (unsigned i = 0; i < steps; i++) {
        x *= 0x9e3779b97f4a7c15ull;
        x = ((x << 23) | (x >> 41)) ^ 0x5851f42d4c957f2dull;
    }
    return x;
}

/* Grain steps of a body, and elements of a reduce block: sized, as the
 * thread kernels' bodies are (workloads/src/parallel/kernels.rs), so that
 * the probes make a kernel 2 to 3 times as long. */
#define STEPS 40
#define BLOCK 128

static int rank, nranks, full;

/* A region around `stmt` at level full. */
#define BODY(name, stmt)                                   \
    do {                                                   \
        static px_site site_ = {name, PX_LOOP, 0};         \
        int in_ = full ? px_enter(&site_) : 0;             \
        stmt;                                              \
        px_leave(in_);                                     \
    } while (0)

struct size { long n, passes; };

static uint64_t k_barrier(struct size s, uint64_t *bodies) {
    uint64_t acc = 0;
    for (long ph = 0; ph < s.passes; ph++) {
        for (long i = 0; i < s.n; i++)
            BODY("barrier body", acc = grain(mix(acc ^ (uint64_t)((ph * nranks + rank) * s.n + i)), STEPS));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    *bodies = (uint64_t)(s.passes * s.n * nranks);
    return acc;
}

static uint64_t k_forkjoin(struct size s, uint64_t *bodies) {
    uint64_t total = 0;
    for (long round = 0; round < s.passes; round++) {
        uint64_t acc = 0, sum = 0;
        for (long i = 0; i < (rank + 1) * s.n; i++)
            BODY("forkjoin body", acc = grain(mix(acc ^ (uint64_t)((round * nranks + rank) * s.n * nranks + i)), STEPS));
        MPI_Allreduce(&acc, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        total += sum;
    }
    /* Each rank's result already holds everyone's: count it once. */
    *bodies = (uint64_t)(s.passes * s.n * nranks * (nranks + 1) / 2);
    return rank == 0 ? total : 0;
}

static uint64_t k_pipeline(struct size s, uint64_t *bodies) {
    uint64_t acc = 0;
    for (long m = 0; m < s.passes; m++) {
        uint64_t v;
        if (rank == 0) {
            v = mix((uint64_t)m);
            for (long i = 0; i < 4 * s.n; i++)
                BODY("pipeline body", v = grain(v, STEPS));
        } else {
            MPI_Recv(&v, 1, MPI_UINT64_T, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < s.n; i++)
                BODY("pipeline body", v = grain(v ^ (uint64_t)rank, STEPS));
        }
        if (rank + 1 < nranks)
            MPI_Send(&v, 1, MPI_UINT64_T, rank + 1, 7, MPI_COMM_WORLD);
        else
            acc += v;
    }
    *bodies = (uint64_t)(s.passes * s.n * (4 + nranks - 1));
    return acc;
}

static double *rx, *rz;

static uint64_t k_reduce(struct size s, uint64_t *bodies) {
    uint64_t total = 0;
    for (long pass = 0; pass < s.passes; pass++) {
        uint64_t part = 0, sum = 0;
        for (long b = 0; b < s.n; b++) {
            double q = 0.0;
            BODY("reduce body", {
                for (long k = b * BLOCK; k < (b + 1) * BLOCK; k++)
                    q += rz[k] * rx[k];
            });
            part += (uint64_t)(int64_t)(q * (double)(1ull << 40));
        }
        MPI_Reduce(&part, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        total += sum;
    }
    *bodies = (uint64_t)(s.passes * s.n * nranks);
    return total;
}

/* This rank's share of the vectors of `reduce`: values in [-1, 1). */
static void reduce_data(long n) {
    free(rx), free(rz);
    rx = malloc((size_t)(n * BLOCK) * sizeof(double));
    rz = malloc((size_t)(n * BLOCK) * sizeof(double));
    for (long i = 0; i < n * BLOCK; i++) {
        uint64_t g = (uint64_t)(rank * n * BLOCK + i);
        rx[i] = (double)(mix(301 ^ mix(g)) >> 11) * (2.0 / (double)(1ull << 53)) - 1.0;
        rz[i] = (double)(mix(302 ^ mix(g)) >> 11) * (2.0 / (double)(1ull << 53)) - 1.0;
    }
}

struct kernel {
    const char *name;
    uint64_t (*run)(struct size, uint64_t *);
    struct size test, bench;
    px_site site;
};

static struct kernel kernels[] = {
    {"barrier", k_barrier, {20, 20}, {200, 1500}, {"kernel:barrier", PX_USER, 0}},
    {"forkjoin", k_forkjoin, {50, 10}, {1000, 150}, {"kernel:forkjoin", PX_USER, 0}},
    {"pipeline", k_pipeline, {20, 20}, {100, 1000}, {"kernel:pipeline", PX_USER, 0}},
    {"reduce", k_reduce, {50, 10}, {400, 1000}, {"kernel:reduce", PX_USER, 0}},
};
#define NKERNELS (int)(sizeof kernels / sizeof kernels[0])

static void usage(void) {
    if (rank == 0)
        fprintf(stderr, "usage: accuracy [--kernels barrier,forkjoin,pipeline,reduce|all] "
                        "[--level raw|full] [--reps N] [--warmup N] [--scale test|bench]\n");
    MPI_Finalize();
    exit(2);
}

static long count(const char *v, long min) {
    char *end;
    long c = strtol(v, &end, 10);
    if (*v == 0 || *end != 0 || c < min)
        usage();
    return c;
}

/* Runs kernel k once: returns its seconds (on rank 0) and checksum. Only
 * a timed run is a visit of the kernel's region. */
static double run(struct kernel *k, struct size s, int timed, uint64_t *checksum,
                  uint64_t *bodies) {
    if (k->run == k_reduce)
        reduce_data(s.n);
    if (full)
        px_calibrate(); /* the probes' cost as the machine is now */
    MPI_Barrier(MPI_COMM_WORLD);
    int in = rank == 0 && timed ? px_enter(&k->site) : 0;
    double t0 = MPI_Wtime();
    uint64_t mine = k->run(s, bodies);
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = MPI_Wtime() - t0;
    px_leave(in);
    *checksum = 0;
    MPI_Reduce(&mine, checksum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    return seconds;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int chosen[NKERNELS], nk = 0;
    long reps = 1, warmup = 1;
    int bench = 1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 == argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(flag, "--kernels") == 0) {
            char *copy = strdup(v), *save = NULL;
            for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                int found = 0;
                for (int c = 0; c < NKERNELS; c++)
                    if (strcmp(p, "all") == 0 || strcmp(p, kernels[c].name) == 0) {
                        int seen = 0;
                        for (int j = 0; j < nk; j++)
                            seen |= chosen[j] == c;
                        if (!seen)
                            chosen[nk++] = c;
                        found = 1;
                    }
                if (!found)
                    usage();
            }
            free(copy);
        } else if (strcmp(flag, "--level") == 0 && strcmp(v, "raw") == 0) {
            full = 0;
        } else if (strcmp(flag, "--level") == 0 && strcmp(v, "full") == 0) {
            full = 1;
        } else if (strcmp(flag, "--reps") == 0) {
            reps = count(v, 1);
        } else if (strcmp(flag, "--warmup") == 0) {
            warmup = count(v, 0);
        } else if (strcmp(flag, "--scale") == 0 && (strcmp(v, "test") == 0 || strcmp(v, "bench") == 0)) {
            bench = strcmp(v, "bench") == 0;
        } else {
            usage();
        }
    }
    if (nk == 0)
        for (int c = 0; c < NKERNELS; c++)
            chosen[nk++] = c;
    if (nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "accuracy: needs 2 or more ranks\n");
        MPI_Finalize();
        return 2;
    }

    int failed = 0;
    for (int c = 0; c < nk; c++) {
        struct kernel *k = &kernels[chosen[c]];
        struct size s = bench ? k->bench : k->test;
        uint64_t reference = 0, checksum, bodies;
        /* Warm-up runs record no body regions. */
        int level = full;
        full = 0;
        for (long w = 0; w < warmup; w++)
            run(k, s, 0, &checksum, &bodies);
        full = level;
        for (long rep = 0; rep < reps; rep++) {
            double seconds = run(k, s, 1, &checksum, &bodies);
            if (rank != 0)
                continue;
            if (rep == 0)
                reference = checksum;
            if (checksum != reference) {
                fprintf(stderr, "accuracy: %s: checksum %llu differs from %llu\n", k->name,
                        (unsigned long long)checksum, (unsigned long long)reference);
                failed = 1;
            }
            printf("{\"kernel\":\"%s\",\"level\":\"%s\",\"ranks\":%d,\"rep\":%ld,\"n\":%ld,"
                   "\"passes\":%ld,\"seconds\":%.9g,\"checksum\":%llu,\"bodies\":%llu}\n",
                   k->name, full ? "full" : "raw", nranks, rep, s.n, s.passes, seconds,
                   (unsigned long long)checksum, (unsigned long long)bodies);
            fflush(stdout);
        }
    }
    free(rx), free(rz);
    MPI_Finalize();
    return failed;
}
