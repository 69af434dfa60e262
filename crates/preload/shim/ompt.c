/* OpenMP programs of LLVM's runtime, libomp (clang -fopenmp), through OMPT,
 * the tool interface of OpenMP 5: the runtime looks up `ompt_start_tool` in
 * the process when it starts, finds this library's, and calls back at every
 * construct. No recompiling. The regions, events and ids are those of the
 * libgomp wrappers (gomp.c, docs there), shared through omp.h:
 *
 * - parallel: the encountering thread's fork (region `omp fork`, kind
 *   Fork: events Fork with the requested size and Advance on the team's
 *   id); on every thread of the team the implicit task (region `omp
 *   parallel`), which a worker begins with the Await of the fork; and the
 *   implicit barrier at its end (region `omp implicit barrier` at the
 *   fork's address: a barrier collective of the team).
 * - worksharing loops: a Loop region from start to end, named for the
 *   schedule; for dynamic and guided loops an Iteration event per chunk
 *   handed out (index: the chunk's first iteration, counted from 0) and
 *   one when none is left; sections likewise (one chunk per thread: libomp
 *   deals them out statically). The barrier that ends a construct is an
 *   implicit barrier, `omp barrier` an explicit one.
 * - critical, atomic, omp locks: Lock and Unlock regions with the lock
 *   events on the runtime's wait id. clang makes most atomic constructs
 *   processor atomics or libatomic calls, which the runtime does not see;
 *   the calls of omp_set_lock and its kin are recorded by their wrappers
 *   (gomp.c, at the caller's address), and the callbacks the runtime makes
 *   inside them are left to them. ordered: Await and Advance of the loop's
 *   iterations; taskwait: a Join region.
 *
 * What libomp 14 does not tell, and how it is made up for:
 * - the schedule of a loop (its work callback says only "loop") and its
 *   chunks (it has no dispatch callback: ompt_set_callback answers
 *   ompt_set_never): the entry points that clang's code calls to start
 *   a loop and take its chunks, __kmpc_dispatch_init_* / _next_* and
 *   __kmpc_for_static_init_*, are wrapped here;
 * - when a worker leaves the barrier that ends a parallel region: it is
 *   reported only when the worker gets its next work (the next parallel
 *   region, or the end of the program). Each thread of the team therefore
 *   waits at the start of that barrier until the whole team has arrived
 *   (as the libgomp wrappers end each implicit task with an explicit
 *   barrier), and records the barrier's end then; the runtime's own
 *   barrier follows (explicit tasks still pending at the region's end run
 *   in it, after the recorded barrier). That barrier is told from the
 *   others by ompt_sync_region_barrier_implicit_parallel (OpenMP 5.1) or,
 *   in libomp 14, by the implicit task's cleared exit frame; a runtime that
 *   shows neither gets no waiting, and a worker's last barrier and
 *   implicit task then end when the runtime says (perhaps after the
 *   measurement ended);
 * - the team's actual size (the implicit task's `actual_parallelism` is
 *   not set at its begin): asked with ompt_get_parallel_info;
 * - the code address of a critical section's end on a worker thread (libomp
 *   14 reads the master thread's): the end is named for the address of the
 *   section's start;
 * - which function a construct is in: clang 14 outlines the bodies of
 *   constructs into `.omp_outlined.`, a name that says nothing of it, so
 *   the construct is named for the function of its team's fork
 *   (parallax_pl_omp_region_in).
 * Explicit tasks: a region around each task's work (task_create and
 * task_schedule). Not recorded: single, masked, taskgroups, task
 * dependences, distribute and teams, nestable locks, reductions (other than
 * through their critical sections or atomic locks), cancellation; a team of
 * one thread (if(0), num_threads(1), inactive nested parallelism) has no
 * barrier at its end in libomp, and none is recorded.
 *
 * The callbacks run on the program's threads, inside the runtime: they call
 * nothing of it (only the OMPT inquiry functions, made to be called there)
 * and record with pxl_busy set. A program with OMP_TOOL_LIBRARIES set keeps
 * its own tool, and nothing of OpenMP is recorded; OMP_TOOL=disabled too.
 * A program of gcc running on libomp (which has libgomp's entry points) is
 * recorded by the libgomp wrappers if they met a construct first, else
 * here; never by both (omp.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "omp.h"
#include "pxl.h"

/* === the OMPT interface (OpenMP 5.0 and 5.1, omp-tools.h): the few types
 * and numbers used, declared here so that the build needs no header of an
 * OpenMP runtime === */

typedef union {
    uint64_t value;
    void *ptr;
} ompt_data_t;

typedef struct {
    ompt_data_t exit_frame;
    ompt_data_t enter_frame;
    int exit_frame_flags;
    int enter_frame_flags;
} ompt_frame_t;

typedef uint64_t ompt_wait_id_t;
typedef void (*ompt_fn_t)(void);
typedef ompt_fn_t (*ompt_lookup_t)(const char *);
typedef int (*ompt_set_callback_t)(int event, ompt_fn_t callback);
typedef int (*ompt_get_parallel_info_t)(int level, ompt_data_t **parallel, int *size);
typedef int (*ompt_get_task_info_t)(int level, int *flags, ompt_data_t **task,
                                     ompt_frame_t **frame, ompt_data_t **parallel, int *thread);

typedef struct {
    int (*initialize)(ompt_lookup_t lookup, int initial_device, ompt_data_t *tool_data);
    void (*finalize)(ompt_data_t *tool_data);
    ompt_data_t tool_data;
} ompt_start_tool_result_t;

