/* POSIX threads: create and join, mutexes, condition variables, barriers,
 * read-write locks, spin locks and semaphores, each recorded as a region of
 * its generic operation type with the events that pair acquire with release
 * (lock id: the object's address) and wait with post.
 *
 * Why C: a call is recorded only when the application makes it (not when
 * the MPI library or another system library takes a lock), which needs the
 * caller's return address; and the thread trampoline must let pthread_exit
 * unwind through it. The real functions come from dlsym(RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pxl.h"

__thread int pxl_busy __attribute__((tls_model("initial-exec")));

#define REAL(f) pxl_real_##f
#define DECLARE(ret, f, args) static ret(*REAL(f)) args

DECLARE(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));
DECLARE(int, pthread_join, (pthread_t, void **));
DECLARE(int, pthread_mutex_lock, (pthread_mutex_t *));
DECLARE(int, pthread_mutex_trylock, (pthread_mutex_t *));
DECLARE(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *));
DECLARE(int, pthread_mutex_unlock, (pthread_mutex_t *));
DECLARE(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *));
DECLARE(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *));
DECLARE(int, pthread_cond_signal, (pthread_cond_t *));
DECLARE(int, pthread_cond_broadcast, (pthread_cond_t *));
DECLARE(int, pthread_barrier_init, (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned));
DECLARE(int, pthread_barrier_wait, (pthread_barrier_t *));
DECLARE(int, pthread_rwlock_rdlock, (pthread_rwlock_t *));
DECLARE(int, pthread_rwlock_wrlock, (pthread_rwlock_t *));
DECLARE(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *));
DECLARE(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *));
DECLARE(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t *, const struct timespec *));
DECLARE(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t *, const struct timespec *));
DECLARE(int, pthread_rwlock_unlock, (pthread_rwlock_t *));
DECLARE(int, pthread_spin_lock, (pthread_spinlock_t *));
DECLARE(int, pthread_spin_trylock, (pthread_spinlock_t *));
DECLARE(int, pthread_spin_unlock, (pthread_spinlock_t *));
DECLARE(int, sem_wait, (sem_t *));
DECLARE(int, sem_trywait, (sem_t *));
DECLARE(int, sem_timedwait, (sem_t *, const struct timespec *));
DECLARE(int, sem_post, (sem_t *));

static void *next(const char *name, const char *version) {
    void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
    return p ? p : dlsym(RTLD_NEXT, name);
}

#define RESOLVE(f) REAL(f) = (__typeof__(REAL(f)))next(#f, NULL)

static void resolve(void) {
    RESOLVE(pthread_create);
    RESOLVE(pthread_join);
    RESOLVE(pthread_mutex_lock);
    RESOLVE(pthread_mutex_trylock);
    RESOLVE(pthread_mutex_timedlock);
    RESOLVE(pthread_mutex_unlock);
    /* The condition variables of NPTL, not the old LinuxThreads ones that an
     * unversioned lookup may find. */
    REAL(pthread_cond_wait) = (__typeof__(REAL(pthread_cond_wait)))next("pthread_cond_wait", "GLIBC_2.3.2");
    REAL(pthread_cond_timedwait) = (__typeof__(REAL(pthread_cond_timedwait)))next("pthread_cond_timedwait", "GLIBC_2.3.2");
    REAL(pthread_cond_signal) = (__typeof__(REAL(pthread_cond_signal)))next("pthread_cond_signal", "GLIBC_2.3.2");
    REAL(pthread_cond_broadcast) = (__typeof__(REAL(pthread_cond_broadcast)))next("pthread_cond_broadcast", "GLIBC_2.3.2");
    RESOLVE(pthread_barrier_init);
    RESOLVE(pthread_barrier_wait);
    RESOLVE(pthread_rwlock_rdlock);
    RESOLVE(pthread_rwlock_wrlock);
    RESOLVE(pthread_rwlock_tryrdlock);
    RESOLVE(pthread_rwlock_trywrlock);
    RESOLVE(pthread_rwlock_timedrdlock);
    RESOLVE(pthread_rwlock_timedwrlock);
    RESOLVE(pthread_rwlock_unlock);
    RESOLVE(pthread_spin_lock);
    RESOLVE(pthread_spin_trylock);
    RESOLVE(pthread_spin_unlock);
    RESOLVE(sem_wait);
    RESOLVE(sem_trywait);
    RESOLVE(sem_timedwait);
    RESOLVE(sem_post);
}

