/* GASP 1.5, C interface: the events of plain C code. */
#ifndef GASP_C_H
#define GASP_C_H
#include "gasp.h"

/* START/END: const char *funcsig (may be NULL). */
#define GASP_C_FUNC 0x100u
/* START: size_t nbytes. END: size_t nbytes, void *returnptr. */
#define GASP_C_MALLOC 0x101u
/* START: void *ptr, size_t size. END: void *ptr, size_t size, void *returnptr. */
#define GASP_C_REALLOC 0x102u
/* START/END: void *ptr. */
#define GASP_C_FREE 0x103u

#endif