/* ompt_callbacks_t */
enum {
    CB_PARALLEL_BEGIN = 3,
    CB_PARALLEL_END = 4,
    CB_TASK_CREATE = 5,
    CB_TASK_SCHEDULE = 6,
    CB_IMPLICIT_TASK = 7,
    CB_MUTEX_RELEASED = 17,
    CB_WORK = 20,
    CB_SYNC_REGION = 23,
    CB_MUTEX_ACQUIRE = 26,
    CB_MUTEX_ACQUIRED = 27
};
/* ompt_set_result_t: what ompt_set_callback answers; from this one up the
 * callback is made (at least sometimes). */
enum { SET_SOMETIMES = 3 };
/* ompt_scope_endpoint_t */
enum { SCOPE_BEGIN = 1, SCOPE_END = 2 };
/* ompt_parallel_flag_t */
#define PARALLEL_LEAGUE 0x40000000
/* ompt_task_flag_t */
#define TASK_IMPLICIT 0x2
#define TASK_EXPLICIT 0x4
/* ompt_task_status_t: how the task that a thread leaves stands; complete,
 * cancel and detach end its body (yield and switch suspend it). */
enum { STATUS_COMPLETE = 1, STATUS_CANCEL = 3, STATUS_DETACH = 4 };
/* ompt_sync_region_t */
enum {
    SYNC_BARRIER = 1,          /* deprecated in 5.1 */
    SYNC_BARRIER_IMPLICIT = 2, /* deprecated in 5.1; all of libomp 14's implicit ones */
    SYNC_BARRIER_EXPLICIT = 3,
    SYNC_BARRIER_IMPLEMENTATION = 4,
    SYNC_TASKWAIT = 5,
    SYNC_BARRIER_IMPLICIT_WORKSHARE = 8,
    SYNC_BARRIER_IMPLICIT_PARALLEL = 9
};
/* ompt_work_t (10 to 13: OpenMP 5.2, the loop's schedule) */
enum {
    WORK_LOOP = 1,
    WORK_SECTIONS = 2,
    WORK_LOOP_STATIC = 10,
    WORK_LOOP_DYNAMIC = 11,
    WORK_LOOP_GUIDED = 12,
    WORK_LOOP_OTHER = 13
};
/* ompt_mutex_t */
enum {
    MUTEX_LOCK = 1,
    MUTEX_TEST_LOCK = 2,
    MUTEX_CRITICAL = 5,
    MUTEX_ATOMIC = 6,
    MUTEX_ORDERED = 7
};

/* libomp's schedule kinds (enum sched_type of kmp.h), as passed to
 * __kmpc_dispatch_init_*: 32-47 plain, +32 ordered, +128 without chunk
 * merging; bits 29 and 30 are the monotonic modifiers. */
enum {
    KMP_SCH_LOWER = 32,
    KMP_SCH_DYNAMIC_CHUNKED = 35,
    KMP_SCH_GUIDED_CHUNKED = 36,
    KMP_SCH_RUNTIME = 37,
    KMP_SCH_AUTO = 38,
    KMP_SCH_GUIDED_ITERATIVE = 42,
    KMP_SCH_GUIDED_ANALYTICAL = 43,
    KMP_SCH_GUIDED_SIMD = 46,
    KMP_SCH_RUNTIME_SIMD = 47,
    KMP_ORD_LOWER = 64,
    KMP_ORD_UPPER = 72,
    KMP_NM_LOWER = 160
};
#define KMP_SCH_MODIFIERS ((1 << 29) | (1 << 30))


/* === teams ===
 * A team forked while measuring, in a slot of a static pool: its threads
 * read it from the task's parallel data. The forking thread holds it from
 * the fork to the end of the parallel region, and each thread while it
 * waits at the barrier that ends it; the last to let go frees it. */

struct team {
    int refs;
    /* Threads arrived at the barrier that ends the region (a futex). */
    uint32_t arrived;
    /* The team's size, as its threads see it. */
    uint32_t size;
    int traced;
    uint64_t id;
    /* The fork's code address, and its regions. */
    const void *ra;
    uint32_t body, barrier;
};

#define TEAMS 256
static struct team pool[TEAMS];
static unsigned pool_next;

