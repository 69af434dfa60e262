/* The 24 Livermore Fortran Kernels (F. H. McMahon, UCRL-53745, LLNL,
 * 1986), written in C from their published Fortran definitions, at three
 * instrumentation levels: the C twin of workloads/src/livermore (same
 * sizes, same data, same order of every floating-point operation, same
 * region names), measured through the interposition library.
 *
 *   lfk [--kernels 1,3,5-7|all] [--level none,raw,full|all] [--reps N]
 *       [--warmup N] [--scale test|bench] [--passes N] [--block N]
 *
 * One JSON line per kernel run:
 *   {"kernel":"lfk03","level":"raw","rep":0,"n":1001,"passes":6900,
 *    "iterations":6906900,"seconds":s,"checksum":c,"checksum_bits":"..."}
 *
 * Levels: none, no probes; raw, a region `lfkNN` (kind Loop) around the
 * kernel; full, that region and a region around every block of --block
 * iterations (default 1) of the innermost loop(s) (`lfkNN body`,
 * `lfk14 body 2`, ...), 2 + 2 x iterations / block events, made with the
 * register-preserving probes (px_enter_preserving). Regions go through the
 * weak entry points of ../pxprobe.h: without the interposition library
 * nothing is recorded.
 *
 * The machine code is the same at every level: each kernel's loops are
 * one non-inline function, called with the level hidden from the compiler
 * (OPAQUE), whose block boundary tests it again through OPAQUE, so that no
 * copy of the loop without the probes can be made; only the probes differ
 * between raw and full. (As two copies, one with a constant 0 and one with
 * a constant 1, the loops compiled differently: with no probe recording,
 * the copy with probes took from 0.68 to 1.25 times the other's time.)
 * Every innermost iteration passes its index through an empty asm with
 * a memory clobber (OPAQUE), like std::hint::black_box in the Rust
 * version: the compiler cannot vectorize, fuse or reorder iterations, so
 * an iteration is the same scalar code with or without the probe around
 * it. Build with -ffp-contract=off (no fused multiply-add, which rustc
 * never makes either): then C and Rust compute bit-identical results. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pxprobe.h"

/* === data === */

/* 64 well-mixed bits for element i of the array seeded `seed`
 * (SplitMix64, Steele, Lea and Flood, 2014); as data.rs. */
static uint64_t bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unit(uint64_t seed, uint64_t i) {
    return (double)(bits(seed, i) >> 11) * (1.0 / (double)(1ull << 53));
}

/* Every array of a run, freed after it. */
static void *allocs[64];
static int nallocs;

static void *alloc(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p || nallocs == 64) {
        fprintf(stderr, "lfk: out of memory\n");
        exit(1);
    }
    return allocs[nallocs++] = p;
}

static void free_all(void) {
    while (nallocs > 0)
        free(allocs[--nallocs]);
}

static double *zeros(size_t len) { return alloc(len * sizeof(double)); }

static double *fill(size_t len, uint64_t seed, double lo, double hi) {
    double *a = zeros(len);
    for (size_t i = 0; i < len; i++)
        a[i] = lo + (hi - lo) * unit(seed, i);
    return a;
}

/* In order, from -0.0 as Rust's f64 Sum. */
static double sum(const double *x, size_t len) {
    double s = -0.0;
    for (size_t i = 0; i < len; i++)
        s += x[i];
    return s;
}

static double sq(double x) { return x * x; }

/* === probes === */

/* The value of `v`, unknown to the compiler, which must also assume that
 * any memory was read and written. */
#define OPAQUE(v)                                         \
    ({                                                    \
        __typeof__(v) opaque_ = (v);                      \
        __asm__ volatile("" : "+r"(opaque_) : : "memory"); \
        opaque_;                                          \
    })

static inline void block_done(int *entered) { px_leave_preserving(*entered); }

/* Innermost iterations per probed block at level full (--block). */
static size_t block_size = 1;

/* The blocks of one kernel run: the open block's region is left when the
 * run ends. */
#define BLOCKS                                                              \
    size_t blk_left_ = 1, blk_size_ = block_size;                           \
    int blk_in_ __attribute__((cleanup(block_done))) = 0

/* One step of an innermost loop: at every block_size-th step a block of
 * iterations ends and the next begins. When `full` the block is a region:
 * the previous block's region is left and a new one entered. Otherwise the
 * step counts all the same and the block boundary is an opaque no-op. */
#define BODY(name)                                                          \
    static px_site body_site_ = {name, PX_LOOP, 0};                         \
    if (--blk_left_ == 0) {                                                 \
        blk_left_ = blk_size_;                                              \
        if (OPAQUE(full)) {                                                 \
            px_leave_preserving(blk_in_);                                   \
            blk_in_ = px_enter_preserving(&body_site_);                     \
        } else {                                                            \
            __asm__ volatile("" ::: "memory");                              \
        }                                                                   \
    }

#define LOOPS static inline __attribute__((always_inline)) void

/* Kernel k's loops, the one copy that every level runs. */
#define RUNNER(k)                                                           \
    static __attribute__((noinline)) void k##_run(struct k *d, int full) { k##_loops(d, full); }

/* === kernels 1 to 8 === */

/* Kernel 1, hydro fragment: X(k) = Q + Y(k)*(R*ZX(k+10) + T*ZX(k+11)). */
struct k01 { size_t n, passes; double q, r, t, *x, *y, *zx; };
static void k01_new(struct k01 *d, size_t n) {
    d->q = 0.5, d->r = 0.25, d->t = 0.125;
    d->x = zeros(n), d->y = fill(n, 101, 0.1, 1.0), d->zx = fill(n + 11, 102, 0.1, 1.0);
}
LOOPS k01_loops(struct k01 *d, int full) {
    BLOCKS;
    double q = d->q, r = d->r, t = d->t, *x = d->x, *y = d->y, *zx = d->zx;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk01 body");
            size_t kk = OPAQUE(k);
            x[kk] = q + y[kk] * (r * zx[kk + 10] + t * zx[kk + 11]);
        }
}
RUNNER(k01)
static double k01_sum(struct k01 *d) { return sum(d->x, d->n); }

/* Kernel 2, ICCG excerpt: halving levels II = n, n/2, ...; on each,
 * X(i) = X(k) - V(k)*X(k-1) - V(k+1)*X(k+1) for every second k. */
struct k02 { size_t n, passes; double *x, *v; };
static uint64_t k02_per_pass(size_t n) {
    uint64_t ii = n, count = 0;
    for (;;) {
        count += ii / 2;
        ii /= 2;
        if (ii <= 1)
            return count;
    }
}
static void k02_new(struct k02 *d, size_t n) {
    d->x = fill(2 * n + 2, 201, 0.1, 1.0), d->v = fill(2 * n + 2, 202, 0.05, 0.45);
}
LOOPS k02_loops(struct k02 *d, int full) {
    BLOCKS;
    double *x = d->x, *v = d->v;
    for (size_t p = 0; p < d->passes; p++) {
        size_t ii = d->n, ipntp = 0;
        do {
            size_t ipnt = ipntp;
            ipntp += ii;
            ii /= 2;
            size_t i = ipntp;
            for (size_t k = ipnt + 1; k < ipntp; k += 2) {
                BODY("lfk02 body");
                size_t kk = OPAQUE(k);
                x[i] = x[kk] - v[kk] * x[kk - 1] - v[kk + 1] * x[kk + 1];
                i++;
            }
        } while (ii > 1);
    }
}
RUNNER(k02)
static double k02_sum(struct k02 *d) { return sum(d->x, 2 * d->n + 2); }

