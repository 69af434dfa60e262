/* OpenSHMEM through the pshmem profiling interface (Open MPI's OSHMEM,
 * OpenSHMEM 1.4), compiled against the installed shmem.h (build.rs); the
 * symbols taken from the library are weak, like MPI's.
 *
 * One-sided puts and gets (blocking, non-blocking and single-element) are
 * put/get events with the target PE, the bytes and the symmetric address
 * (symmetric: the same on every PE, see sym()); atomics are atomic events; shmem_quiet completes
 * every outstanding operation (rma-complete on all targets); barriers,
 * broadcasts, collects, all-to-alls and reductions are collectives on
 * their active set (id 0 for all PEs, else an id of the set whose members
 * are defined as a group); wait_until is a wait-on-value ending with
 * value-reached on the address; set/clear/test_lock are lock
 * request/acquired/release on the lock's address. */
#define _GNU_SOURCE
#include <link.h>
#include <shmem.h>
#include <pshmem.h>
#include <stdio.h>
#include <stdlib.h>

#include "pxl.h"


#define EV(code, a, b, c, d, e)                                                       \
    do {                                                                              \
        if (TR)                                                                       \
            parallax_pl_event(code, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c),      \
                              (uint64_t)(d), (uint64_t)(e));                          \
    } while (0)

/* === symmetric addresses ===
 * The symmetric heap lies at the same address on every PE, but static
 * symmetric objects move with the executable's load address (position-
 * independent executables): those are recorded as 2^62 + their offset in
 * the executable, which all PEs share. */

static uintptr_t exe_lo, exe_hi;

static int first_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    uintptr_t hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > hi)
            hi = ph->p_vaddr + ph->p_memsz;
    }
    exe_lo = info->dlpi_addr;
    exe_hi = info->dlpi_addr + hi;
    return 1; /* the first module is the executable */
}

static uint64_t sym(const volatile void *p) {
    uintptr_t a = (uintptr_t)p;
    if (!exe_hi)
        dl_iterate_phdr(first_module, NULL);
    if (exe_lo && a >= exe_lo && a < exe_hi)
        return (1ull << 62) | (a - exe_lo);
    return a;
}

/* === active sets ===
 * (PE_start, logPE_stride, PE_size): all PEs is id 0; another set is
 * 2^61 + start * 2^40 + log stride * 2^32 + size, its members defined once. */

static int n_pes;
#define SETS 256
static uint64_t defined_sets[SETS];
static int n_defined, sets_lock;

static uint64_t active_set(int start, int logstride, int size) {
    if (!n_pes)
        n_pes = pshmem_n_pes();
    if (start == 0 && logstride == 0 && size == n_pes)
        return 0;
    uint64_t id = (1ull << 61) | ((uint64_t)(uint32_t)start << 40) |
                  ((uint64_t)(logstride & 0xff) << 32) | (uint32_t)size;
    while (__atomic_exchange_n(&sets_lock, 1, __ATOMIC_ACQUIRE))
        ;
    int known = 0;
    for (int i = 0; i < n_defined; i++)
        known |= defined_sets[i] == id;
    if (!known && n_defined < SETS)
        defined_sets[n_defined++] = id;
    __atomic_store_n(&sets_lock, 0, __ATOMIC_RELEASE);
    if (!known && size > 0 && size < (1 << 24)) {
        uint32_t *m = malloc(sizeof(uint32_t) * (size_t)size);
        if (m) {
            for (int i = 0; i < size; i++)
                m[i] = (uint32_t)(start + (i << logstride));
            parallax_pl_group(id, m, (size_t)size);
            free(m);
        }
    }
    return id;
}

#define RMA_TYPES(X)                                                                     \
    X(char, char) X(short, short) X(int, int) X(long, long) X(float, float)               \
    X(double, double) X(longlong, long long) X(schar, signed char) X(uchar, unsigned char) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)              \
    X(ulonglong, unsigned long long) X(longdouble, long double) X(int8, int8_t)          \
    X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)              \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)          \
    X(ptrdiff, ptrdiff_t)