static int resolved;

__attribute__((constructor)) static void pxl_pthread_init(void) {
    if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) {
        resolve();
        __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    }
}

#define ENSURE()                                              \
    do {                                                      \
        if (__builtin_expect(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 0)) \
            pxl_pthread_init();                               \
    } while (0)

/* === which callers count ===
 * Address ranges of the executable segments of loaded modules: those of
 * the application (the executable, its own libraries, the C++ and Fortran
 * language runtimes) and all others (system libraries such as MPI, UCX,
 * libgomp, and this library). Ranges are only ever added: readers need no
 * lock. */

#define MAX_RANGES 512
struct range {
    uintptr_t lo, hi;
    int app;
};
static struct range ranges[MAX_RANGES];
static int nranges;
static int scan_lock;
static const char *self_name;

static int is_language_runtime(const char *base) {
    return !strncmp(base, "libstdc++", 9) || !strncmp(base, "libc++", 6) ||
           !strncmp(base, "libgfortran", 11);
}

static int app_module(const char *name, int mode) {
    if (self_name && !strcmp(name, self_name))
        return 0;
    if (mode == 2)
        return 1;
    if (!name[0])
        return 1; /* the executable */
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    if (!strncmp(base, "linux-vdso", 10) || !strncmp(base, "ld-linux", 8))
        return 0;
    int sys = !strncmp(name, "/lib/", 5) || !strncmp(name, "/lib64/", 7) ||
              !strncmp(name, "/usr/lib/", 9) || !strncmp(name, "/usr/lib64/", 11) ||
              !strncmp(name, "/usr/local/lib/", 15);
    return !sys || is_language_runtime(base);
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
    int mode = *(int *)data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE), known = 0;
        for (int k = 0; k < n; k++)
            if (ranges[k].lo == lo && ranges[k].hi == hi)
                known = 1;
        if (known || n >= MAX_RANGES)
            continue;
        ranges[n].lo = lo;
        ranges[n].hi = hi;
        ranges[n].app = app_module(info->dlpi_name ? info->dlpi_name : "", mode);
        __atomic_store_n(&nranges, n + 1, __ATOMIC_RELEASE);
    }
    return 0;
}

static void scan_modules(int mode) {
    while (__atomic_exchange_n(&scan_lock, 1, __ATOMIC_ACQUIRE))
        ;
    if (!self_name) {
        Dl_info d;
        if (dladdr((void *)&scan_modules, &d) && d.dli_fname)
            self_name = d.dli_fname;
    }
    dl_iterate_phdr(add_module, &mode);
    __atomic_store_n(&scan_lock, 0, __ATOMIC_RELEASE);
}

static int lookup(uintptr_t a) {
    int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE);
    for (int k = 0; k < n; k++)
        if (a >= ranges[k].lo && a < ranges[k].hi)
            return ranges[k].app;
    return -1;
}

int pxl_app_caller(const void *ra) {
    static int mode = -1;
    int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
    if (m < 0) {
        m = parallax_pl_pthread_mode();
        __atomic_store_n(&mode, m, __ATOMIC_RELAXED);
    }
    if (m == 0)
        return 0;
    int app = lookup((uintptr_t)ra);
    if (app < 0) {
        scan_modules(m);
        app = lookup((uintptr_t)ra);
    }
    return app > 0;
}

/* A wrapper records when its caller counts and no other wrapper runs. */
#define WANTED() (!pxl_busy && pxl_app_caller(__builtin_return_address(0)))

/* === threads === */

struct start {
    void *(*fn)(void *);
    void *arg;
    uint64_t token;
};

