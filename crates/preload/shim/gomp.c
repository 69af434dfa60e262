/* OpenMP programs built by gcc, through the entry points of its runtime,
 * libgomp (GOMP_*), which the compiler calls for every construct: no
 * recompiling. What each construct records (docs/openmp.md):
 *
 * - parallel: the encountering thread's fork (region `omp fork`, kind
 *   Fork: events Fork and Advance on the team's id), then on every thread
 *   of the team the implicit task (region `omp parallel`, the construct's
 *   work), which a worker begins with the Await of the fork, and the
 *   implicit barrier at its end (region `omp implicit barrier`: a barrier
 *   collective of the team). libgomp's workers leave that barrier unseen, so
 *   the wrapper ends each implicit task with an explicit barrier (a task
 *   scheduling point, as the implicit one is), after which libgomp's own
 *   is immediate. The encountering thread records the Join of the team
 *   when it goes on.
 * - worksharing loops and sections: a Loop region from start to end, and
 *   for self-scheduled loops (dynamic, guided, sections) an Iteration
 *   event per chunk handed out (index: the chunk's first iteration,
 *   counted from 0) and one when none is left; the loop's barrier, if it
 *   has one, as an implicit barrier.
 * - barrier: a barrier collective of the team. critical, atomic and the
 *   omp_*_lock functions: Lock and Unlock regions with the lock events.
 *   ordered: Await and Advance of the loop's iterations, in order. task: a
 *   region around the task's work, wherever it runs. taskwait: a Join
 *   region.
 *
 * Each construct's region is named for the construct and the function it is
 * in, from the return address of the runtime call (src/omp.rs). Ids of
 * teams and loops carry a tag in their top byte that no address has
 * (omp.h, shared with the OMPT tool of ompt.c). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp.h"
#include "pxl.h"

/* libgomp's schedule kinds besides omp.h's (omp_sched_t, and
 * GOMP_loop_start's `sched`). */
enum { SCHED_RUNTIME = 0, SCHED_AUTO = 4 };
#define SCHED_MONOTONIC 0x80000000u

/* === the real functions ===
 * Found after this library in the global scope, or, for a program that
 * loaded libgomp privately (a plugin opened with RTLD_LOCAL, whose calls
 * still bind to these wrappers), in the scope of the caller's module
 * (omp.c). */
#define REAL(f) pxl_gomp_##f
#define DECLARE(ret, f, args) static ret(*REAL(f)) args
/* The real `f`, looked up (once) from the caller at `at`: the program's
 * code that called a wrapper, whose module's scope has the runtime when the
 * program loaded it privately. */