/* === set-up === */

static void after_init(void) {
    char text[32];
    n_pes = pshmem_n_pes();
    snprintf(text, sizeof text, "%d", n_pes);
    parallax_pl_property("shmem_n_pes", text);
    snprintf(text, sizeof text, "%d", pshmem_my_pe());
    parallax_pl_property("shmem_my_pe", text);
}

/* As check_mpi in mpi.c: the SHMEM library must be there at load time. */
#pragma weak pshmem_init
#pragma weak pshmem_n_pes
static void check_shmem(void) {
    if (!pshmem_init || !pshmem_n_pes) {
        fprintf(stderr, "parallax: OpenSHMEM was loaded after the interposition library "
                        "(with dlopen?): its wrappers cannot reach it.\n");
        abort();
    }
}

void shmem_init(void) {
    check_shmem();
    ENTER("shmem_init", PXL_SETUP);
    pshmem_init();
    if (px_outer)
        after_init();
    LEAVE();
}

int shmem_init_thread(int requested, int *provided) {
    check_shmem();
    ENTER("shmem_init_thread", PXL_SETUP);
    int r = pshmem_init_thread(requested, provided);
    if (px_outer && r == 0)
        after_init();
    LEAVE();
    return r;
}

void start_pes(int npes) {
    check_shmem();
    ENTER("start_pes", PXL_SETUP);
    pstart_pes(npes);
    if (px_outer)
        after_init();
    LEAVE();
}

void shmem_finalize(void) {
    if (!pxl_busy) {
        pxl_busy = 1;
        PXL_REGION(id, "shmem_finalize", PXL_SETUP);
        if (parallax_pl_enter(id))
            parallax_pl_leave();
        /* Everything recorded is written first: OSHMEM's finalize may end
         * the process (docs/interposition.md). What follows is not
         * measured. */
        parallax_pl_finish();
        pxl_busy = 0;
    }
    pshmem_finalize();
}

/* === symmetric memory (collective) === */

#define ALLOC_END()                                                  \
    do {                                                             \
        EV(PXL_EV_COLL_END, PXL_OP_OTHER, 0, PXL_NO_ROOT, 0, 0);     \
        LEAVE();                                                     \
    } while (0)

void *shmem_malloc(size_t size) {
    ENTER("shmem_malloc", PXL_COLLECTIVE);
    EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    void *p = pshmem_malloc(size);
    ALLOC_END();
    return p;
}

void *shmem_align(size_t align, size_t size) {
    ENTER("shmem_align", PXL_COLLECTIVE);
    EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    void *p = pshmem_align(align, size);
    ALLOC_END();
    return p;
}

void *shmem_realloc(void *ptr, size_t size) {
    ENTER("shmem_realloc", PXL_COLLECTIVE);
    EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    void *p = pshmem_realloc(ptr, size);
    ALLOC_END();
    return p;
}

void shmem_free(void *ptr) {
    ENTER("shmem_free", PXL_COLLECTIVE);
    EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    pshmem_free(ptr);
    ALLOC_END();
}

/* === puts and gets === */