/* Kernel 3, inner product: Q = Q + Z(k)*X(k) from Q = 0. */
struct k03 { size_t n, passes; double q, *x, *z; };
static void k03_new(struct k03 *d, size_t n) {
    d->q = 0.0, d->x = fill(n, 301, -1.0, 1.0), d->z = fill(n, 302, -1.0, 1.0);
}
LOOPS k03_loops(struct k03 *d, int full) {
    BLOCKS;
    double *x = d->x, *z = d->z;
    for (size_t p = 0; p < d->passes; p++) {
        double q = 0.0;
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk03 body");
            size_t kk = OPAQUE(k);
            q += z[kk] * x[kk];
        }
        d->q = q;
    }
}
RUNNER(k03)
static double k03_sum(struct k03 *d) { return d->q; }

/* Kernel 4, banded linear equations: for k = 7, 7+m, ... <= n,
 * TEMP = X(k-1) - sum over j = 5, 10, ... <= n of X(lw)*Y(j), then
 * X(k-1) = Y(5)*TEMP. */
struct k04 { size_t n, passes; double *x, *y; };
static uint64_t k04_per_pass(size_t n) {
    size_t m = (n - 7) / 2;
    return (uint64_t)((n - 7) / m + 1) * (n / 5);
}
static void k04_new(struct k04 *d, size_t n) {
    d->x = fill(n + n / 5 + 1, 401, 0.0, 1.0), d->y = fill(n, 402, 0.0, 0.5);
}
LOOPS k04_loops(struct k04 *d, int full) {
    BLOCKS;
    size_t n = d->n, m = (n - 7) / 2;
    double *x = d->x, *y = d->y;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t kk = 0; kk <= n - 7; kk += m) {
            size_t lw = kk;
            double temp = x[kk + 5];
            for (size_t j = 4; j < n; j += 5) {
                BODY("lfk04 body");
                size_t jj = OPAQUE(j);
                temp -= x[lw] * y[jj];
                lw++;
            }
            x[kk + 5] = y[4] * temp;
        }
}
RUNNER(k04)
static double k04_sum(struct k04 *d) { return sum(d->x, d->n + d->n / 5 + 1); }

/* Kernel 5, tri-diagonal elimination: X(i) = Z(i)*(Y(i) - X(i-1)). */
struct k05 { size_t n, passes; double *x, *y, *z; };
static void k05_new(struct k05 *d, size_t n) {
    d->x = fill(n, 501, 0.0, 1.0), d->y = fill(n, 502, 0.0, 1.0), d->z = fill(n, 503, 0.1, 0.9);
}
LOOPS k05_loops(struct k05 *d, int full) {
    BLOCKS;
    double *x = d->x, *y = d->y, *z = d->z;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t i = 1; i < d->n; i++) {
            BODY("lfk05 body");
            size_t ii = OPAQUE(i);
            x[ii] = z[ii] * (y[ii] - x[ii - 1]);
        }
}
RUNNER(k05)
static double k05_sum(struct k05 *d) { return sum(d->x, d->n); }

/* Kernel 6, general linear recurrence: W(i) = 0.01, then
 * W(i) = W(i) + B(i,k)*W(i-k) for k = 1..i-1. */
struct k06 { size_t n, passes; double *w, *b; };
static void k06_new(struct k06 *d, size_t n) {
    d->w = fill(n, 601, 0.0, 1.0), d->b = fill(n * n, 602, 0.0, 1.0 / (double)n);
}
LOOPS k06_loops(struct k06 *d, int full) {
    BLOCKS;
    size_t n = d->n;
    double *w = d->w, *b = d->b;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t i = 1; i < n; i++) {
            w[i] = 0.01;
            for (size_t k = 0; k < i; k++) {
                BODY("lfk06 body");
                size_t kk = OPAQUE(k);
                w[i] += b[kk * n + i] * w[i - kk - 1];
            }
        }
}
RUNNER(k06)
static double k06_sum(struct k06 *d) { return sum(d->w, d->n); }

/* Kernel 7, equation of state fragment. */
struct k07 { size_t n, passes; double q, r, t, *x, *y, *z, *u; };
static void k07_new(struct k07 *d, size_t n) {
    d->q = 0.5, d->r = 0.25, d->t = 0.125;
    d->x = zeros(n), d->y = fill(n, 701, 0.0, 1.0), d->z = fill(n, 702, 0.0, 1.0);
    d->u = fill(n + 6, 703, 0.0, 1.0);
}
LOOPS k07_loops(struct k07 *d, int full) {
    BLOCKS;
    double q = d->q, r = d->r, t = d->t, *x = d->x, *y = d->y, *z = d->z, *u = d->u;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk07 body");
            size_t kk = OPAQUE(k);
            x[kk] = u[kk] + r * (z[kk] + r * y[kk]) +
                    t * (u[kk + 3] + r * (u[kk + 2] + r * u[kk + 1]) +
                         t * (u[kk + 6] + q * (u[kk + 5] + q * u[kk + 4])));
        }
}
RUNNER(k07)
static double k07_sum(struct k07 *d) { return sum(d->x, d->n); }

/* Kernel 8, ADI integration; Ui(kx,ky,nl) at ((nl-1)*(n+1) + ky-1)*5 + kx-1. */
struct k08 { size_t n, passes; double *u1, *u2, *u3, *du1, *du2, *du3; };
static void k08_new(struct k08 *d, size_t n) {
    size_t len = 2 * (n + 1) * 5;
    d->u1 = fill(len, 801, 0.0, 1.0), d->u2 = fill(len, 802, 0.0, 1.0);
    d->u3 = fill(len, 803, 0.0, 1.0);
    d->du1 = zeros(n + 1), d->du2 = zeros(n + 1), d->du3 = zeros(n + 1);
}
LOOPS k08_loops(struct k08 *d, int full) {
    BLOCKS;
    size_t n = d->n;
    const double a11 = 0.11, a12 = 0.12, a13 = 0.13, a21 = 0.21, a22 = 0.22, a23 = 0.23,
                 a31 = 0.31, a32 = 0.32, a33 = 0.33, sig = 0.05, fw = 2.0;
    double *u1 = d->u1, *u2 = d->u2, *u3 = d->u3, *du1 = d->du1, *du2 = d->du2, *du3 = d->du3;
    size_t p1 = 0, p2 = (n + 1) * 5;
#define AT(p, x, y) ((p) + (y) * 5 + (x))
    for (size_t p = 0; p < d->passes; p++)
        for (size_t kx = 1; kx < 3; kx++)
            for (size_t ky0 = 1; ky0 < n; ky0++) {
                BODY("lfk08 body");
                size_t ky = OPAQUE(ky0);
                du1[ky] = u1[AT(p1, kx, ky + 1)] - u1[AT(p1, kx, ky - 1)];
                du2[ky] = u2[AT(p1, kx, ky + 1)] - u2[AT(p1, kx, ky - 1)];
                du3[ky] = u3[AT(p1, kx, ky + 1)] - u3[AT(p1, kx, ky - 1)];
                u1[AT(p2, kx, ky)] = u1[AT(p1, kx, ky)] + a11 * du1[ky] + a12 * du2[ky] +
                                     a13 * du3[ky] +
                                     sig * (u1[AT(p1, kx + 1, ky)] - fw * u1[AT(p1, kx, ky)] +
                                            u1[AT(p1, kx - 1, ky)]);
                u2[AT(p2, kx, ky)] = u2[AT(p1, kx, ky)] + a21 * du1[ky] + a22 * du2[ky] +
                                     a23 * du3[ky] +
                                     sig * (u2[AT(p1, kx + 1, ky)] - fw * u2[AT(p1, kx, ky)] +
                                            u2[AT(p1, kx - 1, ky)]);
                u3[AT(p2, kx, ky)] = u3[AT(p1, kx, ky)] + a31 * du1[ky] + a32 * du2[ky] +
                                     a33 * du3[ky] +
                                     sig * (u3[AT(p1, kx + 1, ky)] - fw * u3[AT(p1, kx, ky)] +
                                            u3[AT(p1, kx - 1, ky)]);
            }
#undef AT
}
RUNNER(k08)
static double k08_sum(struct k08 *d) {
    size_t len = 2 * (d->n + 1) * 5;
    return sum(d->u1, len) + sum(d->u2, len) + sum(d->u3, len);
}