static void thread_end(void *token) {
    pxl_busy = 1;
    parallax_pl_event(PXL_EV_THREAD_END, (uint64_t)(uintptr_t)token, 0, 0, 0, 0);
    pxl_busy = 0;
}

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    pxl_busy = 1;
    parallax_pl_event(PXL_EV_THREAD_BEGIN, s.token, 0, 0, 0, 0);
    pxl_busy = 0;
    void *r;
    /* Runs at return and at pthread_exit or cancellation. */
    pthread_cleanup_push(thread_end, (void *)(uintptr_t)s.token);
    r = s.fn(s.arg);
    pthread_cleanup_pop(1);
    return r;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    ENSURE();
    if (!WANTED())
        return REAL(pthread_create)(t, attr, fn, arg);
    pxl_busy = 1;
    PXL_REGION(id, "pthread_create", PXL_THREADCREATE);
    int in = parallax_pl_enter(id);
    struct start *s = (in & PXL_TRACED) ? malloc(sizeof *s) : NULL;
    int r;
    if (s) {
        s->fn = fn;
        s->arg = arg;
        s->token = parallax_pl_thread_token();
        parallax_pl_event(PXL_EV_THREAD_CREATE, s->token, 0, 0, 0, 0);
        uint64_t token = s->token;
        r = REAL(pthread_create)(t, attr, trampoline, s);
        if (r == 0)
            parallax_pl_thread_created((uint64_t)*t, token);
        else
            free(s);
    } else {
        r = REAL(pthread_create)(t, attr, fn, arg);
    }
    if (in)
        parallax_pl_leave();
    pxl_busy = 0;
    return r;
}

int pthread_join(pthread_t t, void **ret) {
    ENSURE();
    if (!WANTED())
        return REAL(pthread_join)(t, ret);
    pxl_busy = 1;
    PXL_REGION(id, "pthread_join", PXL_THREADJOIN);
    int in = parallax_pl_enter(id);
    int r = REAL(pthread_join)(t, ret);
    if (r == 0) {
        uint64_t token = parallax_pl_thread_joined((uint64_t)t);
        if ((in & PXL_TRACED) && token)
            parallax_pl_event(PXL_EV_THREAD_JOIN, token, 0, 0, 0, 0);
    }
    if (in)
        parallax_pl_leave();
    pxl_busy = 0;
    return r;
}

/* === locks ===
 * A lock: request, then (if it succeeded) acquired, inside a region of kind
 * lock. A try-lock records request and acquired only when it got the lock.
 * An unlock: release, inside a region of kind unlock, before unlocking. */

#define LOCK_WRAPPER(fn, type, name, extra_params, extra_args)                  \
    int fn(type *l extra_params) {                                              \
        ENSURE();                                                               \
        if (!WANTED())                                                          \
            return REAL(fn)(l extra_args);                                      \
        pxl_busy = 1;                                                           \
        PXL_REGION(id, name, PXL_LOCK);                                         \
        int in = parallax_pl_enter(id);                                         \
        if (in & PXL_TRACED)                                                    \
            parallax_pl_event(PXL_EV_LOCK_REQUEST, (uintptr_t)l, 0, 0, 0, 0);   \
        int r = REAL(fn)(l extra_args);                                         \
        if (in) {                                                               \
            if (r == 0 && (in & PXL_TRACED))                                    \
                parallax_pl_event(PXL_EV_LOCK_ACQUIRED, (uintptr_t)l, 0, 0, 0, 0); \
            parallax_pl_leave();                                                \
        }                                                                       \
        pxl_busy = 0;                                                           \
        return r;                                                               \
    }

#define TRYLOCK_WRAPPER(fn, type, name)                                         \
    int fn(type *l) {                                                           \
        ENSURE();                                                               \
        if (!WANTED())                                                          \
            return REAL(fn)(l);                                                 \
        pxl_busy = 1;                                                           \
        PXL_REGION(id, name, PXL_LOCK);                                         \
        int in = parallax_pl_enter(id);                                         \
        int r = REAL(fn)(l);                                                    \
        if (in) {                                                               \
            if (r == 0 && (in & PXL_TRACED)) {                                  \
                parallax_pl_event(PXL_EV_LOCK_REQUEST, (uintptr_t)l, 0, 0, 0, 0); \
                parallax_pl_event(PXL_EV_LOCK_ACQUIRED, (uintptr_t)l, 0, 0, 0, 0); \
            }                                                                   \
            parallax_pl_leave();                                                \
        }                                                                       \
        pxl_busy = 0;                                                           \
        return r;                                                               \
    }