#define GET_AT(f, at)                                                                \
    (__atomic_load_n(&REAL(f), __ATOMIC_RELAXED)                                     \
         ? REAL(f)                                                                   \
         : (__atomic_store_n(&REAL(f), (__typeof__(REAL(f)))pxl_omp_lookup(#f, at), __ATOMIC_RELAXED), \
            REAL(f)))
#define GET(f) GET_AT(f, RA)
#define RA __builtin_return_address(0)

DECLARE(int, omp_get_thread_num, (void));
DECLARE(int, omp_get_num_threads, (void));
DECLARE(void, omp_get_schedule, (int *, int *));

/* === teams and their threads === */

struct team {
    /* First: GOMP_parallel_reductions reads the program's reductions from
     * the first word of the data it is given, this struct. */
    void *reductions;
    void (*fn)(void *);
    void *data;
    uint64_t id;
    int traced;
    uint32_t body, barrier;
    /* A loop that the runtime started for the whole team (a combined
     * parallel loop or sections): its schedule and bounds. */
    int sched;
    long start, incr;
};

/* A thread's place in the innermost team it runs in, and its current
 * worksharing construct. */
struct omp_thread {
    struct team *team;
    uint32_t num, size;
    /* Worksharing constructs begun in the team: what numbers its loops
     * alike on every thread. */
    uint64_t constructs;
    /* The current loop: open, its region recorded (enter's result), its id,
     * schedule, bounds and the next iteration of an ordered loop. */
    int open, in, sched, ull, up;
    uint64_t loop;
    long start, incr;
    unsigned long long ustart, uincr;
    uint64_t ord;
};
static __thread struct omp_thread omp;

static uint32_t site_region(const char *what, int kind, const void *ra) {
    return pxl_omp_site(what, kind, ra, NULL);
}

/* Whether a construct met now is recorded: measuring, and not inside
 * another wrapper. */
static int wanted(void) {
    return !pxl_busy && parallax_pl_active();
}

/* The same for libgomp's own entry points, unless the OMPT tool records the
 * process's constructs (a program built by gcc running on LLVM's libomp,
 * which has both); the first of them to record keeps it (omp.h). The omp
 * lock functions are the same in every runtime: their wrappers record
 * either way (and the OMPT tool leaves their calls to them). */
static int gomp_wanted(void) {
    int front = __atomic_load_n(&pxl_omp_front, __ATOMIC_RELAXED);
    if ((front & PXL_OMP_OMPT) || !wanted())
        return 0;
    if (!(front & PXL_OMP_GOMP))
        __atomic_or_fetch(&pxl_omp_front, PXL_OMP_GOMP, __ATOMIC_RELAXED);
    return 1;
}

static void barrier_events_begin(int in) {
    if (in & PXL_TRACED)
        parallax_pl_event(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
}

static void barrier_events_end(int in, struct omp_thread *o) {
    if ((in & PXL_TRACED) && o->team)
        parallax_pl_event(PXL_EV_COLL_END, PXL_OP_BARRIER, o->team->id, PXL_NO_ROOT, 0, o->size);
}

DECLARE(void, GOMP_barrier, (void));
DECLARE(bool, GOMP_barrier_cancel, (void));
DECLARE(int, omp_get_cancellation, (void));
DECLARE(int, omp_get_max_threads, (void));

/* The implicit task of thread `o` in team `t`. */
static void implicit_task(void *p) {
    struct team *t = p;
    struct omp_thread *o = &omp, saved = *o;
    o->team = t;
    o->num = (uint32_t)GET(omp_get_thread_num)();
    o->size = (uint32_t)GET(omp_get_num_threads)();
    o->constructs = 0;
    o->open = 0;
    pxl_omp_thread(o->num);
    if (o->num != 0 && t->traced)
        parallax_pl_event(PXL_EV_AWAIT_DONE, t->id, 1, 0, 0, 0);
    int in = t->body ? parallax_pl_enter(t->body) : 0;
    t->fn(t->data);
    if (in)
        parallax_pl_leave();
    int bin = t->barrier ? parallax_pl_enter(t->barrier) : 0;
    barrier_events_begin(bin);
    /* With cancellation on, a cancelled team passes a cancellable barrier
     * at once (a plain one would wait for ever). */
    if (REAL(omp_get_cancellation)())
        REAL(GOMP_barrier_cancel)();
    else
        REAL(GOMP_barrier)();
    barrier_events_end(bin, o);
    if (bin)
        parallax_pl_leave();
    *o = saved;
}

/* The fork of team `t` running `fn` by this thread, for the program's
 * code at `caller`; 0 if the team is not measured (then the real call gets
 * the program's own function). */
static int fork_team(struct team *t, void (*fn)(void *), void *data, unsigned n,
                     const void *caller) {
    if (!gomp_wanted())
        return 0;
    GET_AT(GOMP_barrier, caller);
    GET_AT(GOMP_barrier_cancel, caller);
    GET_AT(omp_get_thread_num, caller);
    GET_AT(omp_get_num_threads, caller);
    GET_AT(omp_get_cancellation, caller);
    if (n == 0) /* the default team size */
        n = (unsigned)GET_AT(omp_get_max_threads, caller)();
    t->reductions = NULL;
    t->fn = fn;
    t->data = data;
    t->id = pxl_omp_new_team();
    t->sched = SCHED_UNKNOWN;
    t->start = 0;
    t->incr = 1;
    /* The construct's place: its outlined body, whose first instruction
     * has the construct's line (a call's return address, one past the
     * call, may share code with another construct's at -O2). A site is
     * one past an instruction of the construct. */
    const char *site = (const char *)(uintptr_t)fn + 1;
    uint32_t fork = site_region("omp fork", PXL_FORK, site);
    t->body = site_region("omp parallel", PXL_USER, site);
    t->barrier = site_region("omp implicit barrier", PXL_BARRIER, site);
    int in = fork ? parallax_pl_enter(fork) : 0;
    t->traced = in & PXL_TRACED;
    if (t->traced) {
        parallax_pl_event(PXL_EV_FORK, t->id, n, 0, 0, 0);
        parallax_pl_event(PXL_EV_ADVANCE, t->id, 1, 0, 0, 0);
    }
    if (!in)
        return 0; /* the fork is not recorded (this thread records no more:
                   * it is past its end, in exit handlers), nor is its team */
    parallax_pl_leave();
    return 1;
}

/* The team has ended: the encountering thread goes on (the Join of trace
 * formats that pair it with the fork). */
static void joined(struct team *t) {
    if (t->traced)
        parallax_pl_event(PXL_EV_JOIN, t->id, 0, 0, 0, 0);
}

DECLARE(void, GOMP_parallel, (void (*)(void *), void *, unsigned, unsigned));
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
    struct team t;
    GET(GOMP_parallel);
    if (!fork_team(&t, fn, data, n, RA))
        return REAL(GOMP_parallel)(fn, data, n, flags);
    REAL(GOMP_parallel)(implicit_task, &t, n, flags);
    joined(&t);
}

DECLARE(unsigned, GOMP_parallel_reductions, (void (*)(void *), void *, unsigned, unsigned));
unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
    struct team t;
    GET(GOMP_parallel_reductions);
    if (!fork_team(&t, fn, data, n, RA))
        return REAL(GOMP_parallel_reductions)(fn, data, n, flags);
    t.reductions = *(void **)data;
    unsigned r = REAL(GOMP_parallel_reductions)(implicit_task, &t, n, flags);
    joined(&t);
    return r;
}

/* Combined parallel loops: the runtime starts the loop for the team. */
#define PARALLEL_LOOP(f, sched_)                                                                   \
    DECLARE(void, f, (void (*)(void *), void *, unsigned, long, long, long, long, unsigned));      \
    void f(void (*fn)(void *), void *data, unsigned n, long start, long end, long incr, long chunk, \
           unsigned flags) {                                                                       \
        struct team t;                                                                             \
        GET(f);                                                                                    \
        if (!fork_team(&t, fn, data, n, RA))                                                       \
            return REAL(f)(fn, data, n, start, end, incr, chunk, flags);                           \
        t.sched = sched_;                                                                          \
        t.start = start;                                                                           \
        t.incr = incr;                                                                             \
        REAL(f)(implicit_task, &t, n, start, end, incr, chunk, flags);                             \
        joined(&t);                                                                                \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static, SCHED_STATIC)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic, SCHED_DYNAMIC)