#define PUT(N, T)                                                               \
    void shmem_##N##_put(T *target, const T *source, size_t len, int pe) {     \
        ENTER("shmem_" #N "_put", PXL_PUT);                                     \
        EV(PXL_EV_PUT, pe, len * sizeof(T), sym(target), 0, 0);          \
        pshmem_##N##_put(target, source, len, pe);                              \
        LEAVE();                                                                \
    }                                                                           \
    void shmem_##N##_put_nbi(T *target, const T *source, size_t len, int pe) { \
        ENTER("shmem_" #N "_put_nbi", PXL_PUT);                                 \
        EV(PXL_EV_PUT, pe, len * sizeof(T), sym(target), 0, 0);          \
        pshmem_##N##_put_nbi(target, source, len, pe);                          \
        LEAVE();                                                                \
    }                                                                           \
    void shmem_##N##_p(T *addr, T value, int pe) {                              \
        ENTER("shmem_" #N "_p", PXL_PUT);                                       \
        EV(PXL_EV_PUT, pe, sizeof(T), sym(addr), 0, 0);                   \
        pshmem_##N##_p(addr, value, pe);                                        \
        LEAVE();                                                                \
    }                                                                           \
    void shmem_##N##_get(T *target, const T *source, size_t len, int pe) {     \
        ENTER("shmem_" #N "_get", PXL_GET);                                     \
        pshmem_##N##_get(target, source, len, pe);                              \
        EV(PXL_EV_GET, pe, len * sizeof(T), sym(source), 0, 0);          \
        LEAVE();                                                                \
    }                                                                           \
    void shmem_##N##_get_nbi(T *target, const T *source, size_t len, int pe) { \
        ENTER("shmem_" #N "_get_nbi", PXL_GET);                                 \
        EV(PXL_EV_GET, pe, len * sizeof(T), sym(source), 0, 0);          \
        pshmem_##N##_get_nbi(target, source, len, pe);                          \
        LEAVE();                                                                \
    }                                                                           \
    T shmem_##N##_g(const T *addr, int pe) {                                    \
        ENTER("shmem_" #N "_g", PXL_GET);                                       \
        T v = pshmem_##N##_g(addr, pe);                                         \
        EV(PXL_EV_GET, pe, sizeof(T), sym(addr), 0, 0);                   \
        LEAVE();                                                                \
        return v;                                                               \
    }

RMA_TYPES(PUT)

#define SIZED(NAME, BYTES)                                                         \
    void shmem_put##NAME(void *target, const void *source, size_t len, int pe) {  \
        ENTER("shmem_put" #NAME, PXL_PUT);                                         \
        EV(PXL_EV_PUT, pe, len * (BYTES), sym(target), 0, 0);               \
        pshmem_put##NAME(target, source, len, pe);                                 \
        LEAVE();                                                                   \
    }                                                                              \
    void shmem_put##NAME##_nbi(void *target, const void *source, size_t len, int pe) { \
        ENTER("shmem_put" #NAME "_nbi", PXL_PUT);                                  \
        EV(PXL_EV_PUT, pe, len * (BYTES), sym(target), 0, 0);               \
        pshmem_put##NAME##_nbi(target, source, len, pe);                           \
        LEAVE();                                                                   \
    }                                                                              \
    void shmem_get##NAME(void *target, const void *source, size_t len, int pe) {  \
        ENTER("shmem_get" #NAME, PXL_GET);                                         \
        pshmem_get##NAME(target, source, len, pe);                                 \
        EV(PXL_EV_GET, pe, len * (BYTES), sym(source), 0, 0);               \
        LEAVE();                                                                   \
    }                                                                              \
    void shmem_get##NAME##_nbi(void *target, const void *source, size_t len, int pe) { \
        ENTER("shmem_get" #NAME "_nbi", PXL_GET);                                  \
        EV(PXL_EV_GET, pe, len * (BYTES), sym(source), 0, 0);               \
        pshmem_get##NAME##_nbi(target, source, len, pe);                           \
        LEAVE();                                                                   \
    }

SIZED(mem, 1)
SIZED(8, 1)
SIZED(16, 2)
SIZED(32, 4)
SIZED(64, 8)
SIZED(128, 16)

/* === atomics === */

#define ATOMIC_FETCH2(N, T, OP)                                             \
    T shmem_##N##_##OP(T *target, T value, int pe) {                        \
        ENTER("shmem_" #N "_" #OP, PXL_ATOMIC);                             \
        T r = pshmem_##N##_##OP(target, value, pe);                         \
        EV(PXL_EV_ATOMIC, pe, sizeof(T), sym(target), 0, 0);          \
        LEAVE();                                                            \
        return r;                                                           \
    }
