/* The C shim of the Parallax interposition library: what the C wrappers
 * call in the Rust part (src/capi.rs), and what they share.
 *
 * The wrappers only translate: they find the real function, take the
 * arguments apart and record through these entry points. All state that is
 * not tied to a C type (regions, ids, threads, events, files) lives in Rust.
 * Nothing here may unwind: the Rust entry points abort rather than unwind
 * across the C ABI. */
#ifndef PXL_H
#define PXL_H

#include <stddef.h>
#include <stdint.h>

/* Generic operation types: the numbers of parallax_model::region::RegionKind. */
enum {
    PXL_USER = 0, PXL_FUNCTION = 1, PXL_LOOP = 2, PXL_SEND = 3, PXL_RECV = 4,
    PXL_SENDRECV = 5, PXL_WAIT = 6, PXL_COLLECTIVE = 7, PXL_BARRIER = 8,
    PXL_LOCK = 9, PXL_UNLOCK = 10, PXL_SEMWAIT = 11, PXL_SEMPOST = 12,
    PXL_ADVANCE = 13, PXL_AWAIT = 14, PXL_PUT = 15, PXL_GET = 16,
    PXL_ATOMIC = 17, PXL_WAITONVALUE = 18, PXL_RMASYNC = 19,
    PXL_THREADCREATE = 20, PXL_THREADJOIN = 21, PXL_FORK = 22, PXL_JOIN = 23,
    PXL_IO = 24, PXL_SETUP = 25, PXL_MARK = 27
};

/* Events: the extended-event codes of FORMAT.md. The fields a..e of
 * parallax_pl_event are those of the code, in FORMAT.md's order. */
enum {
    PXL_EV_SEND = 3,          /* peer, tag, comm, bytes */
    PXL_EV_RECV = 4,          /* peer, tag, comm, bytes */
    PXL_EV_ISEND = 5,         /* peer, tag, comm, bytes, request */
    PXL_EV_ISEND_DONE = 6,    /* request */
    PXL_EV_IRECV = 7,         /* request */
    PXL_EV_IRECV_DONE = 8,    /* peer, tag, comm, bytes, request */
    PXL_EV_COLL_BEGIN = 9,    /* - */
    PXL_EV_COLL_END = 10,     /* op, comm, root, sent, received */
    PXL_EV_LOCK_REQUEST = 11, /* lock */
    PXL_EV_LOCK_ACQUIRED = 12,
    PXL_EV_LOCK_RELEASE = 13,
    PXL_EV_SEM_POST = 14,     /* sem */
    PXL_EV_SEM_ACQUIRED = 15,
    PXL_EV_ADVANCE = 16,      /* var, index */
    PXL_EV_AWAIT_DONE = 17,   /* var, index */
    PXL_EV_THREAD_CREATE = 18, /* token */
    PXL_EV_THREAD_BEGIN = 19,
    PXL_EV_THREAD_END = 20,
    PXL_EV_THREAD_JOIN = 21,
    PXL_EV_FORK = 22,         /* team, size */
    PXL_EV_JOIN = 23,         /* team */
    PXL_EV_PUT = 24,          /* target, bytes, addr */
    PXL_EV_GET = 25,
    PXL_EV_ATOMIC = 26,
    PXL_EV_RMA_COMPLETE = 27, /* target (0xffffffff: all) */
    PXL_EV_VALUE_REACHED = 28, /* addr */
    PXL_EV_MARK = 30,         /* mark region, value */
    PXL_EV_ITERATION = 31     /* loop, index (PXL_NO_ITERATION: none left) */
};

/* Collective ops: parallax_model::event::CollectiveOp. */
enum {
    PXL_OP_BARRIER = 0, PXL_OP_BCAST = 1, PXL_OP_REDUCE = 2,
    PXL_OP_ALLREDUCE = 3, PXL_OP_GATHER = 4, PXL_OP_SCATTER = 5,
    PXL_OP_ALLGATHER = 6, PXL_OP_ALLTOALL = 7, PXL_OP_SCAN = 8,
    PXL_OP_REDUCE_SCATTER = 9, PXL_OP_OTHER = 10
};