PARALLEL_LOOP(GOMP_parallel_loop_guided, SCHED_GUIDED)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, SCHED_DYNAMIC)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, SCHED_GUIDED)

static int runtime_schedule(const void *caller) {
    int kind = SCHED_STATIC, chunk = 0;
    GET_AT(omp_get_schedule, caller)(&kind, &chunk);
    kind &= ~(int)SCHED_MONOTONIC;
    return kind == SCHED_DYNAMIC || kind == SCHED_GUIDED ? kind : SCHED_STATIC;
}

#define PARALLEL_LOOP_RUNTIME(f)                                                                   \
    DECLARE(void, f, (void (*)(void *), void *, unsigned, long, long, long, unsigned));            \
    void f(void (*fn)(void *), void *data, unsigned n, long start, long end, long incr,            \
           unsigned flags) {                                                                       \
        struct team t;                                                                             \
        GET(f);                                                                                    \
        if (!fork_team(&t, fn, data, n, RA))                                                       \
            return REAL(f)(fn, data, n, start, end, incr, flags);                                  \
        t.sched = runtime_schedule(RA);                                                              \
        t.start = start;                                                                           \
        t.incr = incr;                                                                             \
        REAL(f)(implicit_task, &t, n, start, end, incr, flags);                                    \
        joined(&t);                                                                                \
    }
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

DECLARE(void, GOMP_parallel_sections, (void (*)(void *), void *, unsigned, unsigned, unsigned));
void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count, unsigned flags) {
    struct team t;
    GET(GOMP_parallel_sections);
    if (!fork_team(&t, fn, data, n, RA))
        return REAL(GOMP_parallel_sections)(fn, data, n, count, flags);
    t.sched = SCHED_SECTIONS;
    t.start = 1;
    t.incr = 1;
    REAL(GOMP_parallel_sections)(implicit_task, &t, n, count, flags);
    joined(&t);
}

/* === worksharing loops === */

/* Thread `o` begins a worksharing construct of schedule `sched` at `ra`. */
static void loop_begin(struct omp_thread *o, int sched, const void *ra) {
    o->constructs++;
    o->loop = pxl_omp_loop_id(o->team ? o->team->id : 0, o->constructs);
    o->sched = sched;
    o->open = 1;
    o->ord = 0;
    uint32_t id = site_region(pxl_omp_loop_name(sched), PXL_LOOP, ra);
    o->in = id ? parallax_pl_enter(id) : 0;
}

/* A loop of `long` bounds. */
static void loop_begin_long(struct omp_thread *o, int sched, long start, long incr, const void *ra) {
    loop_begin(o, sched, ra);
    o->ull = 0;
    o->start = start;
    o->incr = incr ? incr : 1;
}

/* The chunk from iteration `first` (counted from 0) was handed out, or
 * none was (`got` 0). */
static void loop_chunk(struct omp_thread *o, int got, uint64_t first) {
    o->ord = first;
    if ((o->in & PXL_TRACED) && pxl_omp_self_scheduled(o->sched))
        parallax_pl_event(PXL_EV_ITERATION, o->loop, got ? first : PXL_NO_ITERATION, 0, 0, 0);
}

static uint64_t first_long(struct omp_thread *o, long istart) {
    return (uint64_t)((istart - o->start) / o->incr);
}

static uint64_t first_ull(struct omp_thread *o, unsigned long long istart) {
    return o->up ? (istart - o->ustart) / o->uincr : (o->ustart - istart) / (0ull - o->uincr);
}

