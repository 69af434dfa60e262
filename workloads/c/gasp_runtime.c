/* A GASP-enabled "runtime" for the tests: what a UPC compiler's runtime
 * would tell a performance tool through GASP 1.5 while running a program
 * with THREADS threads (here pthreads). The tool functions are weak: the
 * program runs without a tool, and with libparallax_preload.so loaded they
 * are Parallax's.  gasp_runtime [THREADS] [ITERS]
 *
 * Each thread: gasp_init; a user event "iteration" ("iteration %d"); a
 * C function "solve" around everything; ITERS times a split-phase barrier
 * (notify, wait), a lock and unlock, a memget of 128 bytes and a memput of
 * 256, a non-blocking put of 64 bytes with a handle and its sync, a
 * non-blocking get that completed at once (GASP_NB_TRIVIAL) and its sync,
 * the user event with the iteration number (through gasp_event_notifyVA),
 * and a barrier; then an all-reduce of 10 doubles; then, with measurement
 * switched off by gasp_control, a forall. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gasp.h"
#include "gasp_c.h"
#include "gasp_upc.h"

#pragma weak gasp_init
#pragma weak gasp_event_notify
#pragma weak gasp_event_notifyVA
#pragma weak gasp_control
#pragma weak gasp_create_event

static int iters;
static char lock_object[64];
static char shared_area[4096];
static int control_was[16], control_back[16];

#define F __FILE__
#define NOTIFY(ctx, tag, type, ...) \
    gasp_event_notify(ctx, tag, type, F, __LINE__, 0, __VA_ARGS__)

static void user_event(gasp_context_t ctx, unsigned tag, ...) {
    va_list ap;
    va_start(ap, tag);
    gasp_event_notifyVA(ctx, tag, GASP_ATOMIC, F, __LINE__, 0, ap);
    va_end(ap);
}

static void *thread(void *arg) {
    int t = (int)(long)arg, argc = 0;
    char **argv = NULL;
    if (!gasp_init)
        return NULL;
    gasp_context_t ctx = gasp_init(GASP_MODEL_UPC, &argc, &argv);
    unsigned ev = gasp_create_event(ctx, "iteration", "iteration %d");
    gasp_upc_lock_t *lck = (gasp_upc_lock_t *)lock_object;
    gasp_upc_PTS_t *pts = (gasp_upc_PTS_t *)(shared_area + 512 * t);
    char local[256];
    NOTIFY(ctx, GASP_C_FUNC, GASP_START, "solve");
    for (int i = 0; i < iters; i++) {
        NOTIFY(ctx, GASP_UPC_NOTIFY, GASP_START, 0, 0);
        NOTIFY(ctx, GASP_UPC_NOTIFY, GASP_END, 0, 0);
        NOTIFY(ctx, GASP_UPC_WAIT, GASP_START, 0, 0);
        NOTIFY(ctx, GASP_UPC_WAIT, GASP_END, 0, 0);
        NOTIFY(ctx, GASP_UPC_LOCK, GASP_START, lck);
        NOTIFY(ctx, GASP_UPC_LOCK, GASP_END, lck);
        NOTIFY(ctx, GASP_UPC_UNLOCK, GASP_START, lck);
        NOTIFY(ctx, GASP_UPC_UNLOCK, GASP_END, lck);
        NOTIFY(ctx, GASP_UPC_MEMGET, GASP_START, (void *)local, pts, (size_t)128);
        NOTIFY(ctx, GASP_UPC_MEMGET, GASP_END, (void *)local, pts, (size_t)128);
        NOTIFY(ctx, GASP_UPC_MEMPUT, GASP_START, pts, (void *)local, (size_t)256);
        NOTIFY(ctx, GASP_UPC_MEMPUT, GASP_END, pts, (void *)local, (size_t)256);
        gasp_upc_nb_handle_t h = (gasp_upc_nb_handle_t)(long)(0x100 + i);
        NOTIFY(ctx, GASP_UPC_NB_PUT_INIT, GASP_START, 1, pts, (void *)local, (size_t)64);
        NOTIFY(ctx, GASP_UPC_NB_PUT_INIT, GASP_END, 1, pts, (void *)local, (size_t)64, h);
        NOTIFY(ctx, GASP_UPC_NB_SYNC, GASP_START, h);
        NOTIFY(ctx, GASP_UPC_NB_SYNC, GASP_END, h);
        NOTIFY(ctx, GASP_UPC_NB_GET_INIT, GASP_START, 1, (void *)local, pts, (size_t)8);
        NOTIFY(ctx, GASP_UPC_NB_GET_INIT, GASP_END, 1, (void *)local, pts, (size_t)8,
               GASP_NB_TRIVIAL);
        NOTIFY(ctx, GASP_UPC_NB_SYNC, GASP_START, GASP_NB_TRIVIAL);
        NOTIFY(ctx, GASP_UPC_NB_SYNC, GASP_END, GASP_NB_TRIVIAL);
        user_event(ctx, ev, i);
        NOTIFY(ctx, GASP_UPC_BARRIER, GASP_START, 0, 0);
        NOTIFY(ctx, GASP_UPC_BARRIER, GASP_END, 0, 0);
    }
    NOTIFY(ctx, GASP_UPC_ALL_REDUCE, GASP_START, pts, pts, 0, (size_t)10, (size_t)1, (void *)0, 0,
           GASP_UPC_REDUCTION_D);
    NOTIFY(ctx, GASP_UPC_ALL_REDUCE, GASP_END, pts, pts, 0, (size_t)10, (size_t)1, (void *)0, 0,
           GASP_UPC_REDUCTION_D);
    control_was[t] = gasp_control(ctx, 0);
    gasp_event_notify(ctx, GASP_UPC_FORALL, GASP_START, F, __LINE__, 0);
    gasp_event_notify(ctx, GASP_UPC_FORALL, GASP_END, F, __LINE__, 0);
    control_back[t] = gasp_control(ctx, 1);
    NOTIFY(ctx, GASP_C_FUNC, GASP_END, "solve");
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    iters = argc > 2 ? atoi(argv[2]) : 4;
    pthread_t tid[16];
    for (long t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, thread, (void *)t);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    printf("tool=%d lock=%lu control_was=%d control_back=%d\n", gasp_init != NULL,
           (unsigned long)lock_object, control_was[0], control_back[0]);
    return 0;
}