#define ATOMIC_VOID2(N, T, OP)                                              \
    void shmem_##N##_##OP(T *target, T value, int pe) {                     \
        ENTER("shmem_" #N "_" #OP, PXL_ATOMIC);                             \
        pshmem_##N##_##OP(target, value, pe);                               \
        EV(PXL_EV_ATOMIC, pe, sizeof(T), sym(target), 0, 0);          \
        LEAVE();                                                            \
    }
#define ATOMIC_FETCH1(N, T, OP, CONST)                                      \
    T shmem_##N##_##OP(CONST T *target, int pe) {                           \
        ENTER("shmem_" #N "_" #OP, PXL_ATOMIC);                             \
        T r = pshmem_##N##_##OP(target, pe);                                \
        EV(PXL_EV_ATOMIC, pe, sizeof(T), sym(target), 0, 0);          \
        LEAVE();                                                            \
        return r;                                                           \
    }
#define ATOMIC_VOID1(N, T, OP)                                              \
    void shmem_##N##_##OP(T *target, int pe) {                              \
        ENTER("shmem_" #N "_" #OP, PXL_ATOMIC);                             \
        pshmem_##N##_##OP(target, pe);                                      \
        EV(PXL_EV_ATOMIC, pe, sizeof(T), sym(target), 0, 0);          \
        LEAVE();                                                            \
    }
#define ATOMIC_CSWAP(N, T, OP)                                              \
    T shmem_##N##_##OP(T *target, T cond, T value, int pe) {                \
        ENTER("shmem_" #N "_" #OP, PXL_ATOMIC);                             \
        T r = pshmem_##N##_##OP(target, cond, value, pe);                   \
        EV(PXL_EV_ATOMIC, pe, sizeof(T), sym(target), 0, 0);          \
        LEAVE();                                                            \
        return r;                                                           \
    }

/* OpenSHMEM 1.4 names, standard AMO types. */
#define STD_AMO(N, T)                          \
    ATOMIC_FETCH2(N, T, atomic_fetch_add)      \
    ATOMIC_VOID2(N, T, atomic_add)             \
    ATOMIC_FETCH1(N, T, atomic_fetch_inc, )    \
    ATOMIC_VOID1(N, T, atomic_inc)             \
    ATOMIC_CSWAP(N, T, atomic_compare_swap)
#define EXT_AMO(N, T)                          \
    ATOMIC_FETCH2(N, T, atomic_swap)           \
    ATOMIC_FETCH1(N, T, atomic_fetch, const)   \
    ATOMIC_VOID2(N, T, atomic_set)
/* The deprecated names of OpenSHMEM 1.3 and before. */
#define OLD_AMO(N, T)                          \
    ATOMIC_FETCH2(N, T, fadd)                  \
    ATOMIC_VOID2(N, T, add)                    \
    ATOMIC_FETCH1(N, T, finc, )                \
    ATOMIC_VOID1(N, T, inc)                    \
    ATOMIC_CSWAP(N, T, cswap)
#define OLD_EXT_AMO(N, T)                      \
    ATOMIC_FETCH2(N, T, swap)                  \
    ATOMIC_FETCH1(N, T, fetch, const)          \
    ATOMIC_VOID2(N, T, set)

#define STD_AMO_TYPES(X) \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) \
    X(ulong, unsigned long) X(ulonglong, unsigned long long)
#define OLD_AMO_TYPES(X) X(int, int) X(long, long) X(longlong, long long)

STD_AMO_TYPES(STD_AMO)
STD_AMO_TYPES(EXT_AMO)
EXT_AMO(float, float)
EXT_AMO(double, double)
OLD_AMO_TYPES(OLD_AMO)
OLD_AMO_TYPES(OLD_EXT_AMO)
OLD_EXT_AMO(float, float)
OLD_EXT_AMO(double, double)

/* === completion and waiting === */