/* The current loop ends (its barrier, if any, follows). */
static void loop_end(struct omp_thread *o) {
    if (o->open && o->in)
        parallax_pl_leave();
    o->open = 0;
    o->in = 0;
}

#define LOOP_START(f, sched_)                                                                  \
    DECLARE(bool, f, (long, long, long, long, long *, long *));                                \
    bool f(long start, long end, long incr, long chunk, long *istart, long *iend) {            \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(start, end, incr, chunk, istart, iend);                             \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_long(o, sched_, start, incr, RA);                                           \
        bool r = REAL(f)(start, end, incr, chunk, istart, iend);                               \
        loop_chunk(o, r, r ? first_long(o, *istart) : 0);                                      \
        return r;                                                                              \
    }
LOOP_START(GOMP_loop_static_start, SCHED_STATIC)
LOOP_START(GOMP_loop_dynamic_start, SCHED_DYNAMIC)
LOOP_START(GOMP_loop_guided_start, SCHED_GUIDED)
LOOP_START(GOMP_loop_nonmonotonic_dynamic_start, SCHED_DYNAMIC)
LOOP_START(GOMP_loop_nonmonotonic_guided_start, SCHED_GUIDED)
LOOP_START(GOMP_loop_ordered_static_start, SCHED_STATIC)
LOOP_START(GOMP_loop_ordered_dynamic_start, SCHED_DYNAMIC)
LOOP_START(GOMP_loop_ordered_guided_start, SCHED_GUIDED)

#define LOOP_START_RUNTIME(f)                                                                  \
    DECLARE(bool, f, (long, long, long, long *, long *));                                      \
    bool f(long start, long end, long incr, long *istart, long *iend) {                        \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(start, end, incr, istart, iend);                                    \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_long(o, runtime_schedule(RA), start, incr, RA);                               \
        bool r = REAL(f)(start, end, incr, istart, iend);                                      \
        loop_chunk(o, r, r ? first_long(o, *istart) : 0);                                      \
        return r;                                                                              \
    }
LOOP_START_RUNTIME(GOMP_loop_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_nonmonotonic_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_maybe_nonmonotonic_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_ordered_runtime_start)

/* The schedule of GOMP_loop_start's `sched`. */
static int generic_schedule(long sched, const void *caller) {
    int s = (int)(sched & ~(long)SCHED_MONOTONIC);
    if (s == SCHED_RUNTIME)
        return runtime_schedule(caller);
    return s == SCHED_DYNAMIC || s == SCHED_GUIDED ? s : SCHED_STATIC;
}

#define LOOP_START_GENERIC(f)                                                                  \
    DECLARE(bool, f, (long, long, long, long, long, long *, long *, uintptr_t *, void **));    \
    bool f(long start, long end, long incr, long sched, long chunk, long *istart, long *iend,  \
           uintptr_t *reductions, void **mem) {                                                \
        GET(f);                                                                                \
        if (!istart || !gomp_wanted())                                                         \
            return REAL(f)(start, end, incr, sched, chunk, istart, iend, reductions, mem);     \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_long(o, generic_schedule(sched, RA), start, incr, RA);                          \
        bool r = REAL(f)(start, end, incr, sched, chunk, istart, iend, reductions, mem);       \
        loop_chunk(o, r, r ? first_long(o, *istart) : 0);                                      \
        return r;                                                                              \
    }
LOOP_START_GENERIC(GOMP_loop_start)
LOOP_START_GENERIC(GOMP_loop_ordered_start)

/* A next chunk; a loop that the runtime started for the team begins here. */
#define LOOP_NEXT(f)                                                                           \
    DECLARE(bool, f, (long *, long *));                                                        \
    bool f(long *istart, long *iend) {                                                         \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(istart, iend);                                                      \
        struct omp_thread *o = &omp;                                                           \
        if (!o->open) {                                                                        \
            struct team *t = o->team;                                                          \
            loop_begin_long(o, t ? t->sched : SCHED_UNKNOWN, t ? t->start : 0,                 \
                            t ? t->incr : 1, RA);                                              \
        }                                                                                      \
        bool r = REAL(f)(istart, iend);                                                        \
        loop_chunk(o, r, r ? first_long(o, *istart) : 0);                                      \
        return r;                                                                              \
    }
LOOP_NEXT(GOMP_loop_static_next)
LOOP_NEXT(GOMP_loop_dynamic_next)
LOOP_NEXT(GOMP_loop_guided_next)
LOOP_NEXT(GOMP_loop_runtime_next)
LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next)
LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next)
LOOP_NEXT(GOMP_loop_nonmonotonic_runtime_next)
LOOP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next)
LOOP_NEXT(GOMP_loop_ordered_static_next)
LOOP_NEXT(GOMP_loop_ordered_dynamic_next)
LOOP_NEXT(GOMP_loop_ordered_guided_next)
LOOP_NEXT(GOMP_loop_ordered_runtime_next)

