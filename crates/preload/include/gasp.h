/* GASP 1.5: the tool interface between a parallel language's compiler or
 * runtime (the model implementation) and a performance tool (here,
 * Parallax's interposition library, libparallax_preload.so).
 *
 * A GASP-enabled runtime includes this header and gasp_c.h / gasp_upc.h,
 * calls gasp_init once per thread (and per model) and notifies the tool of
 * each event. The event tags of gasp_c.h and gasp_upc.h are this
 * implementation's numbering. */
#ifndef GASP_H
#define GASP_H

#include <stdarg.h>
#include <stddef.h>

#define GASP_VERSION 20060914

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GASP_MODEL_UPC = 0,
    GASP_MODEL_TITANIUM = 1,
    GASP_MODEL_CAF = 2,
    GASP_MODEL_MPI = 3,
    GASP_MODEL_SHMEM = 4
} gasp_model_t;

/* The spec's spelling of the same models. */
#define GASP_LANG_UPC GASP_MODEL_UPC
#define GASP_LANG_TITANIUM GASP_MODEL_TITANIUM
#define GASP_LANG_CAF GASP_MODEL_CAF
#define GASP_LANG_MPI GASP_MODEL_MPI
#define GASP_LANG_SHMEM GASP_MODEL_SHMEM

typedef enum { GASP_START = 0, GASP_END = 1, GASP_ATOMIC = 2 } gasp_evttype_t;

/* Opaque, thread-specific, tool-defined. */
typedef struct _gasp_context_S *gasp_context_t;

/* Called by every thread after the runtime is initialized and before the
 * program's main, once per model. */
gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv);

/* An event: START and END of an operation, or an ATOMIC (instant) one.
 * filename may be NULL, linenum and colnum 0. The arguments after colnum
 * depend on the event (gasp_c.h, gasp_upc.h; for user events, those of the
 * description's format). */
void gasp_event_notify(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                       const char *filename, int linenum, int colnum, ...);
void gasp_event_notifyVA(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                         const char *filename, int linenum, int colnum, va_list varargs);

/* Stops (on = 0) or resumes measurement on the calling thread; returns the
 * previous setting (nonzero at first). */
int gasp_control(gasp_context_t context, int on);

/* A user event named `name`; `desc` may be NULL or a printf format for the
 * event's arguments. Returns its tag. */
unsigned int gasp_create_event(gasp_context_t context, const char *name, const char *desc);

/* Tags of user events. */
#define GASP_USEREVT_START 0x10000u
#define GASP_USEREVT_END 0x1ffffu

#ifdef __cplusplus
}
#endif
#endif