void shmem_quiet(void) {
    ENTER("shmem_quiet", PXL_RMASYNC);
    pshmem_quiet();
    EV(PXL_EV_RMA_COMPLETE, PXL_ALL_TARGETS, 0, 0, 0, 0);
    LEAVE();
}

void shmem_fence(void) {
    ENTER("shmem_fence", PXL_RMASYNC);
    pshmem_fence();
    LEAVE();
}

#define WAIT_UNTIL(N, T)                                                     \
    void shmem_##N##_wait_until(volatile T *addr, int cmp, T value) {       \
        ENTER("shmem_" #N "_wait_until", PXL_WAITONVALUE);                   \
        pshmem_##N##_wait_until(addr, cmp, value);                           \
        EV(PXL_EV_VALUE_REACHED, sym(addr), 0, 0, 0, 0);               \
        LEAVE();                                                             \
    }
#define WAIT_TYPES(X)                                                                 \
    X(short, short) X(int, int) X(long, long) X(longlong, long long)                  \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)           \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t)              \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
WAIT_TYPES(WAIT_UNTIL)

#define WAIT(N, T)                                                           \
    void shmem_##N##_wait(volatile T *addr, T value) {                      \
        ENTER("shmem_" #N "_wait", PXL_WAITONVALUE);                         \
        pshmem_##N##_wait(addr, value);                                      \
        EV(PXL_EV_VALUE_REACHED, sym(addr), 0, 0, 0, 0);               \
        LEAVE();                                                             \
    }
WAIT(short, short)
WAIT(int, int)
WAIT(long, long)
WAIT(longlong, long long)

void shmem_wait(volatile long *addr, long value) {
    ENTER("shmem_wait", PXL_WAITONVALUE);
    pshmem_wait(addr, value);
    EV(PXL_EV_VALUE_REACHED, sym(addr), 0, 0, 0, 0);
    LEAVE();
}

/* === locks === */

void shmem_set_lock(volatile long *lock) {
    ENTER("shmem_set_lock", PXL_LOCK);
    EV(PXL_EV_LOCK_REQUEST, sym(lock), 0, 0, 0, 0);
    pshmem_set_lock(lock);
    EV(PXL_EV_LOCK_ACQUIRED, sym(lock), 0, 0, 0, 0);
    LEAVE();
}

void shmem_clear_lock(volatile long *lock) {
    ENTER("shmem_clear_lock", PXL_UNLOCK);
    EV(PXL_EV_LOCK_RELEASE, sym(lock), 0, 0, 0, 0);
    pshmem_clear_lock(lock);
    LEAVE();
}

int shmem_test_lock(volatile long *lock) {
    ENTER("shmem_test_lock", PXL_LOCK);
    int r = pshmem_test_lock(lock);
    if (r == 0) {
        EV(PXL_EV_LOCK_REQUEST, sym(lock), 0, 0, 0, 0);
        EV(PXL_EV_LOCK_ACQUIRED, sym(lock), 0, 0, 0, 0);
    }
    LEAVE();
    return r;
}

/* === collectives === */

#define COLL_BEGIN(name, kind)                  \
    ENTER(name, kind);                          \
    EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0)

#define COLL_END(op, set, root, sent, recvd)                  \
    do {                                                      \
        EV(PXL_EV_COLL_END, op, set, root, sent, recvd);      \
        LEAVE();                                              \
    } while (0)

void shmem_barrier_all(void) {
    COLL_BEGIN("shmem_barrier_all", PXL_BARRIER);
    pshmem_barrier_all();
    COLL_END(PXL_OP_BARRIER, 0, PXL_NO_ROOT, 0, 0);
}

void shmem_barrier(int start, int logstride, int size, long *psync) {
    COLL_BEGIN("shmem_barrier", PXL_BARRIER);
    pshmem_barrier(start, logstride, size, psync);
    uint64_t set = TR ? active_set(start, logstride, size) : 0;
    COLL_END(PXL_OP_BARRIER, set, PXL_NO_ROOT, 0, 0);
}