/* Loops of unsigned long long bounds. */
static void loop_begin_ull(struct omp_thread *o, int sched, bool up, unsigned long long start,
                           unsigned long long incr, const void *ra) {
    loop_begin(o, sched, ra);
    o->ull = 1;
    o->up = up;
    o->ustart = start;
    o->uincr = incr ? incr : 1;
}

typedef unsigned long long ull;

#define LOOP_ULL_START(f, sched_)                                                              \
    DECLARE(bool, f, (bool, ull, ull, ull, ull, ull *, ull *));                                \
    bool f(bool up, ull start, ull end, ull incr, ull chunk, ull *istart, ull *iend) {         \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(up, start, end, incr, chunk, istart, iend);                         \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_ull(o, sched_, up, start, incr, RA);                                        \
        bool r = REAL(f)(up, start, end, incr, chunk, istart, iend);                           \
        loop_chunk(o, r, r ? first_ull(o, *istart) : 0);                                       \
        return r;                                                                              \
    }
LOOP_ULL_START(GOMP_loop_ull_static_start, SCHED_STATIC)
LOOP_ULL_START(GOMP_loop_ull_dynamic_start, SCHED_DYNAMIC)
LOOP_ULL_START(GOMP_loop_ull_guided_start, SCHED_GUIDED)
LOOP_ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, SCHED_DYNAMIC)
LOOP_ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, SCHED_GUIDED)
LOOP_ULL_START(GOMP_loop_ull_ordered_static_start, SCHED_STATIC)
LOOP_ULL_START(GOMP_loop_ull_ordered_dynamic_start, SCHED_DYNAMIC)
LOOP_ULL_START(GOMP_loop_ull_ordered_guided_start, SCHED_GUIDED)

#define LOOP_ULL_START_RUNTIME(f)                                                              \
    DECLARE(bool, f, (bool, ull, ull, ull, ull *, ull *));                                     \
    bool f(bool up, ull start, ull end, ull incr, ull *istart, ull *iend) {                    \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(up, start, end, incr, istart, iend);                                \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_ull(o, runtime_schedule(RA), up, start, incr, RA);                            \
        bool r = REAL(f)(up, start, end, incr, istart, iend);                                  \
        loop_chunk(o, r, r ? first_ull(o, *istart) : 0);                                       \
        return r;                                                                              \
    }
LOOP_ULL_START_RUNTIME(GOMP_loop_ull_runtime_start)
LOOP_ULL_START_RUNTIME(GOMP_loop_ull_nonmonotonic_runtime_start)
LOOP_ULL_START_RUNTIME(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
LOOP_ULL_START_RUNTIME(GOMP_loop_ull_ordered_runtime_start)

#define LOOP_ULL_START_GENERIC(f)                                                              \
    DECLARE(bool, f, (bool, ull, ull, ull, long, ull, ull *, ull *, uintptr_t *, void **));    \
    bool f(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull *istart,          \
           ull *iend, uintptr_t *reductions, void **mem) {                                     \
        GET(f);                                                                                \
        if (!istart || !gomp_wanted())                                                         \
            return REAL(f)(up, start, end, incr, sched, chunk, istart, iend, reductions, mem); \
        struct omp_thread *o = &omp;                                                           \
        loop_begin_ull(o, generic_schedule(sched, RA), up, start, incr, RA);                       \
        bool r = REAL(f)(up, start, end, incr, sched, chunk, istart, iend, reductions, mem);   \
        loop_chunk(o, r, r ? first_ull(o, *istart) : 0);                                       \
        return r;                                                                              \
    }
LOOP_ULL_START_GENERIC(GOMP_loop_ull_start)
LOOP_ULL_START_GENERIC(GOMP_loop_ull_ordered_start)

#define LOOP_ULL_NEXT(f)                                                                       \
    DECLARE(bool, f, (ull *, ull *));                                                          \
    bool f(ull *istart, ull *iend) {                                                           \
        GET(f);                                                                                \
        if (!gomp_wanted())                                                                    \
            return REAL(f)(istart, iend);                                                      \
        struct omp_thread *o = &omp;                                                           \
        if (!o->open)                                                                          \
            loop_begin_ull(o, SCHED_UNKNOWN, true, 0, 1, RA);                                  \
        bool r = REAL(f)(istart, iend);                                                        \
        loop_chunk(o, r, r ? first_ull(o, *istart) : 0);                                       \
        return r;                                                                              \
    }
LOOP_ULL_NEXT(GOMP_loop_ull_static_next)
LOOP_ULL_NEXT(GOMP_loop_ull_dynamic_next)
LOOP_ULL_NEXT(GOMP_loop_ull_guided_next)
LOOP_ULL_NEXT(GOMP_loop_ull_runtime_next)
LOOP_ULL_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next)
LOOP_ULL_NEXT(GOMP_loop_ull_nonmonotonic_guided_next)
LOOP_ULL_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next)
LOOP_ULL_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)
LOOP_ULL_NEXT(GOMP_loop_ull_ordered_static_next)
LOOP_ULL_NEXT(GOMP_loop_ull_ordered_dynamic_next)
LOOP_ULL_NEXT(GOMP_loop_ull_ordered_guided_next)
LOOP_ULL_NEXT(GOMP_loop_ull_ordered_runtime_next)