static struct team *team_take(void) {
    unsigned start = __atomic_fetch_add(&pool_next, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < TEAMS; i++) {
        struct team *t = &pool[(start + i) % TEAMS];
        int free_ = 0;
        if (__atomic_compare_exchange_n(&t->refs, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return t;
    }
    return NULL;
}

static void team_release(struct team *t) {
    __atomic_sub_fetch(&t->refs, 1, __ATOMIC_RELEASE);
}

/* The measured team of parallel data `pd`, if it is one. */
static struct team *team_of(const ompt_data_t *pd) {
    if (!pd)
        return NULL;
    uintptr_t p = (uintptr_t)pd->ptr, lo = (uintptr_t)pool;
    if (p < lo || p >= lo + sizeof pool || (p - lo) % sizeof(struct team))
        return NULL;
    return (struct team *)pd->ptr;
}

/* === threads ===
 * The implicit tasks a thread is in, innermost last (nested parallel
 * regions); [0] is the thread's initial task, outside any team. Beyond
 * DEPTH levels nothing is recorded. */

#define DEPTH 8
#define SYNCS 16
#define HELD 8

struct task {
    /* The team (null if not measured) and what the thread keeps of it:
     * the team may be gone before the thread's last callback of it. */
    struct team *team;
    uint64_t id;
    uint32_t size;
    int traced;
    const void *ra;
    uint32_t barrier;
    /* The body's enter result, 0 once left. */
    int body;
    /* Worksharing constructs begun in the team (numbers its loops alike on
     * every thread), and the current one: open, its enter result, id,
     * schedule, whether its chunks are known (from the entry points) and
     * its first iteration and step, its size (sections), and the next
     * iteration of an ordered loop. */
    uint64_t constructs;
    int open, in, sched, known;
    uint64_t loop, start, count, ord;
    int64_t incr;
};

/* A loop that an entry point wrapper is starting on this thread: its
 * caller, schedule, whether its chunks are dispatched (then its first
 * iteration and step). */
struct pending {
    int set;
    int sched;
    int dispatch;
    const void *ra;
    uint64_t lb;
    int64_t st;
};

struct thread {
    int depth;
    struct task tasks[DEPTH + 1];
    /* Open sync regions: the enter result (0 if not recorded), whether a
     * barrier, and the task depth they began in (-1 once closed). */
    int syncs;
    struct {
        int in, barrier, depth;
    } sync[SYNCS];
    /* A mutex being acquired: enter result, kind, wait id, code address. */
    int acquiring, acq_in, acq_kind;
    ompt_wait_id_t acq_wait;
    const void *acq_ra;
    /* A release recorded before the runtime's own (MUTEX_CRITICAL,
     * MUTEX_ORDERED, or 0), whose callback is then not recorded again. */
    int released_early;
    /* Critical sections and atomic locks held: wait id and address. */
    int nheld;
    struct {
        ompt_wait_id_t wait;
        const void *ra;
    } held[HELD];
    struct pending pending;
};
/* The calling thread's state, on the heap (omp.h): too large for the
 * library's static TLS. A thread that finds no memory shares the sink,
 * and what it records may be wrong. */
static __thread void *me_block;
static struct thread me_sink;

static struct thread *thread_state(void) {
    void *t = me_block;
    if (__builtin_expect(t == NULL, 0))
        t = pxl_omp_thread_block(&me_block, sizeof(struct thread), &me_sink);
    return t;
}
#define me (*thread_state())

/* This thread's current implicit task, or null beyond DEPTH. */
static struct task *current(void) {
    return me.depth >= 0 && me.depth <= DEPTH ? &me.tasks[me.depth] : NULL;
}

/* The code address whose function names the constructs of task `t`. */
static const void *context(const struct task *t) {
    return t && t->team ? t->ra : NULL;
}

/* Whether a construct met now in task `t` is recorded: measuring, not
 * inside another wrapper, and in a measured team or outside any. */
static int wanted(const struct task *t) {
    return t && (t->team || t == &me.tasks[0]) && !pxl_busy && parallax_pl_active();
}

/* === the inquiry functions === */

static ompt_get_parallel_info_t get_parallel_info;
static ompt_get_task_info_t get_task_info;

/* Whether a barrier of kind `kind` that a thread of a team begins is the
 * one that ends the parallel region: OpenMP 5.1 says so; libomp 14 calls
 * every implicit barrier ompt_sync_region_barrier_implicit, but its
 * implicit task has left the region's body then (the task's exit frame is
 * cleared), which it has not at any barrier inside the body. */
static int ends_parallel(int kind) {
    if (kind == SYNC_BARRIER_IMPLICIT_PARALLEL)
        return 1;
    if ((kind != SYNC_BARRIER && kind != SYNC_BARRIER_IMPLICIT) || !get_task_info)
        return 0;
    int flags = 0, thread = 0;
    ompt_data_t *task = NULL, *parallel = NULL;
    ompt_frame_t *frame = NULL;
    if (get_task_info(0, &flags, &task, &frame, &parallel, &thread) != 2 || !frame)
        return 0;
    return (flags & TASK_IMPLICIT) && frame->exit_frame.ptr == NULL;
}

/* === the barrier that ends a parallel region === */

static long futex(uint32_t *word, int op, uint32_t value) {
    return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

/* This thread arrives at the end of team `t` and waits for the others. */
static void team_barrier(struct team *t) {
    uint32_t size = __atomic_load_n(&t->size, __ATOMIC_RELAXED);
    if (size <= 1)
        return;
    uint32_t a = __atomic_add_fetch(&t->arrived, 1, __ATOMIC_ACQ_REL);
    uint32_t target = ((a - 1) / size + 1) * size;
    if (a == target) {
        futex(&t->arrived, FUTEX_WAKE_PRIVATE, INT_MAX);
        return;
    }
    for (unsigned spin = 0;; spin++) {
        uint32_t now = __atomic_load_n(&t->arrived, __ATOMIC_ACQUIRE);
        if ((int32_t)(now - target) >= 0)
            return;
        if (spin < 1024) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        futex(&t->arrived, FUTEX_WAIT_PRIVATE, now);
    }
}

/* === the callbacks === */

static void loop_close(struct task *t);

static void on_parallel_begin(ompt_data_t *encountering, const ompt_frame_t *frame,
                              ompt_data_t *pd, unsigned requested, int flags, const void *ra) {
    (void)encountering;
    (void)frame;
    pd->ptr = NULL;
    struct task *enc = current();
    if ((flags & PARALLEL_LEAGUE) || !wanted(enc))
        return;
    struct team *t = team_take();
    if (!t)
        return;
    int was = pxl_busy;
    pxl_busy = 1;
    t->id = pxl_omp_new_team();
    t->ra = ra;
    t->size = 0;
    t->arrived = 0;
    const void *ctx = context(enc);
    uint32_t fork = pxl_omp_site("omp fork", PXL_FORK, ra, ctx);
    t->body = pxl_omp_site("omp parallel", PXL_USER, ra, ctx);
    t->barrier = pxl_omp_site("omp implicit barrier", PXL_BARRIER, ra, ctx);
    int in = fork ? parallax_pl_enter(fork) : 0;
    t->traced = in & PXL_TRACED;
    if (t->traced) {
        parallax_pl_event(PXL_EV_FORK, t->id, requested, 0, 0, 0);
        parallax_pl_event(PXL_EV_ADVANCE, t->id, 1, 0, 0, 0);
    }
    if (in) {
        parallax_pl_leave();
        pd->ptr = t;
    } else {
        /* The fork is not recorded (this thread records no more: it is
         * past its end, in exit handlers), nor is its team. */
        team_release(t);
    }
    pxl_busy = was;
}

static void on_parallel_end(ompt_data_t *pd, ompt_data_t *encountering, int flags, const void *ra) {
    (void)encountering;
    (void)flags;
    (void)ra;
    struct team *t = team_of(pd);
    if (!t)
        return;
    pd->ptr = NULL;
    /* The encountering thread goes on: the Join that trace formats pair
     * with the fork. */
    if (t->traced) {
        int was = pxl_busy;
        pxl_busy = 1;
        parallax_pl_event(PXL_EV_JOIN, t->id, 0, 0, 0, 0);
        pxl_busy = was;
    }
    team_release(t);
}

/* Closes the sync regions that task level `depth` left open (a barrier
 * whose end the runtime reports after the task's). */
static void syncs_close(int depth) {
    for (int i = (me.syncs < SYNCS ? me.syncs : SYNCS) - 1; i >= 0; i--) {
        if (me.sync[i].depth < 0)
            continue;
        if (me.sync[i].depth != depth)
            break;
        struct task *t = current();
        if (me.sync[i].in) {
            if (me.sync[i].barrier && (me.sync[i].in & PXL_TRACED) && t && t->team)
                parallax_pl_event(PXL_EV_COLL_END, PXL_OP_BARRIER, t->id, PXL_NO_ROOT, 0, t->size);
            parallax_pl_leave();
        }
        me.sync[i].in = 0;
        me.sync[i].depth = -1;
    }
}

static void on_implicit_task(int endpoint, ompt_data_t *pd, ompt_data_t *task, unsigned n,
                             unsigned index, int flags) {
    (void)task;
    (void)n;
    if (!(flags & TASK_IMPLICIT))
        return;
    int was = pxl_busy;
    if (endpoint == SCOPE_BEGIN) {
        struct team *tm = team_of(pd);
        int size = 0;
        ompt_data_t *parallel = NULL;
        if (tm && get_parallel_info && get_parallel_info(0, &parallel, &size) >= 1 && size > 0)
            __atomic_store_n(&tm->size, (uint32_t)size, __ATOMIC_RELAXED);
        me.depth++;
        struct task *t = current();
        if (!t)
            return;
        memset(t, 0, sizeof *t);
        if (!tm || size <= 0)
            return;
        t->team = tm;
        t->id = tm->id;
        t->size = (uint32_t)size;
        t->traced = tm->traced;
        t->ra = tm->ra;
        t->barrier = tm->barrier;
        pxl_busy = 1;
        pxl_omp_thread((uint32_t)index);
        if (index != 0 && t->traced)
            parallax_pl_event(PXL_EV_AWAIT_DONE, t->id, 1, 0, 0, 0);
        t->body = tm->body ? parallax_pl_enter(tm->body) : 0;
        pxl_busy = was;
    } else if (endpoint == SCOPE_END) {
        if (me.depth <= 0)
            return;
        pxl_busy = 1;
        syncs_close(me.depth);
        struct task *t = current();
        if (t) {
            loop_close(t);
            if (t->body)
                parallax_pl_leave();
            t->body = 0;
            t->team = NULL;
        }
        me.depth--;
        pxl_busy = was;
    }
}

/* Task `t` arrives at the barrier that ends team `tm`: its body ends, then
 * the barrier, once the whole team is there. */
static void parallel_barrier(struct team *tm, struct task *t) {
    int mine = t && t->team == tm, bin = 0;
    if (mine) {
        loop_close(t);
        if (t->body)
            parallax_pl_leave();
        t->body = 0;
        bin = t->barrier ? parallax_pl_enter(t->barrier) : 0;
        if (bin & PXL_TRACED)
            parallax_pl_event(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    }
    __atomic_add_fetch(&tm->refs, 1, __ATOMIC_ACQUIRE);
    team_barrier(tm);
    team_release(tm);
    if (bin) {
        if (bin & PXL_TRACED)
            parallax_pl_event(PXL_EV_COLL_END, PXL_OP_BARRIER, t->id, PXL_NO_ROOT, 0, t->size);
        parallax_pl_leave();
    }
}

static void on_sync_region(int kind, int endpoint, ompt_data_t *pd, ompt_data_t *task, const void *ra) {
    (void)task;
    int was = pxl_busy;
    if (endpoint == SCOPE_BEGIN) {
        struct task *t = current();
        int barrier = kind == SYNC_BARRIER || kind == SYNC_BARRIER_IMPLICIT ||
                      kind == SYNC_BARRIER_EXPLICIT || kind == SYNC_BARRIER_IMPLEMENTATION ||
                      kind == SYNC_BARRIER_IMPLICIT_WORKSHARE || kind == SYNC_BARRIER_IMPLICIT_PARALLEL;
        int in = 0, want = wanted(t);
        struct team *tm = barrier ? team_of(pd) : NULL;
        pxl_busy = 1;
        if (tm && get_parallel_info && ends_parallel(kind)) {
            parallel_barrier(tm, t);
        } else if ((barrier || kind == SYNC_TASKWAIT) && want) {
            const char *what = kind == SYNC_TASKWAIT       ? "omp taskwait"
                               : kind == SYNC_BARRIER_EXPLICIT ? "omp barrier"
                                                              : "omp implicit barrier";
            /* A worker's barrier at the end of a region not told apart
             * comes without an address: it is the fork's. */
            const void *site = ra ? ra : t->ra;
            uint32_t id = pxl_omp_site(what, barrier ? PXL_BARRIER : PXL_JOIN, site, context(t));
            in = id ? parallax_pl_enter(id) : 0;
            if (barrier && (in & PXL_TRACED) && t->team)
                parallax_pl_event(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
        }
        if (me.syncs < SYNCS) {
            me.sync[me.syncs].in = in;
            me.sync[me.syncs].barrier = barrier;
            me.sync[me.syncs].depth = me.depth;
        }
        me.syncs++;
        pxl_busy = was;
    } else if (endpoint == SCOPE_END) {
        if (me.syncs <= 0)
            return;
        me.syncs--;
        if (me.syncs >= SYNCS || me.sync[me.syncs].depth < 0 || !me.sync[me.syncs].in)
            return;
        struct task *t = current();
        int in = me.sync[me.syncs].in;
        pxl_busy = 1;
        if (me.sync[me.syncs].barrier && (in & PXL_TRACED) && t && t->team)
            parallax_pl_event(PXL_EV_COLL_END, PXL_OP_BARRIER, t->id, PXL_NO_ROOT, 0, t->size);
        parallax_pl_leave();
        pxl_busy = was;
    }
}

/* --- worksharing --- */


/* Task `t`'s current worksharing construct ends. */
static void loop_close(struct task *t) {
    if (!t->open)
        return;
    if ((t->in & PXL_TRACED) && pxl_omp_self_scheduled(t->sched))
        parallax_pl_event(PXL_EV_ITERATION, t->loop, PXL_NO_ITERATION, 0, 0, 0);
    if (t->in)
        parallax_pl_leave();
    t->open = 0;
    t->in = 0;
}

static void on_work(int wstype, int endpoint, ompt_data_t *pd, ompt_data_t *task, uint64_t count,
                    const void *ra) {
    (void)pd;
    (void)task;
    struct pending *p = &me.pending;
    int sched;
    switch (wstype) {
    /* Not started through clang's entry points (a program of gcc on
     * libomp, distribute): the schedule is not known. */
    case WORK_LOOP: sched = p->set ? p->sched : SCHED_UNKNOWN; break;
    case WORK_LOOP_STATIC: sched = SCHED_STATIC; break;
    case WORK_LOOP_DYNAMIC: sched = SCHED_DYNAMIC; break;
    case WORK_LOOP_GUIDED: sched = SCHED_GUIDED; break;
    case WORK_LOOP_OTHER: sched = p->set ? p->sched : SCHED_UNKNOWN; break;
    case WORK_SECTIONS: sched = SCHED_SECTIONS; break;
    default: return;
    }
    struct task *t = current();
    if (!t)
        return;
    int was = pxl_busy;
    if (endpoint == SCOPE_BEGIN) {
        pxl_busy = 1;
        loop_close(t);
        pxl_busy = was;
        if (!wanted(t))
            return;
        pxl_busy = 1;
        t->constructs++;
        t->loop = pxl_omp_loop_id(t->team ? t->id : 0, t->constructs);
        t->sched = sched;
        t->open = 1;
        t->ord = 0;
        t->count = count;
        t->known = 0;
        if (p->set) {
            ra = p->ra;
            t->known = p->dispatch;
            t->start = p->lb;
            t->incr = p->st ? p->st : 1;
        }
        uint32_t id = pxl_omp_site(pxl_omp_loop_name(sched), PXL_LOOP, ra, context(t));
        t->in = id ? parallax_pl_enter(id) : 0;
        pxl_busy = was;
    } else if (endpoint == SCOPE_END) {
        pxl_busy = 1;
        loop_close(t);
        pxl_busy = was;
    }
}

/* The chunk from iteration `first` (the loop's own numbering) was handed
 * to this thread. */
static void loop_chunk(uint64_t first) {
    struct task *t = current();
    if (!t || !t->open || !t->known)
        return;
    uint64_t index = t->incr > 0 ? (first - t->start) / (uint64_t)t->incr
                                 : (t->start - first) / (0ull - (uint64_t)t->incr);
    t->ord = index;
    if ((t->in & PXL_TRACED) && pxl_omp_self_scheduled(t->sched)) {
        int was = pxl_busy;
        pxl_busy = 1;
        parallax_pl_event(PXL_EV_ITERATION, t->loop, index, 0, 0, 0);
        pxl_busy = was;
    }
}

/* --- mutual exclusion --- */

static void acquire_end(void) {
    if (me.acquiring && me.acq_in)
        parallax_pl_leave();
    me.acquiring = 0;
    me.acq_in = 0;
}

static void on_mutex_acquire(int kind, unsigned hint, unsigned impl, ompt_wait_id_t wait, const void *ra) {
    (void)hint;
    (void)impl;
    const char *what;
    switch (kind) {
    case MUTEX_LOCK: what = "omp_set_lock"; break;
    case MUTEX_CRITICAL: what = "omp critical"; break;
    case MUTEX_ATOMIC: what = "omp atomic"; break;
    case MUTEX_ORDERED: what = "omp ordered"; break;
    default: return;
    }
    int was = pxl_busy;
    pxl_busy = 1;
    acquire_end();
    pxl_busy = was;
    struct task *t = current();
    /* A lock taken in an omp lock function's wrapper (gomp.c) is its. */
    if (!wanted(t))
        return;
    pxl_busy = 1;
    uint32_t id = pxl_omp_site(what, kind == MUTEX_ORDERED ? PXL_AWAIT : PXL_LOCK, ra, context(t));
    int in = id ? parallax_pl_enter(id) : 0;
    if (kind != MUTEX_ORDERED && (in & PXL_TRACED))
        parallax_pl_event(PXL_EV_LOCK_REQUEST, wait, 0, 0, 0, 0);
    me.acquiring = 1;
    me.acq_in = in;
    me.acq_kind = kind;
    me.acq_wait = wait;
    me.acq_ra = ra;
    pxl_busy = was;
}

static void on_mutex_acquired(int kind, ompt_wait_id_t wait, const void *ra) {
    int was = pxl_busy;
    struct task *t = current();
    if (kind == MUTEX_TEST_LOCK) {
        /* Only a successful test is reported: a region of its own. */
        if (!wanted(t))
            return;
        pxl_busy = 1;
        uint32_t id = pxl_omp_site("omp_test_lock", PXL_LOCK, ra, context(t));
        int in = id ? parallax_pl_enter(id) : 0;
        if (in & PXL_TRACED) {
            parallax_pl_event(PXL_EV_LOCK_REQUEST, wait, 0, 0, 0, 0);
            parallax_pl_event(PXL_EV_LOCK_ACQUIRED, wait, 0, 0, 0, 0);
        }
        if (in)
            parallax_pl_leave();
        pxl_busy = was;
        return;
    }
    if (!me.acquiring || me.acq_kind != kind || me.acq_wait != wait)
        return;
    pxl_busy = 1;
    int in = me.acq_in;
    if (kind == MUTEX_ORDERED) {
        /* Iteration 0 waits for nothing. */
        if ((in & PXL_TRACED) && t && t->open && t->ord > 0)
            parallax_pl_event(PXL_EV_AWAIT_DONE, t->loop, t->ord, 0, 0, 0);
    } else if (in & PXL_TRACED) {
        parallax_pl_event(PXL_EV_LOCK_ACQUIRED, wait, 0, 0, 0, 0);
    }
    if ((kind == MUTEX_CRITICAL || kind == MUTEX_ATOMIC) && me.nheld < HELD) {
        me.held[me.nheld].wait = wait;
        me.held[me.nheld].ra = me.acq_ra;
        me.nheld++;
    }
    acquire_end();
    pxl_busy = was;
}

static void release_record(int kind, ompt_wait_id_t wait, const void *ra);

/* libomp reports a release once it is done: the next holder may already
 * have recorded its acquisition, and the measured order would pair it with
 * an earlier release. The ends of critical sections and ordered regions
 * are therefore recorded by their entry points' wrappers (below), before
 * the runtime releases. */
static void on_mutex_released(int kind, ompt_wait_id_t wait, const void *ra) {
    if (me.released_early && me.released_early == kind)
        return;
    release_record(kind, wait, ra);
}

static void release_record(int kind, ompt_wait_id_t wait, const void *ra) {
    const char *what;
    int rkind = PXL_UNLOCK;
    switch (kind) {
    case MUTEX_LOCK:
    case MUTEX_TEST_LOCK: what = "omp_unset_lock"; break;
    case MUTEX_CRITICAL: what = "omp critical end"; break;
    case MUTEX_ATOMIC: what = "omp atomic end"; break;
    case MUTEX_ORDERED:
        what = "omp ordered end";
        rkind = PXL_ADVANCE;
        break;
    default: return;
    }
    if (kind == MUTEX_CRITICAL || kind == MUTEX_ATOMIC) {
        for (int i = me.nheld - 1; i >= 0; i--) {
            if (me.held[i].wait == wait) {
                ra = me.held[i].ra;
                me.held[i] = me.held[me.nheld - 1];
                me.nheld--;
                break;
            }
        }
    }
    struct task *t = current();
    if (kind == MUTEX_ORDERED && t && t->open)
        t->ord++;
    if (!wanted(t))
        return;
    int was = pxl_busy;
    pxl_busy = 1;
    uint32_t id = pxl_omp_site(what, rkind, ra, context(t));
    int in = id ? parallax_pl_enter(id) : 0;
    if (in & PXL_TRACED) {
        if (kind == MUTEX_ORDERED) {
            if (t->open)
                parallax_pl_event(PXL_EV_ADVANCE, t->loop, t->ord, 0, 0, 0);
        } else {
            parallax_pl_event(PXL_EV_LOCK_RELEASE, wait, 0, 0, 0, 0);
        }
    }
    if (in)
        parallax_pl_leave();
    pxl_busy = was;
}

/* === explicit tasks ===
 * A task's data holds its region (tagged, so that a task the tool did not
 * see is left alone) and whether the thread running it entered it; the
 * region is entered when a thread switches to the task and left when its
 * body ends. A task suspended in a taskwait or barrier stays open while
 * the tasks run there nest inside it. */
#define TASK_TAG (0xA7ull << 56)
#define TASK_ENTERED (1ull << 48)

static void on_task_create(ompt_data_t *encountering, const ompt_frame_t *frame,
                           ompt_data_t *task, int flags, int deps, const void *ra) {
    (void)encountering;
    (void)frame;
    (void)deps;
    task->value = 0;
    if (!(flags & TASK_EXPLICIT))
        return;
    struct task *t = current();
    if (!wanted(t))
        return;
    int was = pxl_busy;
    pxl_busy = 1;
    uint32_t id = pxl_omp_site("omp task", PXL_USER, ra, context(t));
    pxl_busy = was;
    if (id)
        task->value = TASK_TAG | id;
}

static int ours(const ompt_data_t *task) {
    return task && (task->value & (0xffull << 56)) == TASK_TAG;
}

static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next) {
    int was = pxl_busy;
    pxl_busy = 1;
    int ended = status == STATUS_COMPLETE || status == STATUS_CANCEL || status == STATUS_DETACH;
    if (ended && ours(prior) && (prior->value & TASK_ENTERED)) {
        parallax_pl_leave();
        prior->value &= ~TASK_ENTERED;
    }
    if (ours(next) && !(next->value & TASK_ENTERED) &&
        parallax_pl_enter((uint32_t)(next->value & 0xffffffffu)))
        next->value |= TASK_ENTERED;
    pxl_busy = was;
}

/* === starting the tool === */

static int initialize(ompt_lookup_t lookup, int initial_device, ompt_data_t *tool_data) {
    (void)initial_device;
    (void)tool_data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
    get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    if (!set || set(CB_PARALLEL_BEGIN, (ompt_fn_t)on_parallel_begin) < SET_SOMETIMES ||
        set(CB_IMPLICIT_TASK, (ompt_fn_t)on_implicit_task) < SET_SOMETIMES) {
        if (set) {
            set(CB_PARALLEL_BEGIN, NULL);
            set(CB_IMPLICIT_TASK, NULL);
        }
        __atomic_and_fetch(&pxl_omp_front, ~PXL_OMP_OMPT, __ATOMIC_RELAXED);
        return 0;
    }
    set(CB_PARALLEL_END, (ompt_fn_t)on_parallel_end);
    set(CB_TASK_CREATE, (ompt_fn_t)on_task_create);
    set(CB_TASK_SCHEDULE, (ompt_fn_t)on_task_schedule);
    set(CB_SYNC_REGION, (ompt_fn_t)on_sync_region);
    set(CB_WORK, (ompt_fn_t)on_work);
    set(CB_MUTEX_ACQUIRE, (ompt_fn_t)on_mutex_acquire);
    set(CB_MUTEX_ACQUIRED, (ompt_fn_t)on_mutex_acquired);
    set(CB_MUTEX_RELEASED, (ompt_fn_t)on_mutex_released);
    return 1;
}

static void finalize(ompt_data_t *tool_data) {
    (void)tool_data;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version) {
    (void)omp_version;
    (void)runtime_version;
    static ompt_start_tool_result_t tool = {initialize, finalize, {0}};
    const char *others = getenv("OMP_TOOL_LIBRARIES");
    if (others && others[0])
        return NULL;
    /* A program of gcc on libomp whose constructs the libgomp wrappers
     * record already. */
    int front = __atomic_fetch_or(&pxl_omp_front, PXL_OMP_OMPT, __ATOMIC_RELAXED);
    if (front & PXL_OMP_GOMP) {
        __atomic_and_fetch(&pxl_omp_front, ~PXL_OMP_OMPT, __ATOMIC_RELAXED);
        return NULL;
    }
    return &tool;
}

/* === libomp's entry points for loops ===
 * Wrapped only to learn a loop's schedule and chunks; the runtime's work
 * callback, made inside the call, takes them from `me.pending`. */

#define REAL(f) pxl_ompt_##f
#define DECLARE(ret, f, args) static ret(*REAL(f)) args
#define GET(f)                                                                       \
    (__atomic_load_n(&REAL(f), __ATOMIC_RELAXED)                                     \
         ? REAL(f)                                                                   \
         : (__atomic_store_n(&REAL(f), (__typeof__(REAL(f)))pxl_omp_lookup(#f, RA), \
                             __ATOMIC_RELAXED),                                      \
            REAL(f)))
#define RA __builtin_return_address(0)

static int ompt_on(void) {
    return __atomic_load_n(&pxl_omp_front, __ATOMIC_RELAXED) & PXL_OMP_OMPT;
}

DECLARE(void, omp_get_schedule, (int *, int *));

/* The schedule that libomp's `kind` gives. */
static int kmp_schedule(int32_t kind) {
    int k = kind & ~KMP_SCH_MODIFIERS;
    if (k >= KMP_NM_LOWER)
        k -= KMP_NM_LOWER - KMP_SCH_LOWER;
    if (k >= KMP_ORD_LOWER && k <= KMP_ORD_UPPER)
        k -= KMP_ORD_LOWER - KMP_SCH_LOWER;
    if (k == KMP_SCH_RUNTIME || k == KMP_SCH_RUNTIME_SIMD) {
        /* omp_sched_t: 1 static, 2 dynamic, 3 guided, 4 auto; monotonic
         * in the top bit. */
        int s = 1, chunk = 0;
        GET(omp_get_schedule)(&s, &chunk);
        s &= 0x7fffffff;
        return s == 2 ? SCHED_DYNAMIC : s == 3 || s == 4 ? SCHED_GUIDED : SCHED_STATIC;
    }
    switch (k) {
    case KMP_SCH_DYNAMIC_CHUNKED: return SCHED_DYNAMIC;
    /* libomp's auto is its guided schedule (kmp_sch_guided_analytical). */
    case KMP_SCH_GUIDED_CHUNKED:
    case KMP_SCH_AUTO:
    case KMP_SCH_GUIDED_ITERATIVE:
    case KMP_SCH_GUIDED_ANALYTICAL:
    case KMP_SCH_GUIDED_SIMD: return SCHED_GUIDED;
    default: return SCHED_STATIC;
    }
}

#define DISPATCH_INIT(f, T, S)                                                     \
    DECLARE(void, f, (void *, int32_t, int32_t, T, T, S, S));                      \
    void f(void *loc, int32_t gtid, int32_t kind, T lb, T ub, S st, S chunk) {     \
        GET(f);                                                                    \
        if (!ompt_on())                                                            \
            return REAL(f)(loc, gtid, kind, lb, ub, st, chunk);                    \
        struct pending *p = &me.pending;                                           \
        p->sched = kmp_schedule(kind);                                             \
        p->dispatch = 1;                                                           \
        p->ra = RA;                                                                \
        p->lb = (uint64_t)(int64_t)lb;                                             \
        p->st = (int64_t)st;                                                       \
        p->set = 1;                                                                \
        REAL(f)(loc, gtid, kind, lb, ub, st, chunk);                               \
        p->set = 0;                                                                \
    }
/* The end of a critical section (the innermost held) and of an ordered
 * region, recorded before the runtime releases them. */
DECLARE(void, __kmpc_end_critical, (void *, int32_t, void *));
void __kmpc_end_critical(void *loc, int32_t gtid, void *crit) {
    GET(__kmpc_end_critical);
    int early = ompt_on() && me.nheld > 0;
    if (early) {
        release_record(MUTEX_CRITICAL, me.held[me.nheld - 1].wait, NULL);
        me.released_early = MUTEX_CRITICAL;
    }
    REAL(__kmpc_end_critical)(loc, gtid, crit);
    if (early)
        me.released_early = 0;
}

DECLARE(void, __kmpc_end_ordered, (void *, int32_t));
void __kmpc_end_ordered(void *loc, int32_t gtid) {
    GET(__kmpc_end_ordered);
    int early = ompt_on();
    if (early) {
        release_record(MUTEX_ORDERED, 0, RA);
        me.released_early = MUTEX_ORDERED;
    }
    REAL(__kmpc_end_ordered)(loc, gtid);
    if (early)
        me.released_early = 0;
}

DISPATCH_INIT(__kmpc_dispatch_init_4, int32_t, int32_t)
DISPATCH_INIT(__kmpc_dispatch_init_4u, uint32_t, int32_t)
DISPATCH_INIT(__kmpc_dispatch_init_8, int64_t, int64_t)
DISPATCH_INIT(__kmpc_dispatch_init_8u, uint64_t, int64_t)

#define DISPATCH_NEXT(f, T, S)                                                     \
    DECLARE(int, f, (void *, int32_t, int32_t *, T *, T *, S *));                  \
    int f(void *loc, int32_t gtid, int32_t *last, T *lb, T *ub, S *st) {           \
        GET(f);                                                                    \
        int r = REAL(f)(loc, gtid, last, lb, ub, st);                              \
        if (r && ompt_on())                                                        \
            loop_chunk((uint64_t)(int64_t)*lb);                                    \
        return r;                                                                  \
    }
DISPATCH_NEXT(__kmpc_dispatch_next_4, int32_t, int32_t)
DISPATCH_NEXT(__kmpc_dispatch_next_4u, uint32_t, int32_t)
DISPATCH_NEXT(__kmpc_dispatch_next_8, int64_t, int64_t)
DISPATCH_NEXT(__kmpc_dispatch_next_8u, uint64_t, int64_t)

/* Static loops, and sections, which clang deals out as a static loop of
 * int: a thread's sections are one chunk. */
static void static_chunk(int64_t lb, int64_t ub) {
    struct task *t = current();
    if (t && t->open && t->sched == SCHED_SECTIONS && (t->in & PXL_TRACED) && lb <= ub && lb >= 0 &&
        (uint64_t)lb < t->count) {
        int was = pxl_busy;
        pxl_busy = 1;
        parallax_pl_event(PXL_EV_ITERATION, t->loop, (uint64_t)lb, 0, 0, 0);
        pxl_busy = was;
    }
}

#define FOR_STATIC_INIT(f, T, S)                                                           \
    DECLARE(void, f, (void *, int32_t, int32_t, int32_t *, T *, T *, S *, S, S));          \
    void f(void *loc, int32_t gtid, int32_t kind, int32_t *last, T *lb, T *ub, S *st,      \
           S incr, S chunk) {                                                              \
        GET(f);                                                                            \
        if (!ompt_on())                                                                    \
            return REAL(f)(loc, gtid, kind, last, lb, ub, st, incr, chunk);                \
        struct pending *p = &me.pending;                                                   \
        p->sched = SCHED_STATIC;                                                           \
        p->dispatch = 0;                                                                   \
        p->ra = RA;                                                                        \
        p->set = 1;                                                                        \
        REAL(f)(loc, gtid, kind, last, lb, ub, st, incr, chunk);                           \
        p->set = 0;                                                                        \
        static_chunk((int64_t)*lb, (int64_t)*ub);                                          \
    }
FOR_STATIC_INIT(__kmpc_for_static_init_4, int32_t, int32_t)
FOR_STATIC_INIT(__kmpc_for_static_init_4u, uint32_t, int32_t)
FOR_STATIC_INIT(__kmpc_for_static_init_8, int64_t, int64_t)
FOR_STATIC_INIT(__kmpc_for_static_init_8u, uint64_t, int64_t)
