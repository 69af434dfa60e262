/* What the two OpenMP front ends share: the libgomp wrappers (gomp.c, gcc's
 * programs) and the OMPT tool (ompt.c, programs of LLVM's libomp, built by
 * clang). Both record the same regions, events and ids (omp.c). */
#ifndef PXL_OMP_H
#define PXL_OMP_H

#include <stdint.h>

/* Ids of teams and loops carry a tag in their top byte that no address
 * has; a team's number and a loop's construct count fill the rest. */
#define TEAM_TAG (0xA5ull << 56) /* parallax_model::event::TEAM_TAG */
#define LOOP_TAG (0xA6ull << 56)
#define NUMBER_BITS 40

/* How worksharing constructs are told apart: by schedule (the numbers of
 * omp_sched_t), not known (dispatches are not numbered), and sections. */
enum {
    SCHED_STATIC = 1,
    SCHED_DYNAMIC = 2,
    SCHED_GUIDED = 3,
    SCHED_UNKNOWN = 100,
    SCHED_SECTIONS = 101
};

/* The region name of a worksharing construct of schedule `sched`. */
const char *pxl_omp_loop_name(int sched);

/* Whether its chunks are handed out as threads ask (dynamic, guided,
 * sections): then each is an Iteration event. */
int pxl_omp_self_scheduled(int sched);

/* The id of a new team. */
uint64_t pxl_omp_new_team(void);

/* The id of the `construct`-th worksharing construct (counted from 1) that
 * a thread begins in team `team`; outside a team (`team` 0), a new id. */
uint64_t pxl_omp_loop_id(uint64_t team, uint64_t construct);

/* The region of construct `what` of kind `kind` at code address `ra`,
 * cached per construct and address; `ctx` (or null) is a code address in
 * the function that the construct's team was forked in, which names the
 * construct when `ra` is in a body the compiler outlined without naming it
 * for its function (clang's `.omp_outlined.`). 0 while not measuring. */
uint32_t pxl_omp_site(const char *what, int kind, const void *ra, const void *ctx);

/* A zeroed block of `size` bytes for the calling thread, which `*slot` (a
 * thread-local pointer) then points to; freed when the thread ends, and
 * `*slot` cleared. `sink` if memory is short. Keeps large per-thread
 * state out of the library's static TLS, which must leave room for
 * dlopen (`parallax calibrate` loads the library). */
#include <stddef.h>
void *pxl_omp_thread_block(void **slot, size_t size, void *sink);

/* The calling thread is thread `num` of the team it runs an implicit task
 * of: its location is named for it, once, before its first record. */
void pxl_omp_thread(uint32_t num);

/* The OpenMP runtime's function `name`, found after this library, or in
 * the scope of the module at `caller` (a runtime loaded privately);
 * aborts if there is none. */
void *pxl_omp_lookup(const char *name, const void *caller);

/* Which front end records the process's OpenMP constructs: a process has
 * one runtime, but a program built by gcc may run on libomp (which has
 * libgomp's entry points and OMPT both); the first to record keeps it.
 * PXL_OMP_GOMP is set by the libgomp wrappers when they record, PXL_OMP_OMPT
 * when the runtime started the OMPT tool. */
enum { PXL_OMP_GOMP = 1, PXL_OMP_OMPT = 2 };
extern int pxl_omp_front;

#endif