/* === kernels 9 to 16 === */

/* Kernel 9, integrate predictors; PX(i,k) at (k-1)*25 + i-1. */
struct k09 { size_t n, passes; double *px; };
static void k09_new(struct k09 *d, size_t n) { d->px = fill(n * 25, 901, 0.0, 1.0); }
LOOPS k09_loops(struct k09 *d, int full) {
    BLOCKS;
    const double dm22 = 0.22, dm23 = 0.23, dm24 = 0.24, dm25 = 0.25, dm26 = 0.26, dm27 = 0.27,
                 dm28 = 0.28, c0 = 0.5;
    double *px = d->px;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk09 body");
            size_t q = OPAQUE(k) * 25;
            px[q] = dm28 * px[q + 12] + dm27 * px[q + 11] + dm26 * px[q + 10] +
                    dm25 * px[q + 9] + dm24 * px[q + 8] + dm23 * px[q + 7] + dm22 * px[q + 6] +
                    c0 * (px[q + 4] + px[q + 5]) + px[q + 2];
        }
}
RUNNER(k09)
static double k09_sum(struct k09 *d) { return sum(d->px, d->n * 25); }

/* Kernel 10, difference predictors. */
struct k10 { size_t n, passes; double *px, *cx; };
static void k10_new(struct k10 *d, size_t n) {
    d->px = fill(n * 25, 1001, 0.0, 1.0), d->cx = fill(n * 25, 1002, 0.0, 1.0);
}
LOOPS k10_loops(struct k10 *d, int full) {
    BLOCKS;
    double *px = d->px, *cx = d->cx;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk10 body");
            size_t q = OPAQUE(k) * 25;
            double ar = cx[q + 4], br, cr;
            br = ar - px[q + 4];
            px[q + 4] = ar;
            cr = br - px[q + 5];
            px[q + 5] = br;
            ar = cr - px[q + 6];
            px[q + 6] = cr;
            br = ar - px[q + 7];
            px[q + 7] = ar;
            cr = br - px[q + 8];
            px[q + 8] = br;
            ar = cr - px[q + 9];
            px[q + 9] = cr;
            br = ar - px[q + 10];
            px[q + 10] = ar;
            cr = br - px[q + 11];
            px[q + 11] = br;
            px[q + 13] = cr - px[q + 12];
            px[q + 12] = cr;
        }
}
RUNNER(k10)
static double k10_sum(struct k10 *d) { return sum(d->px, d->n * 25); }

/* Kernel 11, first sum: X(k) = X(k-1) + Y(k). */
struct k11 { size_t n, passes; double *x, *y; };
static void k11_new(struct k11 *d, size_t n) { d->x = zeros(n), d->y = fill(n, 1101, -1.0, 1.0); }
LOOPS k11_loops(struct k11 *d, int full) {
    BLOCKS;
    double *x = d->x, *y = d->y;
    for (size_t p = 0; p < d->passes; p++) {
        x[0] = y[0];
        for (size_t k = 1; k < d->n; k++) {
            BODY("lfk11 body");
            size_t kk = OPAQUE(k);
            x[kk] = x[kk - 1] + y[kk];
        }
    }
}
RUNNER(k11)
static double k11_sum(struct k11 *d) { return sum(d->x, d->n); }

/* Kernel 12, first difference: X(k) = Y(k+1) - Y(k). */
struct k12 { size_t n, passes; double *x, *y; };
static void k12_new(struct k12 *d, size_t n) {
    d->x = zeros(n), d->y = fill(n + 1, 1201, -1.0, 1.0);
}
LOOPS k12_loops(struct k12 *d, int full) {
    BLOCKS;
    double *x = d->x, *y = d->y;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk12 body");
            size_t kk = OPAQUE(k);
            x[kk] = y[kk + 1] - y[kk];
        }
}
RUNNER(k12)
static double k12_sum(struct k12 *d) { return sum(d->x, d->n); }

/* Kernel 13, 2-D particle in cell; MOD2N(i, 64) is i AND 63. */
struct k13 { size_t n, passes; double *p, *b, *c, *h, *y, *z; int64_t *e, *f; };
static int64_t *k13_offsets(uint64_t seed) {
    int64_t *o = alloc(96 * sizeof(int64_t));
    for (int64_t i = 0; i < 96; i++) {
        int64_t c = i - 32;
        o[i] = c == 0 ? 1 : c == 63 ? -1 : (c >= 0 && c < 64) ? (int64_t)(bits(seed, i) % 3) - 1 : 0;
    }
    return o;
}
static void k13_new(struct k13 *d, size_t n) {
    d->p = zeros(n * 4);
    for (size_t k = 0; k < n; k++) {
        d->p[k * 4] = 64.0 * unit(1301, k);
        d->p[k * 4 + 1] = 64.0 * unit(1302, k);
        d->p[k * 4 + 2] = 2.0 * unit(1303, k) - 1.0;
        d->p[k * 4 + 3] = 2.0 * unit(1304, k) - 1.0;
    }
    d->b = fill(64 * 64, 1305, -0.5, 0.5), d->c = fill(64 * 64, 1306, -0.5, 0.5);
    d->h = zeros(64 * 64);
    d->y = fill(96, 1307, -1.0, 1.0), d->z = fill(96, 1308, -1.0, 1.0);
    d->e = k13_offsets(1309), d->f = k13_offsets(1310);
}
LOOPS k13_loops(struct k13 *d, int full) {
    BLOCKS;
    double *p = d->p, *b = d->b, *c = d->c, *h = d->h, *y = d->y, *z = d->z;
    int64_t *e = d->e, *f = d->f;
    for (size_t pass = 0; pass < d->passes; pass++)
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk13 body");
            size_t q = OPAQUE(k) * 4;
            size_t i1 = (size_t)((int64_t)p[q] & 63);
            size_t j1 = (size_t)((int64_t)p[q + 1] & 63);
            p[q + 2] += b[j1 * 64 + i1];
            p[q + 3] += c[j1 * 64 + i1];
            p[q] += p[q + 2];
            p[q + 1] += p[q + 3];
            size_t i2 = (size_t)((int64_t)p[q] & 63);
            size_t j2 = (size_t)((int64_t)p[q + 1] & 63);
            p[q] += y[i2 + 32];
            p[q + 1] += z[j2 + 32];
            i2 = (size_t)((int64_t)i2 + e[i2 + 32]);
            j2 = (size_t)((int64_t)j2 + f[j2 + 32]);
            h[j2 * 64 + i2] += 1.0;
        }
}
RUNNER(k13)
static double k13_sum(struct k13 *d) { return sum(d->p, d->n * 4) + sum(d->h, 64 * 64); }