#define UNLOCK_WRAPPER(fn, type, name)                                          \
    int fn(type *l) {                                                           \
        ENSURE();                                                               \
        if (!WANTED())                                                          \
            return REAL(fn)(l);                                                 \
        pxl_busy = 1;                                                           \
        PXL_REGION(id, name, PXL_UNLOCK);                                       \
        int in = parallax_pl_enter(id);                                         \
        if (in & PXL_TRACED)                                                    \
            parallax_pl_event(PXL_EV_LOCK_RELEASE, (uintptr_t)l, 0, 0, 0, 0);   \
        int r = REAL(fn)(l);                                                    \
        if (in)                                                                 \
            parallax_pl_leave();                                                \
        pxl_busy = 0;                                                           \
        return r;                                                               \
    }

#define NOTHING
#define COMMA ,

LOCK_WRAPPER(pthread_mutex_lock, pthread_mutex_t, "pthread_mutex_lock", NOTHING, NOTHING)
LOCK_WRAPPER(pthread_mutex_timedlock, pthread_mutex_t, "pthread_mutex_timedlock",
             COMMA const struct timespec *ts, COMMA ts)
TRYLOCK_WRAPPER(pthread_mutex_trylock, pthread_mutex_t, "pthread_mutex_trylock")
UNLOCK_WRAPPER(pthread_mutex_unlock, pthread_mutex_t, "pthread_mutex_unlock")
LOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_t, "pthread_rwlock_rdlock", NOTHING, NOTHING)
LOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_t, "pthread_rwlock_wrlock", NOTHING, NOTHING)
LOCK_WRAPPER(pthread_rwlock_timedrdlock, pthread_rwlock_t, "pthread_rwlock_timedrdlock",
             COMMA const struct timespec *ts, COMMA ts)
LOCK_WRAPPER(pthread_rwlock_timedwrlock, pthread_rwlock_t, "pthread_rwlock_timedwrlock",
             COMMA const struct timespec *ts, COMMA ts)
TRYLOCK_WRAPPER(pthread_rwlock_tryrdlock, pthread_rwlock_t, "pthread_rwlock_tryrdlock")
TRYLOCK_WRAPPER(pthread_rwlock_trywrlock, pthread_rwlock_t, "pthread_rwlock_trywrlock")
UNLOCK_WRAPPER(pthread_rwlock_unlock, pthread_rwlock_t, "pthread_rwlock_unlock")
/* pthread_spinlock_t is a volatile int. */
LOCK_WRAPPER(pthread_spin_lock, pthread_spinlock_t, "pthread_spin_lock", NOTHING, NOTHING)
TRYLOCK_WRAPPER(pthread_spin_trylock, pthread_spinlock_t, "pthread_spin_trylock")
UNLOCK_WRAPPER(pthread_spin_unlock, pthread_spinlock_t, "pthread_spin_unlock")

/* === condition variables ===
 * A wait releases the mutex, waits for a signal (sem-acquired on the
 * condition's id when signalled, not on a time-out) and takes the mutex
 * again; a signal or broadcast is a post on the condition's id. */

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    int r;
    uint32_t id;
    if (ts) {
        PXL_REGION(tid, "pthread_cond_timedwait", PXL_SEMWAIT);
        id = tid;
    } else {
        PXL_REGION(wid, "pthread_cond_wait", PXL_SEMWAIT);
        id = wid;
    }
    int in = parallax_pl_enter(id);
    if (in & PXL_TRACED)
        parallax_pl_event(PXL_EV_LOCK_RELEASE, (uintptr_t)m, 0, 0, 0, 0);
    r = ts ? REAL(pthread_cond_timedwait)(c, m, ts) : REAL(pthread_cond_wait)(c, m);
    if (in & PXL_TRACED) {
        if (r == 0)
            parallax_pl_event(PXL_EV_SEM_ACQUIRED, (uintptr_t)c, 0, 0, 0, 0);
        parallax_pl_event(PXL_EV_LOCK_REQUEST, (uintptr_t)m, 0, 0, 0, 0);
        parallax_pl_event(PXL_EV_LOCK_ACQUIRED, (uintptr_t)m, 0, 0, 0, 0);
    }
    if (in)
        parallax_pl_leave();
    return r;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    ENSURE();
    if (!WANTED())
        return REAL(pthread_cond_wait)(c, m);
    pxl_busy = 1;
    int r = cond_wait(c, m, NULL);
    pxl_busy = 0;
    return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    ENSURE();
    if (!WANTED())
        return REAL(pthread_cond_timedwait)(c, m, ts);
    pxl_busy = 1;
    int r = cond_wait(c, m, ts);
    pxl_busy = 0;
    return r;
}

