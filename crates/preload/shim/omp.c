/* What the libgomp wrappers (gomp.c) and the OMPT tool (ompt.c) share: team
 * and loop ids, the regions of constructs by call site, and the runtime's
 * functions (omp.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "omp.h"
#include "pxl.h"

int pxl_omp_front;

static uint64_t teams, orphans;

const char *pxl_omp_loop_name(int sched) {
    switch (sched) {
    case SCHED_STATIC: return "omp for (static)";
    case SCHED_DYNAMIC: return "omp for (dynamic)";
    case SCHED_GUIDED: return "omp for (guided)";
    case SCHED_SECTIONS: return "omp sections";
    default: return "omp for";
    }
}

int pxl_omp_self_scheduled(int sched) {
    return sched == SCHED_DYNAMIC || sched == SCHED_GUIDED || sched == SCHED_SECTIONS;
}

uint64_t pxl_omp_new_team(void) {
    return TEAM_TAG | (__atomic_add_fetch(&teams, 1, __ATOMIC_RELAXED) & ((1ull << NUMBER_BITS) - 1));
}

uint64_t pxl_omp_loop_id(uint64_t team, uint64_t construct) {
    if (!team)
        team = __atomic_add_fetch(&orphans, 1, __ATOMIC_RELAXED);
    return LOOP_TAG ^ (team & ((1ull << NUMBER_BITS) - 1)) ^ (construct << NUMBER_BITS);
}

/* Per-thread blocks: a header with the thread's pointer to the block,
 * which is cleared when the thread ends and the block is freed (a later
 * call on that thread makes a new one). */
#define BLOCK_HEAD 16
static pthread_key_t blocks;
static int blocks_made, blocks_lock;

static void block_free(void *head) {
    void **slot = *(void ***)head;
    *slot = NULL;
    free(head);
}

void *pxl_omp_thread_block(void **slot, size_t size, void *sink) {
    if (!__atomic_load_n(&blocks_made, __ATOMIC_ACQUIRE)) {
        while (__atomic_exchange_n(&blocks_lock, 1, __ATOMIC_ACQUIRE))
            ;
        if (!blocks_made)
            __atomic_store_n(&blocks_made, pthread_key_create(&blocks, block_free) == 0 ? 1 : 2,
                             __ATOMIC_RELEASE);
        __atomic_store_n(&blocks_lock, 0, __ATOMIC_RELEASE);
    }
    char *head = calloc(1, BLOCK_HEAD + size);
    if (!head)
        return sink;
    *(void ***)head = slot;
    *slot = head + BLOCK_HEAD;
    if (blocks_made == 1)
        pthread_setspecific(blocks, head);
    return head + BLOCK_HEAD;
}

void pxl_omp_thread(uint32_t num) {
    static __thread int told;
    if (!told) {
        told = 1;
        parallax_pl_omp_thread(num);
    }
}

void *pxl_omp_lookup(const char *name, const void *caller) {
    void *p = dlsym(RTLD_NEXT, name);
    Dl_info d;
    if (!p && caller && dladdr(caller, &d) && d.dli_fname) {
        void *h = dlopen(d.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, name);
            dlclose(h);
        }
    }
    if (!p) {
        static const char msg[] = "parallax: the OpenMP runtime's functions cannot be found\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        abort();
    }
    return p;
}

/* A region per construct and call site, cached without a lock: written
 * under one, key after value. */
#define SITES 4096
static struct {
    uintptr_t key;
    uint32_t id;
} sites[SITES];
static int sites_lock;

uint32_t pxl_omp_site(const char *what, int kind, const void *ra, const void *ctx) {
    uintptr_t key = (uintptr_t)ra * 31 + (uintptr_t)what;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 52);
    for (size_t i = h, n = 0; n < SITES; i = (i + 1) & (SITES - 1), n++) {
        uintptr_t k = __atomic_load_n(&sites[i].key, __ATOMIC_ACQUIRE);
        if (k == key)
            return sites[i].id;
        if (k == 0)
            break;
    }
    uint32_t id = parallax_pl_omp_region_in(what, kind, ra, ctx);
    if (id == 0)
        return 0;
    while (__atomic_exchange_n(&sites_lock, 1, __ATOMIC_ACQUIRE))
        ;
    for (size_t i = h, n = 0; n < SITES; i = (i + 1) & (SITES - 1), n++) {
        uintptr_t k = __atomic_load_n(&sites[i].key, __ATOMIC_RELAXED);
        if (k == key)
            break;
        if (k == 0) {
            sites[i].id = id;
            __atomic_store_n(&sites[i].key, key, __ATOMIC_RELEASE);
            break;
        }
    }
    __atomic_store_n(&sites_lock, 0, __ATOMIC_RELEASE);
    return id;
}
