/* The compiler hooks' hot path: `__cyg_profile_func_enter` and
 * `__cyg_profile_func_exit`, which code built with -finstrument-functions
 * calls around every function (see src/cyg.rs for what they record).
 *
 * Most calls record nothing: the function is throttled or filtered out,
 * and the hooks only keep the shadow stack and count the call. That path
 * is written here, in C, because its cost stays in the measured program
 * (compensation removes it, but only as well as it is calibrated) and C
 * can keep the per-thread shadow in initial-exec TLS: one load from %fs,
 * where a Rust thread-local of a shared library costs a call to
 * __tls_get_addr. Everything else (first calls, recorded calls, calls
 * while the hooks are not live) goes to src/cyg.rs. The not-recording
 * path also times itself in place: every 65,536 such calls it calls
 * src/cyg.rs (`pxl_hook_block`), which times blocks with that path done
 * once and done twice (src/skip_cost.rs). */
#include <stdint.h>

#include "pxl.h"

/* The function table of src/cyg.rs: open addressing on the function's
 * address, written under a lock there, read here without one. */
struct pxl_slot {
    uintptr_t key;
    uint64_t val;
};

#define SLOTS (1u << 16)
/* Slot value bits that mean "record nothing" (src/cyg.rs THROTTLED, SKIP). */
#define NOT_RECORDED ((1ull << 62) | (1ull << 63))
/* src/cyg.rs STATE: not known yet, live, or off for good. */
#define LIVE 1
#define DEAD 2

extern struct pxl_slot pxl_hook_table[SLOTS] __attribute__((visibility("hidden")));
extern uint8_t pxl_hook_state __attribute__((visibility("hidden")));

/* The slow paths, in src/cyg.rs. */
void pxl_hook_enter(uintptr_t fn, uint64_t val) __attribute__((visibility("hidden")));
void pxl_hook_exit(void) __attribute__((visibility("hidden")));
void pxl_hook_count_far(uint64_t val) __attribute__((visibility("hidden")));
void pxl_hook_block(void) __attribute__((visibility("hidden")));
uint32_t pxl_hook_home(uintptr_t fn) __attribute__((visibility("hidden")));
uint64_t pxl_hook_lookup(uintptr_t fn) __attribute__((visibility("hidden")));

static __thread struct pxl_shadow pxl_shadow_tls __attribute__((tls_model("initial-exec")));
static __thread struct pxl_decoy pxl_decoy_tls __attribute__((tls_model("initial-exec")));

struct pxl_shadow *pxl_shadow(void)
{
    return &pxl_shadow_tls;
}

/* The first slot to look at for function `fn`. */
static inline uint32_t home(uintptr_t fn)
{
    return (uint32_t)(((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 48);
}

/* The slot value of function `fn`, 0 if not in the table. */
static inline uint64_t lookup(uintptr_t fn)
{
    uint32_t i = home(fn);
    for (;;) {
        uintptr_t k = __atomic_load_n(&pxl_hook_table[i].key, __ATOMIC_ACQUIRE);
        if (k == fn)
            return __atomic_load_n(&pxl_hook_table[i].val, __ATOMIC_RELAXED);
        if (k == 0)
            return 0;
        i = (i + 1) & (SLOTS - 1);
    }
}

/* The same for src/cyg.rs, which writes the table: one hash for both. */
uint32_t pxl_hook_home(uintptr_t fn)
{
    return home(fn);
}

uint64_t pxl_hook_lookup(uintptr_t fn)
{
    return lookup(fn);
}

/* A call's work when it records nothing, on entry. */
static inline __attribute__((always_inline)) void skip_enter(uint64_t *depth, uint64_t *bits,
                                                             uint64_t *skipped, uint64_t d)
{
    *depth = d + 1;
    bits[d / 64] &= ~(1ull << (d % 64));
    ++*skipped;
}

/* The same work again, in a block timed with it: what such a block costs
 * more per call is what the work costs in place. Every step of the
 * entry hook's path for a call that records nothing, on the decoy shadow,
 * counting into the same counts' `decoy` field. */
static inline __attribute__((always_inline)) void decoy_enter(uintptr_t fn, struct pxl_shadow *s)
{
    if (__atomic_load_n(&pxl_hook_state, __ATOMIC_RELAXED) != LIVE)
        return;
    uint64_t val = lookup(fn);
    struct pxl_decoy *x = &pxl_decoy_tls;
    uint64_t d = x->depth & (PXL_MAX_DEPTH - 1);
    if ((val & NOT_RECORDED) == 0)
        return;
    skip_enter(&x->depth, x->bits, &x->skipped, d);
    uint64_t i = (val >> 32) & 0xffff;
    if (i >= s->len)
        return;
    s->counts[i].decoy++;
}

/* The same for the exit hook. */
static inline __attribute__((always_inline)) void decoy_exit(void)
{
    if (__atomic_load_n(&pxl_hook_state, __ATOMIC_RELAXED) != LIVE)
        return;
    struct pxl_decoy *x = &pxl_decoy_tls;
    uint64_t d = x->depth;
    if (d == 0)
        return;
    x->depth = --d;
    d &= PXL_MAX_DEPTH - 1;
    __asm__ volatile("" : : "r"((x->bits[d / 64] >> (d % 64)) & 1));
}

/* Every call the hooks make is a tail call, and they keep no frame
 * pointer: their common path saves no register. */
#define HOOK __attribute__((optimize("omit-frame-pointer")))

HOOK void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    (void)call_site;
    uintptr_t fn = (uintptr_t)this_fn;
    uint8_t state = __atomic_load_n(&pxl_hook_state, __ATOMIC_RELAXED);
    if (__builtin_expect(state != LIVE, 0)) {
        if (state != DEAD)
            pxl_hook_enter(fn, 0);
        return;
    }
    uint64_t val = lookup(fn);
    struct pxl_shadow *s = &pxl_shadow_tls;
    uint64_t d = s->depth;
    if ((val & NOT_RECORDED) == 0 || d >= PXL_MAX_DEPTH) {
        pxl_hook_enter(fn, val);
        return;
    }
    skip_enter(&s->depth, s->bits, &s->skipped, d);
    uint64_t i = (val >> 32) & 0xffff;
    if (__builtin_expect(i >= s->len, 0)) {
        pxl_hook_count_far(val);
        return;
    }
    s->counts[i].all++;
    if (s->twice != 0)
        decoy_enter(fn, s);
    if (__builtin_expect(s->skipped >= s->mark, 0))
        pxl_hook_block();
}

HOOK void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    (void)this_fn;
    (void)call_site;
    if (__atomic_load_n(&pxl_hook_state, __ATOMIC_RELAXED) != LIVE)
        return;
    struct pxl_shadow *s = &pxl_shadow_tls;
    uint64_t d = s->depth;
    if (d == 0)
        return;
    s->depth = --d;
    if (d < PXL_MAX_DEPTH && (s->bits[d / 64] >> (d % 64)) & 1)
        pxl_hook_exit();
    else if (s->twice != 0)
        decoy_exit();
}