#define BROADCAST(BITS)                                                                     \
    void shmem_broadcast##BITS(void *target, const void *source, size_t n, int root,       \
                               int start, int logstride, int size, long *psync) {          \
        COLL_BEGIN("shmem_broadcast" #BITS, PXL_COLLECTIVE);                                \
        pshmem_broadcast##BITS(target, source, n, root, start, logstride, size, psync);    \
        uint64_t set = TR ? active_set(start, logstride, size) : 0;                      \
        int root_pe = start + (root << logstride);                                          \
        uint64_t b = n * (BITS / 8);                                                        \
        int me = TR ? pshmem_my_pe() : -1;                                               \
        COLL_END(PXL_OP_BCAST, set, (uint32_t)root_pe, me == root_pe ? b : 0,               \
                 me == root_pe ? 0 : b);                                                    \
    }
BROADCAST(32)
BROADCAST(64)

/* collect: the other PEs' counts are not known here; received is 0. */
#define COLLECT(NAME, BITS, FIXED)                                                          \
    void shmem_##NAME##BITS(void *target, const void *source, size_t n, int start,         \
                            int logstride, int size, long *psync) {                        \
        COLL_BEGIN("shmem_" #NAME #BITS, PXL_COLLECTIVE);                                   \
        pshmem_##NAME##BITS(target, source, n, start, logstride, size, psync);             \
        uint64_t set = TR ? active_set(start, logstride, size) : 0;                      \
        uint64_t b = n * (BITS / 8);                                                        \
        COLL_END(PXL_OP_ALLGATHER, set, PXL_NO_ROOT, b, (FIXED) ? b * (uint64_t)size : 0);  \
    }
COLLECT(collect, 32, 0)
COLLECT(collect, 64, 0)
COLLECT(fcollect, 32, 1)
COLLECT(fcollect, 64, 1)

#define ALLTOALL(BITS)                                                                      \
    void shmem_alltoall##BITS(void *target, const void *source, size_t n, int start,       \
                              int logstride, int size, long *psync) {                      \
        COLL_BEGIN("shmem_alltoall" #BITS, PXL_COLLECTIVE);                                 \
        pshmem_alltoall##BITS(target, source, n, start, logstride, size, psync);           \
        uint64_t set = TR ? active_set(start, logstride, size) : 0;                      \
        uint64_t b = n * (BITS / 8) * (uint64_t)size;                                       \
        COLL_END(PXL_OP_ALLTOALL, set, PXL_NO_ROOT, b, b);                                  \
    }
ALLTOALL(32)
ALLTOALL(64)

#define REDUCTION(N, T, OP)                                                                 \
    void shmem_##N##_##OP##_to_all(T *target, const T *source, int n, int start,           \
                                   int logstride, int size, T *pwrk, long *psync) {        \
        COLL_BEGIN("shmem_" #N "_" #OP "_to_all", PXL_COLLECTIVE);                          \
        pshmem_##N##_##OP##_to_all(target, source, n, start, logstride, size, pwrk, psync); \
        uint64_t set = TR ? active_set(start, logstride, size) : 0;                      \
        uint64_t b = (uint64_t)n * sizeof(T);                                               \
        COLL_END(PXL_OP_ALLREDUCE, set, PXL_NO_ROOT, b, b);                                 \
    }
#define ARITH_REDUCTIONS(N, T) \
    REDUCTION(N, T, sum) REDUCTION(N, T, prod) REDUCTION(N, T, max) REDUCTION(N, T, min)
#define BIT_REDUCTIONS(N, T) REDUCTION(N, T, and) REDUCTION(N, T, or) REDUCTION(N, T, xor)
#define INT_TYPES(X) X(short, short) X(int, int) X(long, long) X(longlong, long long)

INT_TYPES(ARITH_REDUCTIONS)
INT_TYPES(BIT_REDUCTIONS)
ARITH_REDUCTIONS(float, float)
ARITH_REDUCTIONS(double, double)
ARITH_REDUCTIONS(longdouble, long double)