#define POST_WRAPPER(fn, type, name, kind)                                      \
    int fn(type *c) {                                                           \
        ENSURE();                                                               \
        if (!WANTED())                                                          \
            return REAL(fn)(c);                                                 \
        pxl_busy = 1;                                                           \
        PXL_REGION(id, name, kind);                                             \
        int in = parallax_pl_enter(id);                                         \
        if (in & PXL_TRACED)                                                    \
            parallax_pl_event(PXL_EV_SEM_POST, (uintptr_t)c, 0, 0, 0, 0);       \
        int r = REAL(fn)(c);                                                    \
        if (in)                                                                 \
            parallax_pl_leave();                                                \
        pxl_busy = 0;                                                           \
        return r;                                                               \
    }

POST_WRAPPER(pthread_cond_signal, pthread_cond_t, "pthread_cond_signal", PXL_SEMPOST)
POST_WRAPPER(pthread_cond_broadcast, pthread_cond_t, "pthread_cond_broadcast", PXL_SEMPOST)
POST_WRAPPER(sem_post, sem_t, "sem_post", PXL_SEMPOST)

/* === semaphores === */

#define SEMWAIT_WRAPPER(fn, name, extra_params, extra_args)                     \
    int fn(sem_t *s extra_params) {                                             \
        ENSURE();                                                               \
        if (!WANTED())                                                          \
            return REAL(fn)(s extra_args);                                      \
        pxl_busy = 1;                                                           \
        PXL_REGION(id, name, PXL_SEMWAIT);                                      \
        int in = parallax_pl_enter(id);                                         \
        int r = REAL(fn)(s extra_args);                                         \
        if (in) {                                                               \
            if (r == 0 && (in & PXL_TRACED))                                    \
                parallax_pl_event(PXL_EV_SEM_ACQUIRED, (uintptr_t)s, 0, 0, 0, 0); \
            parallax_pl_leave();                                                \
        }                                                                       \
        pxl_busy = 0;                                                           \
        return r;                                                               \
    }

SEMWAIT_WRAPPER(sem_wait, "sem_wait", NOTHING, NOTHING)
SEMWAIT_WRAPPER(sem_trywait, "sem_trywait", NOTHING, NOTHING)
SEMWAIT_WRAPPER(sem_timedwait, "sem_timedwait", COMMA const struct timespec *ts, COMMA ts)

/* === barriers ===
 * A wait is a collective of kind barrier on the barrier's group id (new at
 * every init), with the number of threads it was made for as the
 * participants. */

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n) {
    ENSURE();
    int r = REAL(pthread_barrier_init)(b, a, n);
    if (r == 0 && !pxl_busy) {
        pxl_busy = 1;
        parallax_pl_barrier_init((uintptr_t)b, n);
        pxl_busy = 0;
    }
    return r;
}

int pthread_barrier_wait(pthread_barrier_t *b) {
    ENSURE();
    if (!WANTED())
        return REAL(pthread_barrier_wait)(b);
    pxl_busy = 1;
    PXL_REGION(id, "pthread_barrier_wait", PXL_BARRIER);
    int in = parallax_pl_enter(id);
    if (in & PXL_TRACED)
        parallax_pl_event(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0);
    int r = REAL(pthread_barrier_wait)(b);
    if (in & PXL_TRACED) {
        uint32_t n;
        uint64_t group = parallax_pl_barrier((uintptr_t)b, &n);
        parallax_pl_event(PXL_EV_COLL_END, PXL_OP_BARRIER, group, PXL_NO_ROOT, 0, n);
    }
    if (in)
        parallax_pl_leave();
    pxl_busy = 0;
    return r;
}
