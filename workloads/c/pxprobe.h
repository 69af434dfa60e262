/* Regions for the accuracy workloads, through the C entry points of the
 * Parallax interposition library (crates/preload/shim/pxl.h).
 *
 * The entry points are weak: a program that includes this header runs
 * unchanged without the library (they are null, and every probe is one
 * test of a null pointer); under LD_PRELOAD=libparallax_preload.so (or
 * `parallax run`) they resolve to the library and the regions are
 * recorded. */
#ifndef PXPROBE_H
#define PXPROBE_H

#include <stdint.h>

uint32_t parallax_pl_region(const char *name, int kind) __attribute__((weak));
int parallax_pl_enter(uint32_t id) __attribute__((weak));
void parallax_pl_leave(void) __attribute__((weak));
int parallax_pl_active(void) __attribute__((weak));
void parallax_pl_calibrate(void) __attribute__((weak));
uint32_t parallax_pl_region_preserving(const char *name, int kind) __attribute__((weak));
void parallax_pl_enter_preserving(void) __attribute__((weak));
void parallax_pl_leave_preserving(void) __attribute__((weak));
void parallax_pl_event(int code, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
    __attribute__((weak));

/* Generic operation types: the numbers of parallax_model::region::RegionKind. */
enum { PX_USER = 0, PX_FUNCTION = 1, PX_LOOP = 2 };

/* A region of the program: its id is asked for on first use (0 until the
 * library measures). */
typedef struct {
    const char *name;
    int kind;
    uint32_t id;
} px_site;

/* The id of `s`, asked of `region` on first use; 0 while not measuring. */
static inline uint32_t px_id(px_site *s, uint32_t (*region)(const char *, int)) {
    if (__builtin_expect(s->id == 0, 0))
        s->id = region(s->name, s->kind);
    return s->id;
}

/* Enters `s`; nonzero if recorded, and then px_leave must follow. */
static inline int px_enter(px_site *s) {
    if (!parallax_pl_enter || px_id(s, parallax_pl_region) == 0)
        return 0;
    return parallax_pl_enter(s->id);
}

static inline void px_leave(int entered) {
    if (entered)
        parallax_pl_leave();
}

/* Starts measurement (and the runtime's calibration of its probes) now,
 * so that it does not happen inside the first timed span. */
static inline void px_start(void) {
    if (parallax_pl_active)
        (void)parallax_pl_active();
}

#if defined(__x86_64__) && !defined(__AVX__)
/* Enters `s` with a probe that preserves every register (but the result's):
 * the compiler keeps the surrounding code as it would be without the probe.
 * Nonzero if recorded, and then px_leave_preserving must follow. The call
 * steps over the red zone below the stack pointer. */
static inline int px_enter_preserving(px_site *s) {
    if (!parallax_pl_enter_preserving || px_id(s, parallax_pl_region_preserving) == 0)
        return 0;
    int r;
    __asm__ volatile("sub $128, %%rsp\n\tcall parallax_pl_enter_preserving@PLT\n\tadd $128, %%rsp"
                     : "=a"(r)
                     : "D"(s->id)
                     : "cc");
    return r;
}

static inline void px_leave_preserving(int entered) {
    if (entered && parallax_pl_leave_preserving)
        __asm__ volatile("sub $128, %%rsp\n\tcall parallax_pl_leave_preserving@PLT\n\tadd $128, %%rsp"
                         :
                         :
                         : "rax", "cc");
}
#else
/* Code built for AVX may keep wider vector values than the trampoline
 * saves (xmm0-15): ordinary probes there. */
static inline int px_enter_preserving(px_site *s) { return px_enter(s); }
static inline void px_leave_preserving(int entered) { px_leave(entered); }
#endif

/* Self-scheduled loop `loop` handed this thread iteration `index`
 * (PX_NO_ITERATION: none was left, the thread leaves the loop): what the
 * thread records until its next px_iteration of the loop is that
 * iteration's work, which `parallax compensate --liberal` hands out again.
 * A loop's id is the program's to choose, one per run of the loop. */
#define PX_NO_ITERATION UINT64_MAX
static inline void px_iteration(uint64_t loop, uint64_t index) {
    if (parallax_pl_event)
        parallax_pl_event(31 /* PXL_EV_ITERATION */, loop, index, 0, 0, 0);
}

/* Measures the probes' cost again now (compensation uses the calibration
 * nearest in time to each event). */
static inline void px_calibrate(void) {
    if (parallax_pl_calibrate)
        parallax_pl_calibrate();
}

#endif