#define PXL_NO_ROOT 0xffffffffu
#define PXL_ALL_TARGETS 0xffffffffu
#define PXL_NO_ITERATION UINT64_MAX

/* --- the Rust side (src/capi.rs) --- */

/* The id of region `name` of kind `kind`, registering it on first use;
 * 0 while not measuring (ask again later). */
uint32_t parallax_pl_region(const char *name, int kind);
/* Enters region `id`; nonzero if recorded (then leave it): PXL_TRACED
 * set if events are traced too (in profile mode they are not worth
 * making). */
int parallax_pl_enter(uint32_t id);
#define PXL_TRACED 2
void parallax_pl_leave(void);
void parallax_pl_event(int code, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e);
/* The same event, dated at this thread's previous record: for an event
 * known only after the call that made it returned (a non-blocking send,
 * whose message may already have arrived), dated by the call's enter. */
void parallax_pl_event_prior(int code, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e);
/* Register-preserving probes, for hot loops (x86-64): called from inline
 * assembly (`call parallax_pl_enter_preserving@PLT`, region id in edi, 0 or
 * 3 back in eax as from parallax_pl_enter; `call
 * parallax_pl_leave_preserving@PLT`) they change no general register but
 * eax and keep xmm0-15, so the compiler builds the code around them as if
 * they were not there. Code built for AVX, which may keep wider vector
 * values, must use the ordinary entry points. Regions for them come from
 * parallax_pl_region_preserving. */
uint32_t parallax_pl_region_preserving(const char *name, int kind);
void parallax_pl_enter_preserving(void);
void parallax_pl_leave_preserving(void);
/* Measures the probes' cost again now, recorded as the runtime's own work
 * (compensation uses the calibration nearest in time to each event). */
void parallax_pl_calibrate(void);
/* Group (communicator, team) `id` has these members (world ranks). */
void parallax_pl_group(uint64_t id, const uint32_t *members, size_t n);
/* A fact of this process. */
void parallax_pl_property(const char *key, const char *value);
/* A clock comparison with rank `reference` (see Def::ClockOffset). */
void parallax_pl_clock_offset(uint32_t reference, uint64_t local_ns, int64_t offset_ns, uint64_t rtt_ns);
/* CLOCK_MONOTONIC, ns. */
uint64_t parallax_pl_now_ns(void);
/* Ends measurement, writing everything (before a library that may crash
 * or kill the process). */
void parallax_pl_finish(void);
/* This process image ends without exit() (_exit, exec): writes what was
 * recorded without allocating or waiting (it may run in a signal handler);
 * nonzero if this process measured at some time. */
int parallax_pl_image_ends(void);
/* Recording on or off for the whole process (MPI_Pcontrol). */
void parallax_pl_flow(int on);
/* Nonzero if this process records (starting measurement if needed). */
int parallax_pl_active(void);
/* Which pthread calls are recorded: 0 none, 1 from the application, 2 all. */
int parallax_pl_pthread_mode(void);
/* A token for a new thread; the thread pthread_t `tid` has token `token`;
 * the token of thread `tid`, forgetting it (0 if unknown). */
uint64_t parallax_pl_thread_token(void);
void parallax_pl_thread_created(uint64_t tid, uint64_t token);
uint64_t parallax_pl_thread_joined(uint64_t tid);
/* A thread barrier at address `barrier` was made for `count` threads; its
 * group id, and in `count` its size (0 if unknown). */
void parallax_pl_barrier_init(uint64_t barrier, uint32_t count);
uint64_t parallax_pl_barrier(uint64_t barrier, uint32_t *count);

/* The region of OpenMP construct `what` ("omp barrier") of kind `kind` at
 * code address `site` (a return address in the construct), named for the
 * function there; 0 while not measuring (src/omp.rs). */
