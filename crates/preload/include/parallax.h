/* Parallax's API for C and C++ programs: regions, marks, phases and flow
 * control, recorded by Parallax's interposition library when the program
 * runs under `parallax run` (or with LD_PRELOAD=libparallax_preload.so).
 *
 * Nothing to link: the header refers to the library's entry points weakly,
 * so a program built with it runs unchanged without Parallax (each call is
 * then one test of a null pointer).
 *
 *   #include <parallax.h>
 *
 *   void solve(void) {
 *       PARALLAX_REGION_BEGIN(sweep, "sweep", PARALLAX_LOOP);
 *       for (int i = 0; i < n; i++) {
 *           ...
 *           PARALLAX_MARK("residual", (int64_t)(r * 1e6));
 *       }
 *       PARALLAX_REGION_END(sweep);
 *   }
 *
 *   // C++: a region for the rest of the scope
 *   void step() { PARALLAX_REGION("step"); ... }
 *
 * Build: cc -I$PREFIX/include/parallax app.c (scripts/install.sh installs
 * this header there). Regions must nest: END closes the innermost region. */
#ifndef PARALLAX_H
#define PARALLAX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interposition library's entry points (weak: null without it). */
uint32_t parallax_pl_region_at(const char *name, int kind, const char *file, uint32_t line)
    __attribute__((weak));
int parallax_pl_enter(uint32_t id) __attribute__((weak));
void parallax_pl_leave(void) __attribute__((weak));
void parallax_pl_event(int code, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
    __attribute__((weak));
void parallax_pl_flow(int on) __attribute__((weak));
int parallax_pl_active(void) __attribute__((weak));

/* Kinds of region (Parallax's generic operation types). */
enum {
    PARALLAX_USER = 0,     /* a phase or block of the program */
    PARALLAX_FUNCTION = 1, /* a function */
    PARALLAX_LOOP = 2,     /* a loop */
    PARALLAX_IO = 24       /* input or output */
};

/* A place in the program that is measured: its region id is asked for on
 * first use and kept. */
typedef struct {
    const char *name;
    int kind;
    const char *file;
    uint32_t line;
    uint32_t id;
} parallax_site;

#define PARALLAX_SITE(name, kind) {(name), (kind), __FILE__, (uint32_t)__LINE__, 0}

/* The region id of `s` (0 while Parallax does not measure). */
static inline uint32_t parallax_site_id(parallax_site *s, int kind) {
    uint32_t id = __atomic_load_n(&s->id, __ATOMIC_RELAXED);
    if (__builtin_expect(id == 0, 0) && parallax_pl_region_at) {
        id = parallax_pl_region_at(s->name, kind, s->file, s->line);
        __atomic_store_n(&s->id, id, __ATOMIC_RELAXED);
    }
    return id;
}

/* Enters the region of `s`; the result goes to parallax_leave. */
static inline int parallax_enter(parallax_site *s) {
    if (!parallax_pl_enter)
        return 0;
    uint32_t id = parallax_site_id(s, s->kind);
    return id ? parallax_pl_enter(id) : 0;
}

/* Leaves the region entered by the parallax_enter that returned `entered`. */
static inline void parallax_leave(int entered) {
    if (entered)
        parallax_pl_leave();
}

/* A mark: a point in time with a value, named by `s`. */
static inline void parallax_mark(parallax_site *s, int64_t value) {
    if (!parallax_pl_event)
        return;
    /* Marks are regions of kind 27; the event code of a mark is 30. */
    uint32_t id = parallax_site_id(s, 27);
    if (id)
        parallax_pl_event(30, id, (uint64_t)value, 0, 0, 0);
}

/* Pauses recording on every thread (calls are not recorded until
 * parallax_flow_on), and resumes it. */
static inline void parallax_flow_off(void) {
    if (parallax_pl_flow)
        parallax_pl_flow(0);
}
static inline void parallax_flow_on(void) {
    if (parallax_pl_flow)
        parallax_pl_flow(1);
}

/* Whether Parallax measures this process (and starts measurement now if it
 * has not started: its start-up calibration then happens here, not inside
 * the first timed region). */
static inline int parallax_active(void) {
    return parallax_pl_active ? parallax_pl_active() : 0;
}

/* A region from BEGIN to the END of the same handle, in one function. */
#define PARALLAX_REGION_BEGIN(handle, name, kind)                                   \
    static parallax_site handle##_parallax_site = PARALLAX_SITE(name, kind);        \
    int handle = parallax_enter(&handle##_parallax_site)
#define PARALLAX_REGION_END(handle) parallax_leave(handle)

/* A mark named `name` with `value` (an integer). */
#define PARALLAX_MARK(name, value)                                                  \
    do {                                                                            \
        static parallax_site parallax_mark_site_ = PARALLAX_SITE(name, 27);         \
        parallax_mark(&parallax_mark_site_, (int64_t)(value));                      \
    } while (0)

/* A phase marker: a mark named "phase: NAME" (a string literal), so that
 * timelines and traces show where each phase of the program starts. */
#define PARALLAX_PHASE(name) PARALLAX_MARK("phase: " name, 0)

#ifdef __cplusplus
} /* extern "C" */

namespace parallax {
/* A region from construction to the end of the scope. */
class Region {
  public:
    explicit Region(parallax_site *s) : entered_(parallax_enter(s)) {}
    ~Region() { parallax_leave(entered_); }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;

  private:
    int entered_;
};
} // namespace parallax

#define PARALLAX_CAT2_(a, b) a##b
#define PARALLAX_CAT_(a, b) PARALLAX_CAT2_(a, b)
/* A region named `name` for the rest of the enclosing scope. */
#define PARALLAX_REGION(name)                                                       \
    static parallax_site PARALLAX_CAT_(parallax_site_, __LINE__) =                  \
        PARALLAX_SITE(name, PARALLAX_USER);                                         \
    parallax::Region PARALLAX_CAT_(parallax_region_, __LINE__)(                     \
        &PARALLAX_CAT_(parallax_site_, __LINE__))
/* The enclosing function as a region, for the rest of its body. */
#define PARALLAX_FUNCTION()                                                         \
    static parallax_site parallax_function_site_ = {__func__, PARALLAX_FUNCTION,    \
                                                    __FILE__, (uint32_t)__LINE__, 0}; \
    parallax::Region parallax_function_region_(&parallax_function_site_)
#endif /* __cplusplus */

#endif /* PARALLAX_H */