/* === sections === */

static void sections_begin(struct omp_thread *o, const void *ra) {
    loop_begin_long(o, SCHED_SECTIONS, 1, 1, ra);
}

DECLARE(unsigned, GOMP_sections_start, (unsigned));
unsigned GOMP_sections_start(unsigned count) {
    GET(GOMP_sections_start);
    if (!gomp_wanted())
        return REAL(GOMP_sections_start)(count);
    struct omp_thread *o = &omp;
    sections_begin(o, RA);
    unsigned s = REAL(GOMP_sections_start)(count);
    loop_chunk(o, s != 0, s ? s - 1 : 0);
    return s;
}

DECLARE(unsigned, GOMP_sections2_start, (unsigned, uintptr_t *, void **));
unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem) {
    GET(GOMP_sections2_start);
    if (!gomp_wanted())
        return REAL(GOMP_sections2_start)(count, reductions, mem);
    struct omp_thread *o = &omp;
    sections_begin(o, RA);
    unsigned s = REAL(GOMP_sections2_start)(count, reductions, mem);
    loop_chunk(o, s != 0, s ? s - 1 : 0);
    return s;
}

DECLARE(unsigned, GOMP_sections_next, (void));
unsigned GOMP_sections_next(void) {
    GET(GOMP_sections_next);
    if (!gomp_wanted())
        return REAL(GOMP_sections_next)();
    struct omp_thread *o = &omp;
    if (!o->open)
        sections_begin(o, RA);
    unsigned s = REAL(GOMP_sections_next)();
    loop_chunk(o, s != 0, s ? s - 1 : 0);
    return s;
}

/* === barriers === */

/* A barrier of the current team at `ra`: an explicit one, or the implicit
 * one that ends a worksharing construct. `wait` is the runtime's. */
#define TEAM_BARRIER(what, ra, call)                                         \
    do {                                                                     \
        struct omp_thread *o = &omp;                                         \
        uint32_t id = site_region(what, PXL_BARRIER, ra);                    \
        int in = id ? parallax_pl_enter(id) : 0;                             \
        barrier_events_begin(in);                                            \
        call;                                                                \
        barrier_events_end(in, o);                                           \
        if (in)                                                              \
            parallax_pl_leave();                                             \
    } while (0)

void GOMP_barrier(void) {
    GET(GOMP_barrier);
    if (!gomp_wanted())
        return REAL(GOMP_barrier)();
    TEAM_BARRIER("omp barrier", RA, REAL(GOMP_barrier)());
}

bool GOMP_barrier_cancel(void) {
    GET(GOMP_barrier_cancel);
    if (!gomp_wanted())
        return REAL(GOMP_barrier_cancel)();
    bool r;
    TEAM_BARRIER("omp barrier", RA, r = REAL(GOMP_barrier_cancel)());
    return r;
}

#define CONSTRUCT_END(f)                                                      \
    DECLARE(void, f, (void));                                                 \
    void f(void) {                                                            \
        GET(f);                                                               \
        if (!gomp_wanted())                                                   \
            return REAL(f)();                                                 \
        loop_end(&omp);                                                       \
        TEAM_BARRIER("omp implicit barrier", RA, REAL(f)());                  \
    }
CONSTRUCT_END(GOMP_loop_end)
CONSTRUCT_END(GOMP_sections_end)

#define CONSTRUCT_END_CANCEL(f)                                               \
    DECLARE(bool, f, (void));                                                 \
    bool f(void) {                                                            \
        GET(f);                                                               \
        if (!gomp_wanted())                                                   \
            return REAL(f)();                                                 \
        loop_end(&omp);                                                       \
        bool r;                                                               \
        TEAM_BARRIER("omp implicit barrier", RA, r = REAL(f)());              \
        return r;                                                             \
    }
CONSTRUCT_END_CANCEL(GOMP_loop_end_cancel)
CONSTRUCT_END_CANCEL(GOMP_sections_end_cancel)

#define CONSTRUCT_END_NOWAIT(f)                                               \
    DECLARE(void, f, (void));                                                 \
    void f(void) {                                                            \
        GET(f);                                                               \
        if (gomp_wanted())                                                    \
            loop_end(&omp);                                                   \
        REAL(f)();                                                            \
    }
CONSTRUCT_END_NOWAIT(GOMP_loop_end_nowait)
CONSTRUCT_END_NOWAIT(GOMP_sections_end_nowait)