/* Kernel 14, 1-D particle in cell: gather, push, deposit (three loops);
 * EX, DEX and RH are 1-based. */
struct k14 {
    size_t n, passes;
    double *grd, *ex, *dex, *xi, *ex1, *dex1, *vx, *xx, *rx, *rh;
    int64_t *ix, *ir;
};
static void k14_new(struct k14 *d, size_t n) {
    d->grd = fill(n, 1401, 1.0, (double)n + 1.0);
    d->ex = fill(n + 1, 1402, 0.0, 2.0), d->dex = fill(n + 1, 1403, 0.0, 0.01);
    d->ix = alloc(n * sizeof(int64_t)), d->ir = alloc(n * sizeof(int64_t));
    d->xi = zeros(n), d->ex1 = zeros(n), d->dex1 = zeros(n), d->vx = zeros(n);
    d->xx = zeros(n), d->rx = zeros(n), d->rh = zeros(2050);
}
LOOPS k14_loops(struct k14 *d, int full) {
    BLOCKS;
    const double flx = 0.001;
    double *grd = d->grd, *ex = d->ex, *dex = d->dex, *xi = d->xi, *ex1 = d->ex1;
    double *dex1 = d->dex1, *vx = d->vx, *xx = d->xx, *rx = d->rx, *rh = d->rh;
    int64_t *ix = d->ix, *ir = d->ir;
    for (size_t p = 0; p < d->passes; p++) {
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk14 body 1");
            size_t kk = OPAQUE(k);
            vx[kk] = 0.0;
            xx[kk] = 0.0;
            ix[kk] = (int64_t)grd[kk];
            xi[kk] = (double)ix[kk];
            ex1[kk] = ex[ix[kk]];
            dex1[kk] = dex[ix[kk]];
        }
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk14 body 2");
            size_t kk = OPAQUE(k);
            vx[kk] = vx[kk] + ex1[kk] + (xx[kk] - xi[kk]) * dex1[kk];
            xx[kk] = xx[kk] + vx[kk] + flx;
            ir[kk] = (int64_t)xx[kk];
            rx[kk] = xx[kk] - (double)ir[kk];
            ir[kk] = (ir[kk] & 2047) + 1;
            xx[kk] = rx[kk] + (double)ir[kk];
        }
        for (size_t k = 0; k < d->n; k++) {
            BODY("lfk14 body 3");
            size_t kk = OPAQUE(k);
            size_t i = (size_t)ir[kk];
            rh[i] = rh[i] + 1.0 - rx[kk];
            rh[i + 1] += rx[kk];
        }
    }
}
RUNNER(k14)
static double k14_sum(struct k14 *d) {
    return sum(d->rh, 2050) + sum(d->xx, d->n) + sum(d->vx, d->n);
}

/* Kernel 15, casual Fortran; VH(k,j) at (j-1)*nz + k-1, 7 columns. */
struct k15 { size_t n, passes; double *vh, *vf, *vg, *vy, *vs; };
static void k15_new(struct k15 *d, size_t n) {
    size_t len = 7 * n;
    d->vh = fill(len, 1501, 0.1, 1.0), d->vf = fill(len, 1502, 0.5, 1.5);
    d->vg = fill(len, 1503, 0.1, 1.0), d->vy = zeros(len), d->vs = zeros(len);
}
LOOPS k15_loops(struct k15 *d, int full) {
    BLOCKS;
    const size_t ng = 7, nz = d->n;
    const double ar = 0.053, br = 0.073;
    double *vh = d->vh, *vf = d->vf, *vg = d->vg, *vy = d->vy, *vs = d->vs;
#define AT(j, k) ((j) * nz + (k))
    for (size_t p = 0; p < d->passes; p++)
        for (size_t j = 1; j < ng; j++)
            for (size_t k0 = 1; k0 < nz; k0++) {
                BODY("lfk15 body");
                size_t k = OPAQUE(k0);
                double r, s, t;
                if (j + 1 >= ng) {
                    vy[AT(j, k)] = 0.0; /* 30 */
                    continue;
                }
                t = vh[AT(j + 1, k)] - vh[AT(j, k)] > 0.0 ? ar : br; /* 31, 32, 33 */
                if (vf[AT(j, k)] - vf[AT(j, k - 1)] < 0.0) {         /* 34, 35, 36 */
                    r = fmax(vh[AT(j, k - 1)], vh[AT(j + 1, k - 1)]);
                    s = vf[AT(j, k - 1)];
                } else {
                    r = fmax(vh[AT(j, k)], vh[AT(j + 1, k)]);
                    s = vf[AT(j, k)];
                }
                double g = vg[AT(j, k)]; /* 37 */
                vy[AT(j, k)] = sqrt(g * g + r * r) * t / s;
                if (k + 1 >= nz) {
                    vs[AT(j, k)] = 0.0; /* 39 */
                    continue;
                }
                if (vf[AT(j, k)] - vf[AT(j - 1, k)] < 0.0) { /* 40, 41, 42 */
                    r = fmax(vg[AT(j - 1, k)], vg[AT(j - 1, k + 1)]);
                    s = vf[AT(j - 1, k)];
                    t = br;
                } else {
                    r = fmax(vg[AT(j, k)], vg[AT(j, k + 1)]);
                    s = vf[AT(j, k)];
                    t = ar;
                }
                double h = vh[AT(j, k)]; /* 43 */
                vs[AT(j, k)] = sqrt(h * h + r * r) * t / s;
            }
#undef AT
}
RUNNER(k15)
static double k15_sum(struct k15 *d) { return sum(d->vy, 7 * d->n) + sum(d->vs, 7 * d->n); }

/* Kernel 16, Monte Carlo search loop. The LFK's data is not reproduced:
 * as in k09_16.rs, plane m switches at k = n - (m-1)*(n/8) and the walk
 * stops on the switch back from the last of 4 planes. ZONE, PLAN and D
 * are 1-based. */