uint32_t parallax_pl_omp_region(const char *what, int kind, const void *site);
/* The same for a construct whose team was forked at code address `ctx`
 * (or null): a construct in a body that the compiler outlined under a name
 * that does not say its function (clang's `.omp_outlined.`) is named for
 * the function of `ctx`. */
uint32_t parallax_pl_omp_region_in(const char *what, int kind, const void *site, const void *ctx);

/* The calling thread is thread `num` of an OpenMP team: its location is
 * named so if it has no name yet (and the thread none of its own). */
void parallax_pl_omp_thread(uint32_t num);

/* --- shared by the C wrappers (pthread.c) --- */

/* Set while a wrapper runs on this thread: calls made from inside it
 * (an MPI library calling itself, a lock taken by the runtime) pass
 * straight through. */
extern __thread int pxl_busy __attribute__((tls_model("initial-exec")));

/* Nonzero if a pthread call from return address `ra` is recorded (see
 * parallax_pl_pthread_mode and docs/interposition.md). */
int pxl_app_caller(const void *ra);

/* The region `name` of kind `kind`, cached in a static of the call site. */
#define PXL_REGION(var, name, kind)                       \
    static uint32_t var;                                  \
    if (__builtin_expect(var == 0, 0))                    \
        var = parallax_pl_region(name, kind)

/* === entering and leaving (the MPI and SHMEM wrappers) ===
 * ENTER opens the wrapper's region; calls made while another wrapper runs
 * on this thread (the library calling itself, our own clock
 * synchronization) pass straight through. LEAVE closes it. */
#define ENTER(name, kind)                                  \
    int px_outer = !pxl_busy, px_in = 0;                   \
    if (px_outer) {                                        \
        pxl_busy = 1;                                      \
        PXL_REGION(px_id, name, kind);                     \
        px_in = parallax_pl_enter(px_id);                  \
    }

#define LEAVE()                                            \
    do {                                                   \
        if (px_in)                                         \
            parallax_pl_leave();                           \
        if (px_outer)                                      \
            pxl_busy = 0;                                  \
    } while (0)

/* Events are made only when traced (in profile mode only the regions
 * count). */
#define TR (px_in & PXL_TRACED)

/* --- the compiler hooks (hooks.c, src/cyg.rs) --- */

/* Frames deeper than this are not measured (src/cyg.rs MAX_DEPTH). */
#define PXL_MAX_DEPTH 4096

/* A thread's calls of one function (src/cyg.rs `Count`): counted while it
 * is measured (for throttling), since the first (its time), in all, and
 * recorded. */
struct pxl_count {
    uint32_t calls;
    uint32_t decoy;
    uint64_t first_ns;
    uint64_t all;
    uint64_t recorded;
};

/* A thread's shadow stack: one bit per frame, set if its entry was
 * recorded; the calls that recorded nothing since the thread's last
 * recorded one; its counts by dense function number, `len` of them (made
 * by src/cyg.rs), and its thread number. Laid out as src/cyg.rs `Shadow`. */
struct pxl_shadow {
    uint64_t depth;
    uint64_t skipped;
    struct pxl_count *counts;
    uint64_t len;
    uint64_t thread;
    /* Timing of the cost in place of calls that record nothing (src/
     * cyg.rs `pxl_hook_block`): the value of `skipped` that ends the
     * current block of such calls, and whether the hooks do their work
     * twice in it. */
    uint64_t mark;
    uint64_t twice;
    /* Set when the thread records a synchronization, where it may have
     * waited: the current block's time is not used. */
    uint64_t dirty;
    uint64_t bits[PXL_MAX_DEPTH / 64];
};

/* The second copy of a thread's not-recording work in a block timed with
 * it (`twice`): the same instructions on a shadow of its own. */
struct pxl_decoy {
    uint64_t depth;
    uint64_t skipped;
    uint64_t bits[PXL_MAX_DEPTH / 64];
};

/* The calling thread's shadow. */
struct pxl_shadow *pxl_shadow(void);

#endif