/* === mutual exclusion === */

/* The locks of unnamed critical sections and of atomic updates. */
static char unnamed_critical, atomic_lock;

static void lock_begin(const char *what, uint64_t lock, const void *ra, int *in) {
    uint32_t id = site_region(what, PXL_LOCK, ra);
    *in = id ? parallax_pl_enter(id) : 0;
    if (*in & PXL_TRACED)
        parallax_pl_event(PXL_EV_LOCK_REQUEST, lock, 0, 0, 0, 0);
}

static void lock_end(uint64_t lock, int in) {
    if (in & PXL_TRACED)
        parallax_pl_event(PXL_EV_LOCK_ACQUIRED, lock, 0, 0, 0, 0);
    if (in)
        parallax_pl_leave();
}

static int unlock_begin(const char *what, uint64_t lock, const void *ra) {
    uint32_t id = site_region(what, PXL_UNLOCK, ra);
    int in = id ? parallax_pl_enter(id) : 0;
    if (in & PXL_TRACED)
        parallax_pl_event(PXL_EV_LOCK_RELEASE, lock, 0, 0, 0, 0);
    return in;
}

#define LOCKING(f, what, lock, params, args)                                  \
    DECLARE(void, f, params);                                                 \
    void f params {                                                           \
        GET(f);                                                               \
        if (!wanted())                                                        \
            return REAL(f) args;                                              \
        int in;                                                               \
        pxl_busy = 1;                                                         \
        lock_begin(what, lock, RA, &in);                                      \
        REAL(f) args;                                                         \
        lock_end(lock, in);                                                   \
        pxl_busy = 0;                                                         \
    }

#define UNLOCKING(f, what, lock, params, args)                                \
    DECLARE(void, f, params);                                                 \
    void f params {                                                           \
        GET(f);                                                               \
        if (!wanted())                                                        \
            return REAL(f) args;                                              \
        pxl_busy = 1;                                                         \
        int in = unlock_begin(what, lock, RA);                                \
        REAL(f) args;                                                         \
        if (in)                                                               \
            parallax_pl_leave();                                              \
        pxl_busy = 0;                                                         \
    }

LOCKING(GOMP_critical_start, "omp critical", (uintptr_t)&unnamed_critical, (void), ())
UNLOCKING(GOMP_critical_end, "omp critical end", (uintptr_t)&unnamed_critical, (void), ())
LOCKING(GOMP_critical_name_start, "omp critical", (uintptr_t)pptr, (void **pptr), (pptr))
UNLOCKING(GOMP_critical_name_end, "omp critical end", (uintptr_t)pptr, (void **pptr), (pptr))
LOCKING(GOMP_atomic_start, "omp atomic", (uintptr_t)&atomic_lock, (void), ())
UNLOCKING(GOMP_atomic_end, "omp atomic end", (uintptr_t)&atomic_lock, (void), ())

/* The OpenMP lock API (simple locks; nestable locks are not recorded). */
typedef struct omp_lock omp_lock_t;
LOCKING(omp_set_lock, "omp_set_lock", (uintptr_t)l, (omp_lock_t * l), (l))
UNLOCKING(omp_unset_lock, "omp_unset_lock", (uintptr_t)l, (omp_lock_t * l), (l))

/* The Fortran bindings (`call omp_set_lock(l)`: the lock variable's
 * address), which libgomp does not route through the C functions. */
LOCKING(omp_set_lock_, "omp_set_lock", (uintptr_t)l, (void *l), (l))
UNLOCKING(omp_unset_lock_, "omp_unset_lock", (uintptr_t)l, (void *l), (l))

DECLARE(int, omp_test_lock, (omp_lock_t *));
int omp_test_lock(omp_lock_t *l) {
    GET(omp_test_lock);
    if (!wanted())
        return REAL(omp_test_lock)(l);
    pxl_busy = 1;
    uint32_t id = site_region("omp_test_lock", PXL_LOCK, RA);
    int in = id ? parallax_pl_enter(id) : 0;
    int r = REAL(omp_test_lock)(l);
    if (r && (in & PXL_TRACED)) {
        parallax_pl_event(PXL_EV_LOCK_REQUEST, (uintptr_t)l, 0, 0, 0, 0);
        parallax_pl_event(PXL_EV_LOCK_ACQUIRED, (uintptr_t)l, 0, 0, 0, 0);
    }
    if (in)
        parallax_pl_leave();
    pxl_busy = 0;
    return r;
}

/* === ordered: the iterations of an ordered loop in turn === */