#define K16_PLANES 4
#define K16_EXTRA 16
struct k16 { size_t n, passes; double r, s, t, *plan, *d; int32_t *zone; uint64_t k2, k3; int64_t m; };
static size_t k16_switch_at(size_t n, size_t m) { return n - (m - 1) * (n / 8); }
static uint64_t k16_per_pass(size_t n) {
    uint64_t c = 0;
    for (size_t m = 1; m <= K16_PLANES; m++)
        c += k16_switch_at(n, m);
    return c;
}
static void k16_new(struct k16 *d, size_t n) {
    double r = 0.5, s = 0.35, t = 0.65;
    double *plan = fill(n + K16_EXTRA + 1, 1601, 0.0, 1.0);
    double *dd = fill(n + K16_EXTRA + 1, 1602, 0.0, 1.0);
    size_t ii = n / 3, lb = 2 * (n / 3);
    int32_t *zone = alloc((2 * n * K16_PLANES + 2) * sizeof(int32_t));
    zone[1] = K16_PLANES;
    for (size_t m = 1; m <= K16_PLANES; m++) {
        size_t j2 = 2 * n * (m - 1) + 1;
        for (size_t k = 1; k <= n; k++) {
            size_t j4 = j2 + 2 * k;
            uint64_t h = bits(1603, j4);
            size_t j5 = h % 8 == 0 ? n + 1 + (size_t)(h >> 3) % K16_EXTRA
                                   : 1 + (size_t)(h >> 3) % (n - 1);
            double diff;
            if (j5 > n)
                diff = dd[j5] - (dd[j5 - 1] * sq(t - dd[j5 - 2]) + sq(s - dd[j5 - 3]) +
                                 sq(r - dd[j5 - 4]));
            else if (j5 + lb < n)
                diff = plan[j5] - t;
            else if (j5 + ii < n)
                diff = plan[j5] - s;
            else
                diff = plan[j5] - r;
            if (diff == 0.0) {
                fprintf(stderr, "lfk: kernel 16 data: a tie at zone %zu\n", j4);
                exit(1);
            }
            int sw = k == k16_switch_at(n, m);
            int32_t on = diff < 0.0 ? -1 : 1;
            int32_t magnitude = 1 + (int32_t)((h >> 40) % 7);
            zone[j4 - 1] = (sw ? -on : on) * magnitude;
            zone[j4] = (int32_t)j5;
        }
    }
    d->r = r, d->s = s, d->t = t, d->plan = plan, d->d = dd, d->zone = zone;
    d->k2 = 0, d->k3 = 0, d->m = 0;
}
LOOPS k16_loops(struct k16 *dat, int full) {
    BLOCKS;
    size_t n = dat->n;
    double r = dat->r, s = dat->s, t = dat->t, *plan = dat->plan, *d = dat->d;
    int32_t *zone = dat->zone;
    int64_t ni = (int64_t)n, ii = ni / 3, lb = ii + ii, m = 1;
    uint64_t k2 = dat->k2, k3 = dat->k3;
    for (size_t pass = 0; pass < dat->passes; pass++) {
        m = 1;
        int64_t i1 = m;
        size_t j2 = 1, k = 1; /* 410 */
        while (k <= n) {
            BODY("lfk16 body");
            size_t kk = OPAQUE(k);
            k2++;
            size_t j4 = j2 + kk + kk;
            int64_t j5 = zone[j4];
            double diff;
            if (j5 < ni) { /* 420, 415; 425, 430, 435 */
                double threshold = j5 - ni + lb < 0 ? t : j5 - ni + ii < 0 ? s : r;
                diff = plan[j5] - threshold;
            } else if (j5 == ni) {
                break; /* 475 */
            } else { /* 450 */
                k3++;
                size_t j = (size_t)j5;
                diff = d[j] - (d[j - 1] * sq(t - d[j - 2]) + sq(s - d[j - 3]) + sq(r - d[j - 4]));
            }
            int32_t flag = zone[j4 - 1];
            int next_plane;
            if (diff < 0.0) { /* 445 */
                if (flag < 0)
                    next_plane = 0;
                else if (flag == 0)
                    break; /* 485 */
                else
                    next_plane = 1;
            } else if (diff > 0.0) { /* 440 */
                if (flag < 0)
                    next_plane = 1;
                else if (flag == 0)
                    break; /* 485 */
                else
                    next_plane = 0;
            } else {
                break; /* 480 */
            }
            if (next_plane) { /* 455, 460, 465 */
                m++;
                if (m > zone[1])
                    m = 1;
                if (i1 == m)
                    break; /* 480 */
                j2 = (n + n) * (size_t)(m - 1) + 1; /* 410 */
                k = 1;
            } else {
                k++; /* 470 */
            }
        }
    }
    dat->k2 = k2, dat->k3 = k3, dat->m = m;
}
RUNNER(k16)
static double k16_sum(struct k16 *d) { return (double)d->k2 + (double)d->k3 + (double)d->m; }

/* === kernels 17 to 24 === */

/* Kernel 17, implicit conditional computation, k from n down to 2;
 * arrays 1-based. */
struct k17 { size_t n, passes; double *vsp, *vstp, *vxne, *vxnd, *ve3, *vlr, *vlin; };
static void k17_new(struct k17 *d, size_t n) {
    size_t len = n + 1;
    d->vsp = fill(len, 1701, 0.1, 0.9), d->vstp = fill(len, 1702, 0.1, 1.0);
    d->vxne = fill(len, 1703, 0.0, 1.0), d->vxnd = zeros(len), d->ve3 = zeros(len);
    d->vlr = fill(len, 1704, 0.1, 0.9), d->vlin = fill(len, 1705, 0.1, 1.0);
}
LOOPS k17_loops(struct k17 *d, int full) {
    BLOCKS;
    const double dw = 5.0 / 3.0, fw = 1.0 / 3.0, tw = 1.03 / 3.07;
    double *vsp = d->vsp, *vstp = d->vstp, *vlr = d->vlr, *vlin = d->vlin;
    double *vxne = d->vxne, *vxnd = d->vxnd, *ve3 = d->ve3;
    for (size_t p = 0; p < d->passes; p++) {
        size_t k = d->n;
        const size_t j = 1;
        double scale = dw, xnm = fw, e6 = tw;
        for (;;) {
            BODY("lfk17 body");
            size_t kk = OPAQUE(k);
            double e3 = xnm * vlr[kk] + vlin[kk]; /* 61 */
            double xnei = vxne[kk];
            vxnd[kk] = e6;
            double xnc = scale * e3;
            if (xnm > xnc || xnei > xnc) { /* 60: step model */
                e6 = xnm * vsp[kk] + vstp[kk];
                vxne[kk] = e6;
                xnm = e6;
                ve3[kk] = e6;
            } else { /* linear model */
                ve3[kk] = e3;
                e6 = e3 + e3 - xnm;
                vxne[kk] = e3 + e3 - xnei;
                xnm = e6;
            }
            k--;
            if (k == j)
                break; /* 62 */
        }
    }
}
RUNNER(k17)
static double k17_sum(struct k17 *d) {
    return sum(d->vxne, d->n + 1) + sum(d->vxnd, d->n + 1) + sum(d->ve3, d->n + 1);
}

/* Kernel 18, 2-D explicit hydrodynamics fragment; ZA(j,k) at
 * (k-1)*(jn+1) + j-1, 7 columns. */
