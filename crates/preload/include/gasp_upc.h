/* GASP 1.5, UPC interface: the events of UPC programs (tables
 * of the specification), with the arguments each passes after colnum. */
#ifndef GASP_UPC_H
#define GASP_UPC_H
#include <stddef.h>
#include "gasp.h"

#define GASP_UPC_VERSION 20060914

/* Opaque: a pointer-to-shared, a lock, a non-blocking handle. */
typedef struct _gasp_upc_PTS_S gasp_upc_PTS_t;
typedef struct _gasp_upc_lock_S gasp_upc_lock_t;
typedef void *gasp_upc_nb_handle_t;
/* A non-blocking operation that completed at once: tools ignore its DATA
 * and SYNC events. */
#define GASP_NB_TRIVIAL ((gasp_upc_nb_handle_t)0)

typedef enum {
    GASP_UPC_REDUCTION_C, GASP_UPC_REDUCTION_UC, GASP_UPC_REDUCTION_S,
    GASP_UPC_REDUCTION_US, GASP_UPC_REDUCTION_I, GASP_UPC_REDUCTION_UI,
    GASP_UPC_REDUCTION_L, GASP_UPC_REDUCTION_UL, GASP_UPC_REDUCTION_F,
    GASP_UPC_REDUCTION_D, GASP_UPC_REDUCTION_LD
} gasp_upc_reduction_t;

/* A-3 exit: int status. COLLECTIVE_EXIT is START/END, the other ATOMIC. */
#define GASP_UPC_COLLECTIVE_EXIT 0x200u
#define GASP_UPC_NONCOLLECTIVE_EXIT 0x201u
/* A-4 synchronization: NOTIFY, WAIT, BARRIER: int named, int expr. FENCE: none. */
#define GASP_UPC_NOTIFY 0x210u
#define GASP_UPC_WAIT 0x211u
#define GASP_UPC_BARRIER 0x212u
#define GASP_UPC_FENCE 0x213u
/* A-5 work sharing: none. */
#define GASP_UPC_FORALL 0x220u
/* A-6 library.
 * GLOBAL_ALLOC, ALL_ALLOC: START size_t nblocks, size_t nbytes; END + gasp_upc_PTS_t *newshrdptr.
 * ALLOC: START size_t nbytes; END + newshrdptr. FREE: gasp_upc_PTS_t *ptr.
 * GLOBAL_LOCK_ALLOC, ALL_LOCK_ALLOC: START none; END gasp_upc_lock_t *lck.
 * LOCK_FREE, LOCK, UNLOCK: gasp_upc_lock_t *lck.
 * LOCK_ATTEMPT: START lck; END lck, int result.
 * MEMCPY: gasp_upc_PTS_t *dst, gasp_upc_PTS_t *src, size_t n.
 * MEMGET: void *dst, gasp_upc_PTS_t *src, size_t n.
 * MEMPUT: gasp_upc_PTS_t *dst, void *src, size_t n.
 * MEMSET: gasp_upc_PTS_t *dst, int c, size_t n. */
#define GASP_UPC_GLOBAL_ALLOC 0x230u
#define GASP_UPC_ALL_ALLOC 0x231u
#define GASP_UPC_ALLOC 0x232u
#define GASP_UPC_FREE 0x233u
#define GASP_UPC_GLOBAL_LOCK_ALLOC 0x234u
#define GASP_UPC_ALL_LOCK_ALLOC 0x235u
#define GASP_UPC_LOCK_FREE 0x236u
#define GASP_UPC_LOCK 0x237u
#define GASP_UPC_LOCK_ATTEMPT 0x238u
#define GASP_UPC_UNLOCK 0x239u
#define GASP_UPC_MEMCPY 0x23au
#define GASP_UPC_MEMGET 0x23bu
#define GASP_UPC_MEMPUT 0x23cu
#define GASP_UPC_MEMSET 0x23du
/* A-7 blocking shared access.
 * GET: int is_relaxed, void *dst, gasp_upc_PTS_t *src, size_t n.
 * PUT: int is_relaxed, gasp_upc_PTS_t *dst, void *src, size_t n. */
#define GASP_UPC_GET 0x240u
#define GASP_UPC_PUT 0x241u
/* A-8 non-blocking shared access.
 * NB_GET_INIT, NB_PUT_INIT: START as GET, PUT; END + gasp_upc_nb_handle_t handle.
 * NB_GET_DATA, NB_PUT_DATA, NB_SYNC: gasp_upc_nb_handle_t handle. */
#define GASP_UPC_NB_GET_INIT 0x250u
#define GASP_UPC_NB_GET_DATA 0x251u
#define GASP_UPC_NB_PUT_INIT 0x252u
#define GASP_UPC_NB_PUT_DATA 0x253u
#define GASP_UPC_NB_SYNC 0x254u
/* A-9 cache (ATOMIC): MISS size_t n, size_t n_lines; HIT size_t n;
 * INVALIDATE size_t n_dirty. */
#define GASP_UPC_CACHE_MISS 0x260u
#define GASP_UPC_CACHE_HIT 0x261u
#define GASP_UPC_CACHE_INVALIDATE 0x262u
/* A-10 collectives.
 * BROADCAST, SCATTER, GATHER, GATHER_ALL, EXCHANGE: gasp_upc_PTS_t *dst,
 *   gasp_upc_PTS_t *src, size_t nbytes, int upc_flags.
 * PERMUTE: gasp_upc_PTS_t *dst, gasp_upc_PTS_t *src, const gasp_upc_PTS_t *perm,
 *   size_t nbytes, int upc_flags.
 * REDUCE, PREFIX_REDUCE: gasp_upc_PTS_t *dst, gasp_upc_PTS_t *src, int upc_op,
 *   size_t nelems, size_t blk_size, void *func, int upc_flags,
 *   gasp_upc_reduction_t type. */
#define GASP_UPC_ALL_BROADCAST 0x270u
#define GASP_UPC_ALL_SCATTER 0x271u
#define GASP_UPC_ALL_GATHER 0x272u
#define GASP_UPC_ALL_GATHER_ALL 0x273u
#define GASP_UPC_ALL_EXCHANGE 0x274u
#define GASP_UPC_ALL_PERMUTE 0x275u
#define GASP_UPC_ALL_REDUCE 0x276u
#define GASP_UPC_ALL_PREFIX_REDUCE 0x277u

/* User events of UPC programs share the tool's user-event tags. */
#define GASP_UPC_USEREVT_START GASP_USEREVT_START
#define GASP_UPC_USEREVT_END GASP_USEREVT_END

#endif