DECLARE(void, GOMP_ordered_start, (void));
void GOMP_ordered_start(void) {
    GET(GOMP_ordered_start);
    if (!gomp_wanted())
        return REAL(GOMP_ordered_start)();
    struct omp_thread *o = &omp;
    uint32_t id = site_region("omp ordered", PXL_AWAIT, RA);
    int in = id ? parallax_pl_enter(id) : 0;
    REAL(GOMP_ordered_start)();
    /* Iteration 0 waits for nothing. */
    if ((in & PXL_TRACED) && o->open && o->ord > 0)
        parallax_pl_event(PXL_EV_AWAIT_DONE, o->loop, o->ord, 0, 0, 0);
    if (in)
        parallax_pl_leave();
}

DECLARE(void, GOMP_ordered_end, (void));
void GOMP_ordered_end(void) {
    GET(GOMP_ordered_end);
    if (!gomp_wanted())
        return REAL(GOMP_ordered_end)();
    struct omp_thread *o = &omp;
    uint32_t id = site_region("omp ordered end", PXL_ADVANCE, RA);
    int in = id ? parallax_pl_enter(id) : 0;
    if ((in & PXL_TRACED) && o->open)
        parallax_pl_event(PXL_EV_ADVANCE, o->loop, o->ord + 1, 0, 0, 0);
    o->ord++;
    REAL(GOMP_ordered_end)();
    if (in)
        parallax_pl_leave();
}

/* === tasks ===
 * An explicit task runs later, on whichever thread of the team takes it:
 * the wrapper hands libgomp a task of its own whose argument block begins
 * with a header (the program's function, the task's region) followed by
 * the program's argument at its alignment; the task's region is entered
 * around the program's function wherever it runs. libgomp copies the
 * block (memcpy, or the copy function: then the wrapper's, which copies
 * the header and lets the program's copy its argument) or, for a task run
 * at once, passes it as it is. */

/* GOMP_TASK_FLAG_DETACH of gcc's gomp-constants.h. */
#define TASK_FLAG_DETACH (1u << 13)
/* Task blocks up to this size are made on the stack. */
#define TASK_ON_STACK 1024

struct task_header {
    void (*fn)(void *);
    void (*cpyfn)(void *, void *);
    /* The program's argument (for the copy function), and its offset in
     * the block. */
    void *data;
    long off;
    uint32_t region;
};

static void task_body(void *block) {
    struct task_header *h = block;
    int in = h->region ? parallax_pl_enter(h->region) : 0;
    h->fn((char *)block + h->off);
    if (in)
        parallax_pl_leave();
}

static void task_copy(void *dst, void *src) {
    struct task_header *h = src;
    memcpy(dst, h, sizeof *h);
    h->cpyfn((char *)dst + h->off, h->data);
}

DECLARE(void, GOMP_task,
        (void (*)(void *), void *, void (*)(void *, void *), long, long, bool, unsigned, void **,
         int, void *));
void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
               void *detach) {
    GET(GOMP_task);
    /* A detached task's data gets the task's handle from libgomp: left as
     * the program made it. */
    if (!gomp_wanted() || (flags & TASK_FLAG_DETACH) || arg_size < 0 || arg_align <= 0 ||
        arg_align > 4096 || arg_size > (1L << 30))
        return REAL(GOMP_task)(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend,
                               priority, detach);
    long align = arg_align > (long)_Alignof(struct task_header) ? arg_align
                                                                 : (long)_Alignof(struct task_header);
    long off = ((long)sizeof(struct task_header) + arg_align - 1) / arg_align * arg_align;
    /* The block, at `align`, while libgomp copies it (or runs the task at
     * once): on this stack when small, else on the heap, so that a chain of
     * tasks run at once uses no more stack than without the wrapper. */
    size_t need = (size_t)(off + arg_size + align);
    char small[need <= TASK_ON_STACK ? need : 1];
    char *raw = small;
    if (need > TASK_ON_STACK) {
        raw = malloc(need);
        if (!raw)
            return REAL(GOMP_task)(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend,
                                   priority, detach);
    }
    char *block = (char *)(((uintptr_t)raw + (uintptr_t)align - 1) & ~((uintptr_t)align - 1));
    struct task_header *h = (struct task_header *)block;
    h->fn = fn;
    h->cpyfn = cpyfn;
    h->data = data;
    h->off = off;
    h->region = site_region("omp task", PXL_USER, RA);
    if (!cpyfn && arg_size > 0)
        memcpy(block + off, data, (size_t)arg_size);
    REAL(GOMP_task)(task_body, block, cpyfn ? task_copy : NULL, off + arg_size, align, if_clause,
                    flags, depend, priority, detach);
    if (raw != small)
        free(raw);
}

DECLARE(void, GOMP_taskwait, (void));
void GOMP_taskwait(void) {
    GET(GOMP_taskwait);
    if (!gomp_wanted())
        return REAL(GOMP_taskwait)();
    uint32_t id = site_region("omp taskwait", PXL_JOIN, RA);
    int in = id ? parallax_pl_enter(id) : 0;
    REAL(GOMP_taskwait)();
    if (in)
        parallax_pl_leave();
}
