/* GASP 1.5 tool side: the C entry points. gasp_event_notify is variadic,
 * which stable Rust cannot define, so its arguments are taken apart here,
 * by event tag, into a plain struct for the Rust side (src/gasp.rs), which
 * maps them to regions and events. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gasp_c.h"
#include "gasp_upc.h"
#include "pxl.h"

struct pxl_gasp_args {
    uint64_t a[8];     /* integer and pointer arguments, in order */
    unsigned n;        /* how many */
    const char *text;  /* C_FUNC's funcsig, or a user event's formatted text */
};

void *parallax_pl_gasp_init(int model);
void parallax_pl_gasp_event(void *ctx, unsigned tag, int type, const char *file, int line,
                            int col, const struct pxl_gasp_args *args);
int parallax_pl_gasp_control(void *ctx, int on);
unsigned parallax_pl_gasp_create_event(void *ctx, const char *name, const char *desc);
/* The description (format) of user event `tag`, or NULL. */
const char *parallax_pl_gasp_event_desc(void *ctx, unsigned tag);

/* The arguments of an event, one letter each: i int, z size_t, p pointer,
 * s string. */
static const char *signature(unsigned tag, gasp_evttype_t type) {
    int end = type == GASP_END;
    switch (tag) {
    case GASP_C_FUNC: return "s";
    case GASP_C_MALLOC: return end ? "zp" : "z";
    case GASP_C_REALLOC: return end ? "pzp" : "pz";
    case GASP_C_FREE: return "p";
    case GASP_UPC_COLLECTIVE_EXIT:
    case GASP_UPC_NONCOLLECTIVE_EXIT: return "i";
    case GASP_UPC_NOTIFY:
    case GASP_UPC_WAIT:
    case GASP_UPC_BARRIER: return "ii";
    case GASP_UPC_FENCE:
    case GASP_UPC_FORALL: return "";
    case GASP_UPC_GLOBAL_ALLOC:
    case GASP_UPC_ALL_ALLOC: return end ? "zzp" : "zz";
    case GASP_UPC_ALLOC: return end ? "zp" : "z";
    case GASP_UPC_FREE: return "p";
    case GASP_UPC_GLOBAL_LOCK_ALLOC:
    case GASP_UPC_ALL_LOCK_ALLOC: return end ? "p" : "";
    case GASP_UPC_LOCK_FREE:
    case GASP_UPC_LOCK:
    case GASP_UPC_UNLOCK: return "p";
    case GASP_UPC_LOCK_ATTEMPT: return end ? "pi" : "p";
    case GASP_UPC_MEMCPY:
    case GASP_UPC_MEMGET:
    case GASP_UPC_MEMPUT: return "ppz";
    case GASP_UPC_MEMSET: return "piz";
    case GASP_UPC_GET:
    case GASP_UPC_PUT: return "ippz";
    case GASP_UPC_NB_GET_INIT:
    case GASP_UPC_NB_PUT_INIT: return end ? "ippzp" : "ippz";
    case GASP_UPC_NB_GET_DATA:
    case GASP_UPC_NB_PUT_DATA:
    case GASP_UPC_NB_SYNC: return "p";
    case GASP_UPC_CACHE_MISS: return "zz";
    case GASP_UPC_CACHE_HIT:
    case GASP_UPC_CACHE_INVALIDATE: return "z";
    case GASP_UPC_ALL_BROADCAST:
    case GASP_UPC_ALL_SCATTER:
    case GASP_UPC_ALL_GATHER:
    case GASP_UPC_ALL_GATHER_ALL:
    case GASP_UPC_ALL_EXCHANGE: return "ppzi";
    case GASP_UPC_ALL_PERMUTE: return "pppzi";
    case GASP_UPC_ALL_REDUCE:
    case GASP_UPC_ALL_PREFIX_REDUCE: return "ppizzpii";
    default: return NULL;
    }
}

gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return (gasp_context_t)parallax_pl_gasp_init((int)srcmodel);
}

void gasp_event_notifyVA(gasp_context_t ctx, unsigned int tag, gasp_evttype_t type,
                         const char *file, int line, int col, va_list ap) {
    if (pxl_busy || !ctx)
        return;
    pxl_busy = 1;
    struct pxl_gasp_args args;
    char text[256];
    memset(&args, 0, sizeof args);
    const char *sig = signature(tag, type);
    if (sig) {
        for (; *sig && args.n < 8; sig++) {
            switch (*sig) {
            case 'i': args.a[args.n++] = (uint64_t)(int64_t)va_arg(ap, int); break;
            case 'z': args.a[args.n++] = (uint64_t)va_arg(ap, size_t); break;
            case 'p': args.a[args.n++] = (uint64_t)(uintptr_t)va_arg(ap, void *); break;
            case 's': args.text = va_arg(ap, const char *); break;
            }
        }
    } else if (tag >= GASP_USEREVT_START && tag <= GASP_USEREVT_END) {
        const char *desc = parallax_pl_gasp_event_desc(ctx, tag);
        if (desc && *desc) {
            va_list copy;
            va_copy(copy, ap);
            vsnprintf(text, sizeof text, desc, copy);
            va_end(copy);
            args.text = text;
        }
    }
    parallax_pl_gasp_event(ctx, tag, (int)type, file, line, col, &args);
    pxl_busy = 0;
}

void gasp_event_notify(gasp_context_t ctx, unsigned int tag, gasp_evttype_t type,
                       const char *file, int line, int col, ...) {
    va_list ap;
    va_start(ap, col);
    gasp_event_notifyVA(ctx, tag, type, file, line, col, ap);
    va_end(ap);
}

int gasp_control(gasp_context_t ctx, int on) {
    return ctx ? parallax_pl_gasp_control(ctx, on) : 0;
}

unsigned int gasp_create_event(gasp_context_t ctx, const char *name, const char *desc) {
    return ctx ? parallax_pl_gasp_create_event(ctx, name, desc) : 0;
}