struct k18 { size_t n, passes; double *za, *zb, *zp, *zq, *zr, *zm, *zu, *zv, *zz; };
static void k18_new(struct k18 *d, size_t n) {
    size_t len = 7 * (n + 1);
    d->za = fill(len, 1801, 0.0, 1.0e-4), d->zb = fill(len, 1802, 0.0, 1.0e-4);
    d->zp = fill(len, 1803, 0.0, 1.0e-4), d->zq = fill(len, 1804, 0.0, 1.0e-4);
    d->zr = fill(len, 1805, 0.0, 1.0), d->zm = fill(len, 1806, 1.0, 2.0);
    d->zu = fill(len, 1807, -0.01, 0.01), d->zv = fill(len, 1808, -0.01, 0.01);
    d->zz = fill(len, 1809, 0.0, 1.0);
}
LOOPS k18_loops(struct k18 *d, int full) {
    BLOCKS;
    const double t = 0.0037, s = 0.0041;
    const size_t kn = 6, jn = d->n, w = jn + 1;
    double *za = d->za, *zb = d->zb, *zu = d->zu, *zv = d->zv, *zr = d->zr, *zz = d->zz;
    double *zp = d->zp, *zq = d->zq, *zm = d->zm;
#define AT(k, j) ((k) * w + (j))
    for (size_t p = 0; p < d->passes; p++) {
        for (size_t k = 1; k < kn; k++)
            for (size_t j0 = 1; j0 < jn; j0++) {
                BODY("lfk18 body 1");
                size_t j = OPAQUE(j0);
                za[AT(k, j)] = (zp[AT(k + 1, j - 1)] + zq[AT(k + 1, j - 1)] - zp[AT(k, j - 1)] -
                                zq[AT(k, j - 1)]) *
                               (zr[AT(k, j)] + zr[AT(k, j - 1)]) /
                               (zm[AT(k, j - 1)] + zm[AT(k + 1, j - 1)]);
                zb[AT(k, j)] = (zp[AT(k, j - 1)] + zq[AT(k, j - 1)] - zp[AT(k, j)] - zq[AT(k, j)]) *
                               (zr[AT(k, j)] + zr[AT(k - 1, j)]) /
                               (zm[AT(k, j)] + zm[AT(k, j - 1)]);
            }
        for (size_t k = 1; k < kn; k++)
            for (size_t j0 = 1; j0 < jn; j0++) {
                BODY("lfk18 body 2");
                size_t j = OPAQUE(j0);
                zu[AT(k, j)] += s * (za[AT(k, j)] * (zz[AT(k, j)] - zz[AT(k, j + 1)]) -
                                     za[AT(k, j - 1)] * (zz[AT(k, j)] - zz[AT(k, j - 1)]) -
                                     zb[AT(k, j)] * (zz[AT(k, j)] - zz[AT(k - 1, j)]) +
                                     zb[AT(k + 1, j)] * (zz[AT(k, j)] - zz[AT(k + 1, j)]));
                zv[AT(k, j)] += s * (za[AT(k, j)] * (zr[AT(k, j)] - zr[AT(k, j + 1)]) -
                                     za[AT(k, j - 1)] * (zr[AT(k, j)] - zr[AT(k, j - 1)]) -
                                     zb[AT(k, j)] * (zr[AT(k, j)] - zr[AT(k - 1, j)]) +
                                     zb[AT(k + 1, j)] * (zr[AT(k, j)] - zr[AT(k + 1, j)]));
            }
        for (size_t k = 1; k < kn; k++)
            for (size_t j0 = 1; j0 < jn; j0++) {
                BODY("lfk18 body 3");
                size_t at = k * w + OPAQUE(j0);
                zr[at] += t * zu[at];
                zz[at] += t * zv[at];
            }
    }
#undef AT
}
RUNNER(k18)
static double k18_sum(struct k18 *d) {
    size_t len = 7 * (d->n + 1);
    return sum(d->za, len) + sum(d->zb, len) + sum(d->zr, len) + sum(d->zz, len);
}

/* Kernel 19, general linear recurrence: B5(k) = SA(k) + STB5*SB(k),
 * STB5 = B5(k) - STB5, forwards then backwards. */
struct k19 { size_t n, passes; double stb5, *b5, *sa, *sb; };
static void k19_new(struct k19 *d, size_t n) {
    d->stb5 = 0.1, d->b5 = zeros(n), d->sa = fill(n, 1901, 0.0, 1.0);
    d->sb = fill(n, 1902, 0.5, 1.5);
}
LOOPS k19_loops(struct k19 *d, int full) {
    BLOCKS;
    size_t n = d->n;
    double *b5 = d->b5, *sa = d->sa, *sb = d->sb, stb5 = d->stb5;
    for (size_t p = 0; p < d->passes; p++) {
        for (size_t k = 0; k < n; k++) {
            BODY("lfk19 body 1");
            size_t kk = OPAQUE(k);
            b5[kk] = sa[kk] + stb5 * sb[kk];
            stb5 = b5[kk] - stb5;
        }
        for (size_t i = 1; i <= n; i++) {
            BODY("lfk19 body 2");
            size_t kk = n - OPAQUE(i);
            b5[kk] = sa[kk] + stb5 * sb[kk];
            stb5 = b5[kk] - stb5;
        }
    }
    d->stb5 = stb5;
}
RUNNER(k19)
static double k19_sum(struct k19 *d) { return sum(d->b5, d->n) + d->stb5; }

/* Kernel 20, discrete ordinates transport (a recurrence through XX). */
struct k20 { size_t n, passes; double *x, *y, *z, *g, *u, *v, *w, *vx, *xx; };
static void k20_new(struct k20 *d, size_t n) {
    d->x = zeros(n), d->y = fill(n, 2001, 0.0, 1.0), d->z = fill(n, 2002, 0.0, 1.0);
    d->g = fill(n, 2003, 0.0, 1.0), d->u = fill(n, 2004, 0.0, 1.0);
    d->v = fill(n, 2005, 0.1, 1.0), d->w = fill(n, 2006, 0.1, 0.5);
    d->vx = fill(n, 2007, 1.0, 2.0), d->xx = fill(n + 1, 2008, 0.5, 1.0);
}
LOOPS k20_loops(struct k20 *d, int full) {
    BLOCKS;
    const double s = 0.1, t = 0.9, dk = 1.0;
    double *x = d->x, *y = d->y, *z = d->z, *g = d->g, *u = d->u, *v = d->v, *w = d->w;
    double *vx = d->vx, *xx = d->xx;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k0 = 0; k0 < d->n; k0++) {
            BODY("lfk20 body");
            size_t k = OPAQUE(k0);
            double di = y[k] - g[k] / (xx[k] + dk);
            double dn = 0.2;
            if (di != 0.0)
                dn = fmax(s, fmin(z[k] / di, t));
            x[k] = ((w[k] + v[k] * dn) * xx[k] + u[k]) / (vx[k] + v[k] * dn);
            xx[k + 1] = (x[k] - xx[k]) * dn + xx[k];
        }
}
RUNNER(k20)
static double k20_sum(struct k20 *d) { return sum(d->x, d->n) + sum(d->xx, d->n + 1); }

/* Kernel 21, matrix*matrix product, j innermost; PX(i,j) at (j-1)*25 + i-1. */
struct k21 { size_t n, passes; double *px, *cx, *vy; };
static void k21_new(struct k21 *d, size_t n) {
    d->px = fill(25 * n, 2101, 0.0, 1.0), d->cx = fill(25 * n, 2102, -1.0, 1.0);
    d->vy = fill(25 * 25, 2103, -0.1, 0.1);
}
LOOPS k21_loops(struct k21 *d, int full) {
    BLOCKS;
    double *px = d->px, *cx = d->cx, *vy = d->vy;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t k = 0; k < 25; k++)
            for (size_t i = 0; i < 25; i++)
                for (size_t j0 = 0; j0 < d->n; j0++) {
                    BODY("lfk21 body");
                    size_t j = OPAQUE(j0);
                    px[j * 25 + i] += vy[k * 25 + i] * cx[j * 25 + k];
                }
}
RUNNER(k21)
static double k21_sum(struct k21 *d) { return sum(d->px, 25 * d->n); }

/* Kernel 22, Planckian distribution: Y(k) = U(k)/V(k),
 * W(k) = X(k)/(EXP(Y(k)) - 1). */
struct k22 { size_t n, passes; double *u, *v, *w, *x, *y; };
static void k22_new(struct k22 *d, size_t n) {
    d->u = fill(n, 2201, 0.1, 2.0), d->v = fill(n, 2202, 0.1, 1.0), d->w = zeros(n);
    d->x = fill(n, 2203, 0.0, 1.0), d->y = zeros(n);
}
LOOPS k22_loops(struct k22 *d, int full) {
    BLOCKS;
    size_t n = d->n;
    const double expmax = 20.0;
    double *u = d->u, *v = d->v, *w = d->w, *x = d->x, *y = d->y;
    for (size_t p = 0; p < d->passes; p++) {
        u[n - 1] = 0.99 * expmax * v[n - 1];
        for (size_t k0 = 0; k0 < n; k0++) {
            BODY("lfk22 body");
            size_t k = OPAQUE(k0);
            y[k] = u[k] / v[k];
            w[k] = x[k] / (exp(y[k]) - 1.0);
        }
    }
}
RUNNER(k22)
static double k22_sum(struct k22 *d) { return sum(d->w, d->n) + sum(d->y, d->n); }

/* Kernel 23, 2-D implicit hydrodynamics fragment; ZA(k,j) at
 * (j-1)*(n+1) + k-1, 7 columns. */
struct k23 { size_t n, passes; double *za, *zb, *zr, *zu, *zv, *zz; };
static void k23_new(struct k23 *d, size_t n) {
    size_t len = 7 * (n + 1);
    d->za = fill(len, 2301, 0.0, 1.0), d->zb = fill(len, 2302, 0.0, 0.24);
    d->zr = fill(len, 2303, 0.0, 0.24), d->zu = fill(len, 2304, 0.0, 0.24);
    d->zv = fill(len, 2305, 0.0, 0.24), d->zz = fill(len, 2306, 0.0, 1.0);
}
LOOPS k23_loops(struct k23 *d, int full) {
    BLOCKS;
    const size_t n = d->n, w = n + 1;
    const double fw = 0.175;
    double *za = d->za, *zb = d->zb, *zr = d->zr, *zu = d->zu, *zv = d->zv, *zz = d->zz;
    for (size_t p = 0; p < d->passes; p++)
        for (size_t j = 1; j < 6; j++)
            for (size_t k = 1; k < n; k++) {
                BODY("lfk23 body");
                size_t at = j * w + OPAQUE(k);
                double qa = za[at + w] * zr[at] + za[at - w] * zb[at] + za[at + 1] * zu[at] +
                            za[at - 1] * zv[at] + zz[at];
                za[at] += fw * (qa - za[at]);
            }
}
RUNNER(k23)
static double k23_sum(struct k23 *d) { return sum(d->za, 7 * (d->n + 1)); }

/* Kernel 24, location of the first minimum: X(n/2) = -1.0E10, then m is
 * the first k with the smallest X(k). */
struct k24 { size_t n, passes; double *x; size_t m; };
static void k24_new(struct k24 *d, size_t n) { d->x = fill(n, 2401, -1.0, 1.0), d->m = 0; }
LOOPS k24_loops(struct k24 *d, int full) {
    BLOCKS;
    size_t n = d->n;
    double *x = d->x;
    for (size_t p = 0; p < d->passes; p++) {
        x[n / 2 - 1] = -1.0e10;
        size_t m = 0;
        for (size_t k0 = 1; k0 < n; k0++) {
            BODY("lfk24 body");
            size_t k = OPAQUE(k0);
            if (x[k] < x[m])
                m = k;
        }
        d->m = m;
    }
}
RUNNER(k24)
static double k24_sum(struct k24 *d) { return (double)(d->m + 1); }

/* === the table === */

enum level { NONE, RAW, FULL };
static const char *level_names[] = {"none", "raw", "full"};

struct result { double seconds, checksum; };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Fills kernel k's data, then times its passes at `level`, as exec() in
 * livermore/mod.rs: the kernel's region (raw, full) is inside the timing. */
#define EXEC(k)                                                          \
    static struct result k##_exec(size_t n, size_t passes, enum level level, px_site *site) { \
        struct k d;                                                      \
        memset(&d, 0, sizeof d);                                         \
        d.n = n, d.passes = passes;                                      \
        k##_new(&d, n);                                                  \
        double t0 = now();                                               \
        if (level == NONE) {                                             \
            k##_run(&d, OPAQUE(0));                                      \
        } else {                                                         \
            int in = px_enter(site);                                     \
            k##_run(&d, OPAQUE(level == FULL));                          \
            px_leave(in);                                                \
        }                                                                \
        struct result r = {now() - t0, k##_sum(&d)};                     \
        free_all();                                                      \
        return r;                                                        \
    }
EXEC(k01) EXEC(k02) EXEC(k03) EXEC(k04) EXEC(k05) EXEC(k06) EXEC(k07) EXEC(k08)
EXEC(k09) EXEC(k10) EXEC(k11) EXEC(k12) EXEC(k13) EXEC(k14) EXEC(k15) EXEC(k16)
EXEC(k17) EXEC(k18) EXEC(k19) EXEC(k20) EXEC(k21) EXEC(k22) EXEC(k23) EXEC(k24)

static uint64_t per_n(size_t n) { return n; }
static uint64_t per_n1(size_t n) { return n - 1; }
static uint64_t per_k06(size_t n) { return n * (n - 1) / 2; }
static uint64_t per_k08(size_t n) { return 2 * (n - 1); }
static uint64_t per_k14(size_t n) { return 3 * n; }
static uint64_t per_k15(size_t n) { return 6 * (n - 1); }
static uint64_t per_k18(size_t n) { return 15 * (n - 1); }
static uint64_t per_k19(size_t n) { return 2 * n; }
static uint64_t per_k21(size_t n) { return 625 * n; }
static uint64_t per_k23(size_t n) { return 5 * (n - 1); }

struct kernel {
    size_t test_n, test_passes, bench_n, bench_passes;
    uint64_t (*per_pass)(size_t n);
    struct result (*exec)(size_t, size_t, enum level, px_site *);
    px_site site;
};

/* Sizes as in livermore/mod.rs: (n, passes) for tests and benchmarks. */
static struct kernel kernels[24] = {
    {101, 2, 1001, 3400, per_n, k01_exec, {"lfk01", PX_LOOP, 0}},
    {101, 2, 1001, 3700, k02_per_pass, k02_exec, {"lfk02", PX_LOOP, 0}},
    {101, 2, 1001, 6900, per_n, k03_exec, {"lfk03", PX_LOOP, 0}},
    {101, 2, 1001, 11000, k04_per_pass, k04_exec, {"lfk04", PX_LOOP, 0}},
    {101, 2, 1001, 1800, per_n1, k05_exec, {"lfk05", PX_LOOP, 0}},
    {31, 2, 101, 500, per_k06, k06_exec, {"lfk06", PX_LOOP, 0}},
    {101, 2, 1001, 2500, per_n, k07_exec, {"lfk07", PX_LOOP, 0}},
    {51, 2, 101, 5500, per_k08, k08_exec, {"lfk08", PX_LOOP, 0}},
    {51, 2, 101, 22000, per_n, k09_exec, {"lfk09", PX_LOOP, 0}},
    {51, 2, 101, 21000, per_n, k10_exec, {"lfk10", PX_LOOP, 0}},
    {101, 2, 1001, 2700, per_n1, k11_exec, {"lfk11", PX_LOOP, 0}},
    {101, 2, 1001, 9600, per_n, k12_exec, {"lfk12", PX_LOOP, 0}},
    {64, 2, 64, 12000, per_n, k13_exec, {"lfk13", PX_LOOP, 0}},
    {101, 2, 1001, 750, per_k14, k14_exec, {"lfk14", PX_LOOP, 0}},
    {21, 2, 101, 2000, per_k15, k15_exec, {"lfk15", PX_LOOP, 0}},
    {75, 2, 75, 10600, k16_per_pass, k16_exec, {"lfk16", PX_LOOP, 0}},
    {101, 2, 101, 20000, per_n1, k17_exec, {"lfk17", PX_LOOP, 0}},
    {21, 2, 100, 1300, per_k18, k18_exec, {"lfk18", PX_LOOP, 0}},
    {101, 2, 101, 10500, per_k19, k19_exec, {"lfk19", PX_LOOP, 0}},
    {101, 2, 1000, 210, per_n, k20_exec, {"lfk20", PX_LOOP, 0}},
    {5, 2, 101, 70, per_k21, k21_exec, {"lfk21", PX_LOOP, 0}},
    {101, 2, 101, 7000, per_n, k22_exec, {"lfk22", PX_LOOP, 0}},
    {21, 2, 100, 1700, per_k23, k23_exec, {"lfk23", PX_LOOP, 0}},
    {101, 2, 1001, 5300, per_n1, k24_exec, {"lfk24", PX_LOOP, 0}},
};

/* === the runner === */

static void usage(void) {
    fprintf(stderr, "usage: lfk [--kernels 1,3,5-7|all] [--level none,raw,full|all] "
                    "[--reps N] [--warmup N] [--scale test|bench] [--passes N] [--block N]\n");
    exit(2);
}

static long count(const char *flag, const char *v, long min) {
    char *end;
    long c = strtol(v, &end, 10);
    if (*v == 0 || *end != 0 || c < min) {
        fprintf(stderr, "lfk: %s %s: expected a number >= %ld\n", flag, v, min);
        exit(2);
    }
    return c;
}

/* Kernel numbers and ranges ("1,3,5-7" or "all") into `chosen` (in order,
 * without repeats); returns how many. */
static int parse_kernels(const char *s, int chosen[24]) {
    if (strcmp(s, "all") == 0) {
        for (int i = 0; i < 24; i++)
            chosen[i] = i + 1;
        return 24;
    }
    int len = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        int lo, hi, used = 0;
        if (sscanf(part, "%d-%d%n", &lo, &hi, &used) == 2 && part[used] == 0) {
        } else if (sscanf(part, "%d%n", &lo, &used) == 1 && part[used] == 0) {
            hi = lo;
        } else {
            lo = 0, hi = -1;
        }
        if (lo < 1 || hi > 24 || lo > hi) {
            fprintf(stderr, "lfk: --kernels: %s is not a kernel number (1-24) or range\n", part);
            exit(2);
        }
        for (int k = lo; k <= hi; k++) {
            int seen = 0;
            for (int i = 0; i < len; i++)
                seen |= chosen[i] == k;
            if (!seen)
                chosen[len++] = k;
        }
    }
    free(copy);
    return len;
}

static int parse_levels(const char *s, enum level chosen[3]) {
    if (strcmp(s, "all") == 0) {
        for (int i = 0; i < 3; i++)
            chosen[i] = (enum level)i;
        return 3;
    }
    int len = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int l = 0; l < 3; l++)
            if (strcmp(part, level_names[l]) == 0)
                found = l;
        if (found < 0) {
            fprintf(stderr, "lfk: --level: %s is not none, raw or full\n", part);
            exit(2);
        }
        int seen = 0;
        for (int i = 0; i < len; i++)
            seen |= chosen[i] == (enum level)found;
        if (!seen)
            chosen[len++] = (enum level)found;
    }
    free(copy);
    return len;
}

int main(int argc, char **argv) {
    int chosen[24], nk = parse_kernels("all", chosen);
    enum level levels[3];
    int nl = parse_levels("all", levels);
    long reps = 1, warmup = 1, passes_flag = 0;
    int bench = 1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0 || i + 1 == argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(flag, "--kernels") == 0)
            nk = parse_kernels(v, chosen);
        else if (strcmp(flag, "--level") == 0 || strcmp(flag, "--levels") == 0)
            nl = parse_levels(v, levels);
        else if (strcmp(flag, "--reps") == 0)
            reps = count(flag, v, 1);
        else if (strcmp(flag, "--warmup") == 0)
            warmup = count(flag, v, 0);
        else if (strcmp(flag, "--block") == 0)
            block_size = (size_t)count(flag, v, 1);
        else if (strcmp(flag, "--passes") == 0)
            passes_flag = count(flag, v, 1);
        else if (strcmp(flag, "--scale") == 0 && (strcmp(v, "test") == 0 || strcmp(v, "bench") == 0))
            bench = strcmp(v, "bench") == 0;
        else
            usage();
    }

    /* Start measurement (and its calibration) before the first kernel. */
    px_start();

    int failed = 0;
    for (int c = 0; c < nk; c++) {
        struct kernel *k = &kernels[chosen[c] - 1];
        size_t n = bench ? k->bench_n : k->test_n;
        size_t passes = passes_flag ? (size_t)passes_flag : bench ? k->bench_passes : k->test_passes;
        uint64_t iterations = k->per_pass(n) * passes;
        for (long w = 0; w < warmup; w++)
            k->exec(n, passes, NONE, &k->site);
        double reference = 0;
        for (long rep = 0; rep < reps; rep++)
            for (int l = 0; l < nl; l++) {
                px_calibrate(); /* the probes' cost as the machine is now */
                struct result r = k->exec(n, passes, levels[l], &k->site);
                uint64_t b;
                memcpy(&b, &r.checksum, sizeof b);
                if (rep == 0 && l == 0)
                    reference = r.checksum;
                if (memcmp(&reference, &r.checksum, sizeof b) != 0) {
                    fprintf(stderr, "lfk: kernel %d: checksum %.17g differs from %.17g\n",
                            chosen[c], r.checksum, reference);
                    failed = 1;
                }
                printf("{\"kernel\":\"%s\",\"level\":\"%s\",\"rep\":%ld,\"n\":%zu,"
                       "\"passes\":%zu,\"iterations\":%llu,\"seconds\":%.9g,"
                       "\"checksum\":%.17g,\"checksum_bits\":\"%016llx\"}\n",
                       k->site.name, level_names[levels[l]], rep, n, passes,
                       (unsigned long long)iterations, r.seconds, r.checksum,
                       (unsigned long long)b);
                fflush(stdout);
            }
    }
    return failed;
}
