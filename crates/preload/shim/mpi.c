/* MPI through the PMPI profiling interface.
 *
 * Compiled against the mpi.h of the MPI that the measured program uses
 * (build.rs), because handles (communicators, requests, datatypes) are
 * that library's own types and constants (MPI_COMM_WORLD, MPI_IN_PLACE,
 * ...) are its own macros. Every MPI symbol taken from the library is weak
 * (build.rs), so that the interposition library also loads into programs
 * without MPI.
 *
 * Each wrapper is a region of its generic operation type (send, recv,
 * sendrecv, wait, collective, barrier, setup) holding the events that let
 * the analysis match every receive with its send and every collective
 * instance across ranks: peers and roots as ranks of MPI_COMM_WORLD,
 * communicators as ids that all members agree on, tags, bytes, and
 * requests of non-blocking calls with their completion in the Wait and
 * Test families. See docs/design/interposition.md for the exact conventions. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pxl.h"


#define EV(code, a, b, c, d, e) \
    parallax_pl_event(code, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), (uint64_t)(d), (uint64_t)(e))
/* An event dated at the enter of the call that made it. */
#define EV_PRIOR(code, a, b, c, d, e) \
    parallax_pl_event_prior(code, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), (uint64_t)(d), (uint64_t)(e))

static uint64_t key_of(const void *handle, size_t size) {
    uint64_t k = 0;
    memcpy(&k, handle, size < sizeof k ? size : sizeof k);
    return k;
}

static void spin_lock(int *l) {
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static void spin_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

static uint64_t type_bytes(MPI_Datatype t, long count) {
    int sz = 0;
    if (count <= 0 || t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &sz) != MPI_SUCCESS || sz < 0)
        return 0;
    return (uint64_t)count * (uint64_t)sz;
}

/* === communicators ===
 * For each communicator: an id that every member uses, its size, and the
 * world rank of each of its ranks (and of its remote group, for an
 * inter-communicator). MPI_COMM_WORLD is id 0; MPI_COMM_SELF is
 * 2^63 + world rank; a communicator made by a wrapped constructor is
 * (world rank of its rank 0 + 1) * 2^32 + that rank's count of such
 * constructions, sent to the other members; one met without its
 * construction (or an inter-communicator) gets 2^62 + a hash of its
 * members. */

struct comm {
    uint64_t key;      /* the handle's bits; 0: free slot */
    uint64_t id;
    int size, rank, inter, remote_size;
    uint32_t *world;   /* world rank of each rank; NULL for the world */
    uint32_t *remote;  /* the remote group's, for an inter-communicator */
};

#define COMMS 4096
static struct comm comms[COMMS];
static int comms_lock;
static int world_rank = -1, world_size;
static uint32_t created; /* constructions this rank was root of */
static MPI_Comm clock_comm = MPI_COMM_NULL;

static uint32_t *translate(MPI_Group g, int n) {
    MPI_Group wg;
    uint32_t *out = calloc((size_t)n, sizeof *out);
    int *in = malloc(sizeof(int) * (size_t)n), *res = malloc(sizeof(int) * (size_t)n);
    if (!out || !in || !res) {
        free(in);
        free(res);
        return out;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, n, in, wg, res);
    PMPI_Group_free(&wg);
    for (int i = 0; i < n; i++)
        out[i] = res[i] == MPI_UNDEFINED ? 0xffffffffu : (uint32_t)res[i];
    free(in);
    free(res);
    return out;
}

static uint64_t members_hash(const struct comm *c) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < c->size; i++)
        h = (h ^ c->world[i]) * 1099511628211ull;
    for (int i = 0; i < c->remote_size; i++)
        h = (h ^ (c->remote[i] + 0x9e3779b9u)) * 1099511628211ull;
    return (1ull << 62) | (h >> 2);
}

static struct comm *slot_of(uint64_t key, int insert) {
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 52) & (COMMS - 1);
    for (int n = 0; n < COMMS; n++, i = (i + 1) & (COMMS - 1)) {
        uint64_t k = __atomic_load_n(&comms[i].key, __ATOMIC_ACQUIRE);
        if (k == key)
            return &comms[i];
        if (k == 0)
            return insert ? &comms[i] : NULL;
    }
    return NULL;
}

static void world_info(void) {
    if (world_rank < 0) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    }
}

/* Describes `comm`; `agreed_id` is its id if the caller knows it. */
static struct comm *add_comm(MPI_Comm comm, uint64_t agreed_id, int have_id) {
    struct comm c;
    memset(&c, 0, sizeof c);
    c.key = key_of(&comm, sizeof comm);
    world_info();
    PMPI_Comm_test_inter(comm, &c.inter);
    PMPI_Comm_size(comm, &c.size);
    PMPI_Comm_rank(comm, &c.rank);
    if (comm == MPI_COMM_WORLD) {
        c.id = 0;
    } else {
        MPI_Group g;
        PMPI_Comm_group(comm, &g);
        c.world = translate(g, c.size);
        PMPI_Group_free(&g);
        if (c.inter) {
            PMPI_Comm_remote_size(comm, &c.remote_size);
            PMPI_Comm_remote_group(comm, &g);
            c.remote = translate(g, c.remote_size);
            PMPI_Group_free(&g);
        }
        if (comm == MPI_COMM_SELF)
            c.id = (1ull << 63) | (uint64_t)world_rank;
        else
            c.id = have_id ? agreed_id : members_hash(&c);
    }
    spin_lock(&comms_lock);
    struct comm *s = slot_of(c.key, 1);
    if (s) {
        uint32_t *ow = s->key == c.key ? s->world : NULL, *orm = s->key == c.key ? s->remote : NULL;
        uint64_t key = c.key;
        c.key = 0;
        *s = c;
        __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
        free(ow);
        free(orm);
    }
    spin_unlock(&comms_lock);
    if (s && comm != MPI_COMM_WORLD) {
        parallax_pl_group(c.id, c.world, (size_t)c.size);
    }
    return s;
}

static struct comm *comm_of(MPI_Comm comm) {
    struct comm *c = slot_of(key_of(&comm, sizeof comm), 0);
    return c ? c : add_comm(comm, 0, 0);
}

/* The world rank of rank `r` of `comm` (its remote group for an
 * inter-communicator); 0xffffffff for none (MPI_PROC_NULL, ANY_SOURCE). */
static uint32_t world_of(const struct comm *c, int r) {
    if (!c || r < 0)
        return 0xffffffffu;
    if (c->inter)
        return r < c->remote_size && c->remote ? c->remote[r] : 0xffffffffu;
    if (!c->world)
        return (uint32_t)r;
    return r < c->size ? c->world[r] : 0xffffffffu;
}

/* After a constructor: agree on the new communicator's id. */
static void constructed(MPI_Comm newcomm) {
    if (newcomm == MPI_COMM_NULL)
        return;
    int inter = 0, rank = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    if (inter) {
        add_comm(newcomm, 0, 0);
        return;
    }
    world_info();
    PMPI_Comm_rank(newcomm, &rank);
    uint64_t id = 0;
    if (rank == 0)
        id = ((uint64_t)(world_rank + 1) << 32) | (uint64_t)(++created);
    PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, newcomm);
    add_comm(newcomm, id, 1);
}

/* === requests ===
 * Non-blocking point-to-point requests, from their start to their
 * completion in a Wait or Test call. */

enum { REQ_SEND = 1, REQ_RECV = 2, REQ_COLL = 3, REQ_MESSAGE = 4 };

struct req {
    uint64_t key;  /* 0: free; 1: deleted */
    /* Outstanding starts: Open MPI hands out one shared, already completed
     * request for sends that finished at once, so a handle may stand for
     * several operations. */
    int pending;
    int kind, persistent, tag;
    uint32_t peer;
    uint64_t comm_id, bytes;
    struct comm *comm;
    /* A non-blocking collective: its operation, root and bytes received
     * (`bytes` are those sent). */
    int op;
    uint32_t root;
    uint64_t recvd;
};

#define REQS (1 << 16)
static struct req reqs[REQS];
static int reqs_lock;
static long reqs_used;

static struct req *req_find(uint64_t key, int insert) {
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (REQS - 1);
    struct req *tomb = NULL;
    for (int n = 0; n < REQS; n++, i = (i + 1) & (REQS - 1)) {
        if (reqs[i].key == key)
            return &reqs[i];
        if (reqs[i].key == 1 && !tomb)
            tomb = &reqs[i];
        if (reqs[i].key == 0)
            return insert ? (tomb ? tomb : &reqs[i]) : NULL;
    }
    return insert ? tomb : NULL;
}

/* A request's entry, before it has a place in the table. */
static struct req req_entry(int kind, int persistent, struct comm *c, int peer, int tag,
                            uint64_t bytes) {
    return (struct req){.kind = kind,
                        .persistent = persistent,
                        .comm = c,
                        .comm_id = c ? c->id : 0,
                        .peer = world_of(c, peer),
                        .tag = tag,
                        .bytes = bytes};
}

/* Adds entry `v` for the request (or matched message) with handle `key`;
 * 0 if it could not be (a full table). */
static int req_put(uint64_t key, struct req v) {
    int added = 0;
    if (key <= 1)
        return 0;
    spin_lock(&reqs_lock);
    struct req *q = req_find(key, 1);
    if (q && (q->key == key || reqs_used < REQS * 3 / 4)) {
        int pending = 0;
        if (q->key == key)
            pending = q->pending;
        else
            reqs_used++;
        *q = v;
        q->key = key;
        q->pending = pending + 1;
        added = 1;
    }
    spin_unlock(&reqs_lock);
    return added;
}

static int req_add(MPI_Request *r, int kind, int persistent, struct comm *c, int peer, int tag,
                   uint64_t bytes) {
    return req_put(key_of(r, sizeof *r), req_entry(kind, persistent, c, peer, tag, bytes));
}

/* Adds the request of a non-blocking collective. */
static int req_add_coll(MPI_Request *r, int op, struct comm *c, uint32_t root, uint64_t sent,
                        uint64_t recvd) {
    struct req v = req_entry(REQ_COLL, 0, c, -1, 0, sent);
    v.op = op;
    v.root = root;
    v.recvd = recvd;
    return req_put(key_of(r, sizeof *r), v);
}

/* Takes request `key` out (unless persistent); 0 if unknown. */
static int req_take(uint64_t key, struct req *out, int drop_persistent) {
    int found = 0;
    spin_lock(&reqs_lock);
    struct req *q = key > 1 ? req_find(key, 0) : NULL;
    if (q) {
        *out = *q;
        found = 1;
        if (drop_persistent || (!q->persistent && --q->pending <= 0)) {
            q->key = 1;
            reqs_used--;
        }
    }
    spin_unlock(&reqs_lock);
    return found;
}

static int req_peek(uint64_t key, struct req *out) {
    int found = 0;
    spin_lock(&reqs_lock);
    struct req *q = key > 1 ? req_find(key, 0) : NULL;
    if (q) {
        *out = *q;
        found = 1;
    }
    spin_unlock(&reqs_lock);
    return found;
}

/* The received envelope in `st`, as (world peer, tag, bytes); 0 if the
 * status says nothing was received (cancelled, MPI_PROC_NULL). */
static int received(const struct comm *c, MPI_Status *st, uint32_t *peer, int *tag, uint64_t *bytes) {
    int cancelled = 0, n = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
        return 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    *peer = world_of(c, st->MPI_SOURCE);
    *tag = st->MPI_TAG;
    *bytes = n == MPI_UNDEFINED || n < 0 ? 0 : (uint64_t)n;
    return 1;
}

/* Request `key` completed with status `st`. */
static void completed(uint64_t key, MPI_Status *st) {
    struct req q;
    if (!req_take(key, &q, 0))
        return;
    if (q.kind == REQ_SEND) {
        EV(PXL_EV_ISEND_DONE, key, 0, 0, 0, 0);
    } else if (q.kind == REQ_RECV) {
        uint32_t peer;
        int tag;
        uint64_t bytes;
        if (received(q.comm, st, &peer, &tag, &bytes))
            EV(PXL_EV_IRECV_DONE, peer, (uint32_t)tag, q.comm_id, bytes, key);
    } else if (q.kind == REQ_COLL) {
        EV(PXL_EV_COLL_END, q.op, q.comm_id, q.root, q.bytes, q.recvd);
    }
}

/* Saved handles of the requests of a Wait/Test call on `n` requests. */
struct saved {
    uint64_t small[32];
    uint64_t *keys;
    MPI_Status small_st[32];
    MPI_Status *st;
};

static void save(struct saved *s, int n, MPI_Request *r, MPI_Status *user_st) {
    s->keys = n <= 32 ? s->small : malloc(sizeof(uint64_t) * (size_t)n);
    s->st = user_st != MPI_STATUSES_IGNORE ? user_st
            : n <= 32 ? s->small_st
                      : malloc(sizeof(MPI_Status) * (size_t)n);
    for (int i = 0; s->keys && i < n; i++)
        s->keys[i] = key_of(&r[i], sizeof r[i]);
}

static void unsave(struct saved *s, MPI_Status *user_st) {
    if (s->keys != s->small)
        free(s->keys);
    if (s->st != user_st && s->st != s->small_st)
        free(s->st);
}

/* === set-up and tear-down === */

/* Ping-pong with rank 0 over a private communicator: each rank's clock
 * against rank 0's, from the fastest of ROUNDS exchanges. */
#define ROUNDS 10
static void sync_clocks(void) {
    int rank, size;
    if (clock_comm == MPI_COMM_NULL)
        return;
    PMPI_Comm_rank(clock_comm, &rank);
    PMPI_Comm_size(clock_comm, &size);
    for (int peer = 1; peer < size; peer++) {
        if (rank == 0) {
            for (int k = 0; k < ROUNDS; k++) {
                uint64_t t;
                PMPI_Recv(&t, 1, MPI_UINT64_T, peer, k, clock_comm, MPI_STATUS_IGNORE);
                t = parallax_pl_now_ns();
                PMPI_Send(&t, 1, MPI_UINT64_T, 0 + peer, k, clock_comm);
            }
        } else if (rank == peer) {
            uint64_t best = UINT64_MAX, local = 0;
            int64_t offset = 0;
            for (int k = 0; k < ROUNDS; k++) {
                uint64_t t0, t1 = parallax_pl_now_ns();
                PMPI_Send(&t1, 1, MPI_UINT64_T, 0, k, clock_comm);
                PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, k, clock_comm, MPI_STATUS_IGNORE);
                uint64_t t2 = parallax_pl_now_ns();
                if (t2 - t1 < best) {
                    best = t2 - t1;
                    local = t1 + (t2 - t1) / 2;
                    offset = (int64_t)t0 - (int64_t)local;
                }
            }
            parallax_pl_clock_offset(0, local, offset, best);
        }
    }
}

static void after_init(int provided) {
    char text[MPI_MAX_LIBRARY_VERSION_STRING + 64];
    int len = 0;
    world_rank = -1;
    world_info();
    add_comm(MPI_COMM_WORLD, 0, 1);
    add_comm(MPI_COMM_SELF, 0, 0);
    uint32_t *all = malloc(sizeof(uint32_t) * (size_t)world_size);
    if (all) {
        for (int i = 0; i < world_size; i++)
            all[i] = (uint32_t)i;
        parallax_pl_group(0, all, (size_t)world_size);
        free(all);
    }
    snprintf(text, sizeof text, "%d", world_size);
    parallax_pl_property("mpi_world_size", text);
    snprintf(text, sizeof text, "%d", world_rank);
    parallax_pl_property("mpi_world_rank", text);
    if (provided >= 0) {
        snprintf(text, sizeof text, "%d", provided);
        parallax_pl_property("mpi_thread_level", text);
    }
    if (PMPI_Get_library_version(text, &len) == MPI_SUCCESS) {
        char *nl = strchr(text, '\n');
        if (nl)
            *nl = 0;
        parallax_pl_property("mpi_library", text);
    }
    const char *env = getenv("OMPI_COMM_WORLD_RANK");
    if (!env)
        env = getenv("PMI_RANK");
    if (env && atoi(env) != world_rank)
        fprintf(stderr, "parallax: warning: the launcher said rank %s, MPI says %d\n", env,
                world_rank);
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &clock_comm) == MPI_SUCCESS)
        sync_clocks();
}

/* The MPI library was not there when this library was loaded (a program
 * that loads it with dlopen, as Python's mpi4py does): the weak PMPI
 * symbols are null and nothing here can work. Say so rather than crash. */
#pragma weak PMPI_Init
#pragma weak PMPI_Comm_rank
static void check_mpi(void) {
    if (!PMPI_Init || !PMPI_Comm_rank) {
        fprintf(stderr, "parallax: MPI was loaded after the interposition library (with "
                        "dlopen?): its wrappers cannot reach it. Link the program with MPI, "
                        "or run it without `parallax run`.\n");
        abort();
    }
}

int MPI_Init(int *argc, char ***argv) {
    check_mpi();
    ENTER("MPI_Init", PXL_SETUP);
    int r = PMPI_Init(argc, argv);
    if (r == MPI_SUCCESS && px_outer)
        after_init(-1);
    LEAVE();
    return r;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    check_mpi();
    ENTER("MPI_Init_thread", PXL_SETUP);
    int r = PMPI_Init_thread(argc, argv, required, provided);
    if (r == MPI_SUCCESS && px_outer)
        after_init(*provided);
    LEAVE();
    return r;
}

int MPI_Finalize(void) {
    ENTER("MPI_Finalize", PXL_SETUP);
    if (px_outer && clock_comm != MPI_COMM_NULL) {
        sync_clocks();
        PMPI_Comm_free(&clock_comm);
    }
    int r = PMPI_Finalize();
    LEAVE();
    return r;
}

int MPI_Abort(MPI_Comm comm, int code) {
    if (!pxl_busy) {
        char text[32];
        snprintf(text, sizeof text, "%d", code);
        pxl_busy = 1;
        parallax_pl_property("mpi_abort", text);
        /* Everything recorded is written before MPI ends the process. */
        parallax_pl_finish();
        pxl_busy = 0;
    }
    return PMPI_Abort(comm, code);
}

int MPI_Pcontrol(const int level, ...) {
    if (!pxl_busy)
        parallax_pl_flow(level != 0);
    return PMPI_Pcontrol(level);
}

/* === point to point === */

#define BLOCKING_SEND(fn, name)                                                        \
    int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) { \
        ENTER(name, PXL_SEND);                                                         \
        if (TR && dest != MPI_PROC_NULL) {                                          \
            struct comm *c = comm_of(comm);                                            \
            EV(PXL_EV_SEND, world_of(c, dest), (uint32_t)tag, c ? c->id : 0,           \
               type_bytes(t, count), 0);                                               \
        }                                                                              \
        int r = P##fn(buf, count, t, dest, tag, comm);                                 \
        LEAVE();                                                                       \
        return r;                                                                      \
    }

BLOCKING_SEND(MPI_Send, "MPI_Send")
BLOCKING_SEND(MPI_Bsend, "MPI_Bsend")
BLOCKING_SEND(MPI_Ssend, "MPI_Ssend")
BLOCKING_SEND(MPI_Rsend, "MPI_Rsend")

#define NONBLOCKING_SEND(fn, name)                                                     \
    int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
           MPI_Request *req) {                                                         \
        ENTER(name, PXL_SEND);                                                         \
        int r = P##fn(buf, count, t, dest, tag, comm, req);                            \
        if (TR && r == MPI_SUCCESS && dest != MPI_PROC_NULL) {                      \
            struct comm *c = comm_of(comm);                                            \
            uint64_t bytes = type_bytes(t, count);                                     \
            req_add(req, REQ_SEND, 0, c, dest, tag, bytes);                            \
            /* The message may have arrived already: dated by the enter. */            \
            EV_PRIOR(PXL_EV_ISEND, world_of(c, dest), (uint32_t)tag, c ? c->id : 0,    \
                     bytes, key_of(req, sizeof *req));                                 \
        }                                                                              \
        LEAVE();                                                                       \
        return r;                                                                      \
    }

NONBLOCKING_SEND(MPI_Isend, "MPI_Isend")
NONBLOCKING_SEND(MPI_Ibsend, "MPI_Ibsend")
NONBLOCKING_SEND(MPI_Issend, "MPI_Issend")
NONBLOCKING_SEND(MPI_Irsend, "MPI_Irsend")

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
             MPI_Status *status) {
    ENTER("MPI_Recv", PXL_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int r = PMPI_Recv(buf, count, t, src, tag, comm, st);
    if (TR && r == MPI_SUCCESS) {
        struct comm *c = comm_of(comm);
        uint32_t peer;
        int rtag;
        uint64_t bytes;
        if (received(c, st, &peer, &rtag, &bytes))
            EV(PXL_EV_RECV, peer, (uint32_t)rtag, c ? c->id : 0, bytes, 0);
    }
    LEAVE();
    return r;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
              MPI_Request *req) {
    ENTER("MPI_Irecv", PXL_RECV);
    int r = PMPI_Irecv(buf, count, t, src, tag, comm, req);
    if (TR && r == MPI_SUCCESS && src != MPI_PROC_NULL) {
        req_add(req, REQ_RECV, 0, comm_of(comm), src, tag, type_bytes(t, count));
        EV(PXL_EV_IRECV, key_of(req, sizeof *req), 0, 0, 0, 0);
    }
    LEAVE();
    return r;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
    ENTER("MPI_Sendrecv", PXL_SENDRECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    struct comm *c = TR ? comm_of(comm) : NULL;
    if (TR && dest != MPI_PROC_NULL)
        EV(PXL_EV_SEND, world_of(c, dest), (uint32_t)stag, c ? c->id : 0,
           type_bytes(stype, scount), 0);
    int r = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, st);
    if (TR && r == MPI_SUCCESS) {
        uint32_t peer;
        int tag;
        uint64_t bytes;
        if (received(c, st, &peer, &tag, &bytes))
            EV(PXL_EV_RECV, peer, (uint32_t)tag, c ? c->id : 0, bytes, 0);
    }
    LEAVE();
    return r;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *status) {
    ENTER("MPI_Sendrecv_replace", PXL_SENDRECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    struct comm *c = TR ? comm_of(comm) : NULL;
    if (TR && dest != MPI_PROC_NULL)
        EV(PXL_EV_SEND, world_of(c, dest), (uint32_t)stag, c ? c->id : 0, type_bytes(t, count), 0);
    int r = PMPI_Sendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, st);
    if (TR && r == MPI_SUCCESS) {
        uint32_t peer;
        int tag;
        uint64_t bytes;
        if (received(c, st, &peer, &tag, &bytes))
            EV(PXL_EV_RECV, peer, (uint32_t)tag, c ? c->id : 0, bytes, 0);
    }
    LEAVE();
    return r;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status) {
    ENTER("MPI_Probe", PXL_WAIT);
    int r = PMPI_Probe(src, tag, comm, status);
    LEAVE();
    return r;
}

/* A probe is a message wait that completes no message: a loop of them
 * before a receive is polling (docs/analysis.md). */
int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    ENTER("MPI_Iprobe", PXL_WAIT);
    int r = PMPI_Iprobe(src, tag, comm, flag, status);
    LEAVE();
    return r;
}

/* Matched probes: the message handle remembers its communicator, which
 * MPI_Mrecv and MPI_Imrecv do not name. */
static void matched(MPI_Message *msg, MPI_Comm comm) {
    if (*msg != MPI_MESSAGE_NULL && *msg != MPI_MESSAGE_NO_PROC)
        req_put(key_of(msg, sizeof *msg), req_entry(REQ_MESSAGE, 0, comm_of(comm), -1, 0, 0));
}

/* The communicator of matched message `key`, forgetting it. */
static struct comm *message_comm(uint64_t key) {
    struct req q;
    return req_take(key, &q, 0) && q.kind == REQ_MESSAGE ? q.comm : NULL;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status) {
    ENTER("MPI_Mprobe", PXL_WAIT);
    int r = PMPI_Mprobe(src, tag, comm, msg, status);
    if (TR && r == MPI_SUCCESS)
        matched(msg, comm);
    LEAVE();
    return r;
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                MPI_Status *status) {
    ENTER("MPI_Improbe", PXL_WAIT);
    int r = PMPI_Improbe(src, tag, comm, flag, msg, status);
    if (TR && r == MPI_SUCCESS && *flag)
        matched(msg, comm);
    LEAVE();
    return r;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Status *status) {
    ENTER("MPI_Mrecv", PXL_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t key = key_of(msg, sizeof *msg);
    int r = PMPI_Mrecv(buf, count, t, msg, st);
    if (TR && r == MPI_SUCCESS) {
        struct comm *c = message_comm(key);
        uint32_t peer;
        int rtag;
        uint64_t bytes;
        if (c && received(c, st, &peer, &rtag, &bytes))
            EV(PXL_EV_RECV, peer, (uint32_t)rtag, c->id, bytes, 0);
    }
    LEAVE();
    return r;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Request *req) {
    ENTER("MPI_Imrecv", PXL_RECV);
    uint64_t key = key_of(msg, sizeof *msg);
    int r = PMPI_Imrecv(buf, count, t, msg, req);
    if (TR && r == MPI_SUCCESS) {
        struct comm *c = message_comm(key);
        if (c && req_add(req, REQ_RECV, 0, c, -1, 0, type_bytes(t, count)))
            EV(PXL_EV_IRECV, key_of(req, sizeof *req), 0, 0, 0, 0);
    }
    LEAVE();
    return r;
}

/* Persistent requests: made by the *_init calls, started (each time) by
 * MPI_Start and MPI_Startall, completed like any other, freed by
 * MPI_Request_free. */

#define SEND_INIT(fn, name)                                                            \
    int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
           MPI_Request *req) {                                                         \
        ENTER(name, PXL_SETUP);                                                        \
        int r = P##fn(buf, count, t, dest, tag, comm, req);                            \
        if (px_outer && r == MPI_SUCCESS && dest != MPI_PROC_NULL)                     \
            req_add(req, REQ_SEND, 1, comm_of(comm), dest, tag, type_bytes(t, count)); \
        LEAVE();                                                                       \
        return r;                                                                      \
    }

SEND_INIT(MPI_Send_init, "MPI_Send_init")
SEND_INIT(MPI_Bsend_init, "MPI_Bsend_init")
SEND_INIT(MPI_Ssend_init, "MPI_Ssend_init")
SEND_INIT(MPI_Rsend_init, "MPI_Rsend_init")

int MPI_Recv_init(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                  MPI_Request *req) {
    ENTER("MPI_Recv_init", PXL_SETUP);
    int r = PMPI_Recv_init(buf, count, t, src, tag, comm, req);
    if (px_outer && r == MPI_SUCCESS && src != MPI_PROC_NULL)
        req_add(req, REQ_RECV, 1, comm_of(comm), src, tag, type_bytes(t, count));
    LEAVE();
    return r;
}

static void started(MPI_Request *req) {
    struct req q;
    uint64_t key = key_of(req, sizeof *req);
    if (!req_peek(key, &q))
        return;
    if (q.kind == REQ_SEND) /* dated by the Start's enter, as in MPI_Isend */
        EV_PRIOR(PXL_EV_ISEND, q.peer, (uint32_t)q.tag, q.comm_id, q.bytes, key);
    else
        EV(PXL_EV_IRECV, key, 0, 0, 0, 0);
}

int MPI_Start(MPI_Request *req) {
    ENTER("MPI_Start", PXL_SEND);
    int r = PMPI_Start(req);
    if (TR && r == MPI_SUCCESS)
        started(req);
    LEAVE();
    return r;
}

int MPI_Startall(int n, MPI_Request reqs_[]) {
    ENTER("MPI_Startall", PXL_SEND);
    int r = PMPI_Startall(n, reqs_);
    for (int i = 0; TR && r == MPI_SUCCESS && i < n; i++)
        started(&reqs_[i]);
    LEAVE();
    return r;
}

int MPI_Request_free(MPI_Request *req) {
    ENTER("MPI_Request_free", PXL_SETUP);
    uint64_t key = key_of(req, sizeof *req);
    int r = PMPI_Request_free(req);
    struct req q;
    if (px_outer)
        req_take(key, &q, 1);
    LEAVE();
    return r;
}

/* === completion: the Wait and Test families === */

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    ENTER("MPI_Wait", PXL_WAIT);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t key = key_of(req, sizeof *req);
    int r = PMPI_Wait(req, st);
    if (TR && r == MPI_SUCCESS)
        completed(key, st);
    LEAVE();
    return r;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    ENTER("MPI_Test", PXL_WAIT);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t key = key_of(req, sizeof *req);
    int r = PMPI_Test(req, flag, st);
    if (TR && r == MPI_SUCCESS && *flag)
        completed(key, st);
    LEAVE();
    return r;
}

int MPI_Waitall(int n, MPI_Request r_[], MPI_Status st_[]) {
    ENTER("MPI_Waitall", PXL_WAIT);
    struct saved s;
    if (!TR) {
        int r = PMPI_Waitall(n, r_, st_);
        LEAVE();
        return r;
    }
    save(&s, n, r_, st_);
    int r = PMPI_Waitall(n, r_, s.st);
    for (int i = 0; r == MPI_SUCCESS && s.keys && i < n; i++)
        completed(s.keys[i], &s.st[i]);
    unsave(&s, st_);
    LEAVE();
    return r;
}

int MPI_Testall(int n, MPI_Request r_[], int *flag, MPI_Status st_[]) {
    ENTER("MPI_Testall", PXL_WAIT);
    struct saved s;
    if (!TR) {
        int r = PMPI_Testall(n, r_, flag, st_);
        LEAVE();
        return r;
    }
    save(&s, n, r_, st_);
    int r = PMPI_Testall(n, r_, flag, s.st);
    for (int i = 0; r == MPI_SUCCESS && *flag && s.keys && i < n; i++)
        completed(s.keys[i], &s.st[i]);
    unsave(&s, st_);
    LEAVE();
    return r;
}

int MPI_Waitany(int n, MPI_Request r_[], int *index, MPI_Status *status) {
    ENTER("MPI_Waitany", PXL_WAIT);
    struct saved s;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (!TR) {
        int r = PMPI_Waitany(n, r_, index, status);
        LEAVE();
        return r;
    }
    save(&s, n, r_, NULL);
    int r = PMPI_Waitany(n, r_, index, st);
    if (r == MPI_SUCCESS && *index != MPI_UNDEFINED && s.keys)
        completed(s.keys[*index], st);
    unsave(&s, NULL);
    LEAVE();
    return r;
}

int MPI_Testany(int n, MPI_Request r_[], int *index, int *flag, MPI_Status *status) {
    ENTER("MPI_Testany", PXL_WAIT);
    struct saved s;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (!TR) {
        int r = PMPI_Testany(n, r_, index, flag, status);
        LEAVE();
        return r;
    }
    save(&s, n, r_, NULL);
    int r = PMPI_Testany(n, r_, index, flag, st);
    if (r == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && s.keys)
        completed(s.keys[*index], st);
    unsave(&s, NULL);
    LEAVE();
    return r;
}

int MPI_Waitsome(int n, MPI_Request r_[], int *outcount, int indices[], MPI_Status st_[]) {
    ENTER("MPI_Waitsome", PXL_WAIT);
    struct saved s;
    if (!TR) {
        int r = PMPI_Waitsome(n, r_, outcount, indices, st_);
        LEAVE();
        return r;
    }
    save(&s, n, r_, st_);
    int r = PMPI_Waitsome(n, r_, outcount, indices, s.st);
    for (int k = 0; r == MPI_SUCCESS && *outcount != MPI_UNDEFINED && s.keys && k < *outcount; k++)
        completed(s.keys[indices[k]], &s.st[k]);
    unsave(&s, st_);
    LEAVE();
    return r;
}

int MPI_Testsome(int n, MPI_Request r_[], int *outcount, int indices[], MPI_Status st_[]) {
    ENTER("MPI_Testsome", PXL_WAIT);
    struct saved s;
    if (!TR) {
        int r = PMPI_Testsome(n, r_, outcount, indices, st_);
        LEAVE();
        return r;
    }
    save(&s, n, r_, st_);
    int r = PMPI_Testsome(n, r_, outcount, indices, s.st);
    for (int k = 0; r == MPI_SUCCESS && *outcount != MPI_UNDEFINED && s.keys && k < *outcount; k++)
        completed(s.keys[indices[k]], &s.st[k]);
    unsave(&s, st_);
    LEAVE();
    return r;
}

/* === collectives ===
 * Begin and end events inside the call's region; the end carries the
 * operation, the communicator's id, the root as a world rank and the bytes
 * this rank sent and received (docs/design/interposition.md). Non-blocking
 * collectives are recorded the same way at their start; their completion
 * is the time spent in the Wait or Test call that completes them. */

struct coll {
    struct comm *c;
    int size, rank, is_root;
    uint32_t root;
};

static struct coll coll_of(MPI_Comm comm, int root) {
    struct coll k;
    k.c = comm_of(comm);
    k.size = k.c ? (k.c->inter ? k.c->remote_size : k.c->size) : 0;
    k.rank = k.c ? k.c->rank : 0;
    if (root == -1000000) {
        k.is_root = 0;
        k.root = PXL_NO_ROOT;
    } else if (k.c && k.c->inter) {
        k.is_root = root == MPI_ROOT;
        k.root = root >= 0 ? world_of(k.c, root) : PXL_NO_ROOT;
    } else {
        k.is_root = root == k.rank;
        k.root = world_of(k.c, root);
    }
    return k;
}

#define NOROOT (-1000000)

#define COLL_BEGIN(name, kind)             \
    ENTER(name, kind);                     \
    if (TR)                                \
        EV(PXL_EV_COLL_BEGIN, 0, 0, 0, 0, 0)

#define COLL_END(op, k, sent, recvd)                                                 \
    do {                                                                             \
        if (TR)                                                                      \
            EV(PXL_EV_COLL_END, op, (k).c ? (k).c->id : 0, (k).root, sent, recvd);   \
        LEAVE();                                                                     \
    } while (0)

/* A non-blocking collective ends where its request completes (a Wait or
 * Test call), so that its waiting is where the program waits; without a
 * place in the request table it ends here. */
#define ICOLL_END(op, k, sent, recvd)                                                        \
    do {                                                                                     \
        if (TR && !(r == MPI_SUCCESS && req_add_coll(req, op, (k).c, (k).root, sent, recvd))) \
            EV(PXL_EV_COLL_END, op, (k).c ? (k).c->id : 0, (k).root, sent, recvd);           \
        LEAVE();                                                                             \
    } while (0)

static uint64_t sum_counts(const int *counts, int n, MPI_Datatype t) {
    long total = 0;
    for (int i = 0; counts && i < n; i++)
        total += counts[i];
    return type_bytes(t, total);
}

int MPI_Barrier(MPI_Comm comm) {
    COLL_BEGIN("MPI_Barrier", PXL_BARRIER);
    int r = PMPI_Barrier(comm);
    struct coll k = TR ? coll_of(comm, NOROOT) : (struct coll){0};
    COLL_END(PXL_OP_BARRIER, k, 0, 0);
    return r;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ibarrier", PXL_BARRIER);
    int r = PMPI_Ibarrier(comm, req);
    struct coll k = TR ? coll_of(comm, NOROOT) : (struct coll){0};
    ICOLL_END(PXL_OP_BARRIER, k, 0, 0);
    return r;
}

/* Bytes of the rooted one-to-all and all-to-one collectives. */
#define BCAST_BYTES(k, count, t)                                     \
    uint64_t sent = 0, recvd = 0;                                    \
    if (TR) {                                                        \
        k = coll_of(comm, root);                                     \
        uint64_t b = type_bytes(t, count);                           \
        if (k.is_root)                                               \
            sent = b;                                                \
        else                                                         \
            recvd = b;                                               \
    }

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
    COLL_BEGIN("MPI_Bcast", PXL_COLLECTIVE);
    struct coll k = {0};
    BCAST_BYTES(k, count, t);
    int r = PMPI_Bcast(buf, count, t, root, comm);
    COLL_END(PXL_OP_BCAST, k, sent, recvd);
    return r;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ibcast", PXL_COLLECTIVE);
    struct coll k = {0};
    BCAST_BYTES(k, count, t);
    int r = PMPI_Ibcast(buf, count, t, root, comm, req);
    ICOLL_END(PXL_OP_BCAST, k, sent, recvd);
    return r;
}

#define REDUCE_BYTES(k, count, t)                  \
    uint64_t sent = 0, recvd = 0;                  \
    if (TR) {                                      \
        k = coll_of(comm, root);                   \
        sent = type_bytes(t, count);               \
        recvd = k.is_root ? sent : 0;              \
    }

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm) {
    COLL_BEGIN("MPI_Reduce", PXL_COLLECTIVE);
    struct coll k = {0};
    REDUCE_BYTES(k, count, t);
    int r = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
    COLL_END(PXL_OP_REDUCE, k, sent, recvd);
    return r;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ireduce", PXL_COLLECTIVE);
    struct coll k = {0};
    REDUCE_BYTES(k, count, t);
    int r = PMPI_Ireduce(sbuf, rbuf, count, t, op, root, comm, req);
    ICOLL_END(PXL_OP_REDUCE, k, sent, recvd);
    return r;
}

#define ALL_BYTES(k, count, t)               \
    uint64_t sent = 0;                       \
    if (TR) {                                \
        k = coll_of(comm, NOROOT);           \
        sent = type_bytes(t, count);         \
    }

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm) {
    COLL_BEGIN("MPI_Allreduce", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
    COLL_END(PXL_OP_ALLREDUCE, k, sent, sent);
    return r;
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Iallreduce", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Iallreduce(sbuf, rbuf, count, t, op, comm, req);
    ICOLL_END(PXL_OP_ALLREDUCE, k, sent, sent);
    return r;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    COLL_BEGIN("MPI_Scan", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Scan(sbuf, rbuf, count, t, op, comm);
    COLL_END(PXL_OP_SCAN, k, sent, sent);
    return r;
}

int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
              MPI_Request *req) {
    COLL_BEGIN("MPI_Iscan", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Iscan(sbuf, rbuf, count, t, op, comm, req);
    ICOLL_END(PXL_OP_SCAN, k, sent, sent);
    return r;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
               MPI_Comm comm) {
    COLL_BEGIN("MPI_Exscan", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Exscan(sbuf, rbuf, count, t, op, comm);
    COLL_END(PXL_OP_SCAN, k, sent, sent);
    return r;
}

int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Iexscan", PXL_COLLECTIVE);
    struct coll k = {0};
    ALL_BYTES(k, count, t);
    int r = PMPI_Iexscan(sbuf, rbuf, count, t, op, comm, req);
    ICOLL_END(PXL_OP_SCAN, k, sent, sent);
    return r;
}

#define GATHER_BYTES(k)                                                             \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, root);                                                    \
        sent = sbuf == MPI_IN_PLACE ? 0 : type_bytes(stype, scount);                \
        recvd = k.is_root ? type_bytes(rtype, (long)rcount * k.size) : 0;           \
    }

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
    COLL_BEGIN("MPI_Gather", PXL_COLLECTIVE);
    struct coll k = {0};
    GATHER_BYTES(k);
    int r = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    COLL_END(PXL_OP_GATHER, k, sent, recvd);
    return r;
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Igather", PXL_COLLECTIVE);
    struct coll k = {0};
    GATHER_BYTES(k);
    int r = PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    ICOLL_END(PXL_OP_GATHER, k, sent, recvd);
    return r;
}

#define GATHERV_BYTES(k)                                                            \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, root);                                                    \
        sent = sbuf == MPI_IN_PLACE ? 0 : type_bytes(stype, scount);                \
        recvd = k.is_root ? sum_counts(rcounts, k.size, rtype) : 0;                 \
    }

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
    COLL_BEGIN("MPI_Gatherv", PXL_COLLECTIVE);
    struct coll k = {0};
    GATHERV_BYTES(k);
    int r = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    COLL_END(PXL_OP_GATHER, k, sent, recvd);
    return r;
}

int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Igatherv", PXL_COLLECTIVE);
    struct coll k = {0};
    GATHERV_BYTES(k);
    int r = PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
    ICOLL_END(PXL_OP_GATHER, k, sent, recvd);
    return r;
}

#define SCATTER_BYTES(k)                                                            \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, root);                                                    \
        sent = k.is_root ? type_bytes(stype, (long)scount * k.size) : 0;            \
        recvd = rbuf == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount);               \
    }

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    COLL_BEGIN("MPI_Scatter", PXL_COLLECTIVE);
    struct coll k = {0};
    SCATTER_BYTES(k);
    int r = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    COLL_END(PXL_OP_SCATTER, k, sent, recvd);
    return r;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Iscatter", PXL_COLLECTIVE);
    struct coll k = {0};
    SCATTER_BYTES(k);
    int r = PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    ICOLL_END(PXL_OP_SCATTER, k, sent, recvd);
    return r;
}

#define SCATTERV_BYTES(k)                                                           \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, root);                                                    \
        sent = k.is_root ? sum_counts(scounts, k.size, stype) : 0;                  \
        recvd = rbuf == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount);               \
    }

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    COLL_BEGIN("MPI_Scatterv", PXL_COLLECTIVE);
    struct coll k = {0};
    SCATTERV_BYTES(k);
    int r = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    COLL_END(PXL_OP_SCATTER, k, sent, recvd);
    return r;
}

int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                  MPI_Request *req) {
    COLL_BEGIN("MPI_Iscatterv", PXL_COLLECTIVE);
    struct coll k = {0};
    SCATTERV_BYTES(k);
    int r = PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
    ICOLL_END(PXL_OP_SCATTER, k, sent, recvd);
    return r;
}

#define ALLGATHER_BYTES(k)                                                          \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        sent = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount); \
        recvd = type_bytes(rtype, (long)rcount * k.size);                           \
    }

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
    COLL_BEGIN("MPI_Allgather", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLGATHER_BYTES(k);
    int r = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    COLL_END(PXL_OP_ALLGATHER, k, sent, recvd);
    return r;
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Iallgather", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLGATHER_BYTES(k);
    int r = PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    ICOLL_END(PXL_OP_ALLGATHER, k, sent, recvd);
    return r;
}

#define ALLGATHERV_BYTES(k)                                                         \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        sent = sbuf == MPI_IN_PLACE ? (k.rank < k.size ? type_bytes(rtype, rcounts[k.rank]) : 0) \
                                    : type_bytes(stype, scount);                    \
        recvd = sum_counts(rcounts, k.size, rtype);                                 \
    }

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    COLL_BEGIN("MPI_Allgatherv", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLGATHERV_BYTES(k);
    int r = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    COLL_END(PXL_OP_ALLGATHER, k, sent, recvd);
    return r;
}

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                    MPI_Request *req) {
    COLL_BEGIN("MPI_Iallgatherv", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLGATHERV_BYTES(k);
    int r = PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
    ICOLL_END(PXL_OP_ALLGATHER, k, sent, recvd);
    return r;
}

#define ALLTOALL_BYTES(k)                                                           \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        recvd = type_bytes(rtype, (long)rcount * k.size);                           \
        sent = sbuf == MPI_IN_PLACE ? recvd : type_bytes(stype, (long)scount * k.size); \
    }

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
    COLL_BEGIN("MPI_Alltoall", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLTOALL_BYTES(k);
    int r = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    COLL_END(PXL_OP_ALLTOALL, k, sent, recvd);
    return r;
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ialltoall", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLTOALL_BYTES(k);
    int r = PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    ICOLL_END(PXL_OP_ALLTOALL, k, sent, recvd);
    return r;
}

#define ALLTOALLV_BYTES(k)                                                          \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        recvd = sum_counts(rcounts, k.size, rtype);                                 \
        sent = sbuf == MPI_IN_PLACE ? recvd : sum_counts(scounts, k.size, stype);   \
    }

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
    COLL_BEGIN("MPI_Alltoallv", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLTOALLV_BYTES(k);
    int r = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    COLL_END(PXL_OP_ALLTOALL, k, sent, recvd);
    return r;
}

int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ialltoallv", PXL_COLLECTIVE);
    struct coll k = {0};
    ALLTOALLV_BYTES(k);
    int r = PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                            req);
    ICOLL_END(PXL_OP_ALLTOALL, k, sent, recvd);
    return r;
}

#define REDSCAT_BYTES(k)                                                            \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        sent = sum_counts(rcounts, k.size, t);                                      \
        recvd = k.rank < k.size ? type_bytes(t, rcounts[k.rank]) : 0;               \
    }

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t,
                       MPI_Op op, MPI_Comm comm) {
    COLL_BEGIN("MPI_Reduce_scatter", PXL_COLLECTIVE);
    struct coll k = {0};
    REDSCAT_BYTES(k);
    int r = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, t, op, comm);
    COLL_END(PXL_OP_REDUCE_SCATTER, k, sent, recvd);
    return r;
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ireduce_scatter", PXL_COLLECTIVE);
    struct coll k = {0};
    REDSCAT_BYTES(k);
    int r = PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, t, op, comm, req);
    ICOLL_END(PXL_OP_REDUCE_SCATTER, k, sent, recvd);
    return r;
}

#define REDSCATB_BYTES(k)                                                           \
    uint64_t sent = 0, recvd = 0;                                                   \
    if (TR) {                                                                       \
        k = coll_of(comm, NOROOT);                                                  \
        recvd = type_bytes(t, rcount);                                              \
        sent = recvd * (uint64_t)k.size;                                            \
    }

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype t, MPI_Op op,
                             MPI_Comm comm) {
    COLL_BEGIN("MPI_Reduce_scatter_block", PXL_COLLECTIVE);
    struct coll k = {0};
    REDSCATB_BYTES(k);
    int r = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, t, op, comm);
    COLL_END(PXL_OP_REDUCE_SCATTER, k, sent, recvd);
    return r;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype t,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req) {
    COLL_BEGIN("MPI_Ireduce_scatter_block", PXL_COLLECTIVE);
    struct coll k = {0};
    REDSCATB_BYTES(k);
    int r = PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, t, op, comm, req);
    ICOLL_END(PXL_OP_REDUCE_SCATTER, k, sent, recvd);
    return r;
}

/* === communicators and groups ===
 * Constructors are collectives (op other) on the parent communicator; the
 * new communicator's members, as world ranks, are a group definition under
 * its id. Group calls are local: regions only. */

#define CONSTRUCTOR_BEGIN(name, parent)     \
    COLL_BEGIN(name, PXL_COLLECTIVE);       \
    struct coll k = {0};                    \
    if (TR)                                 \
        k = coll_of(parent, NOROOT)

#define CONSTRUCTOR_END(r, newcomm)                         \
    if (px_outer && (r) == MPI_SUCCESS)                     \
        constructed(newcomm);                               \
    COLL_END(PXL_OP_OTHER, k, 0, 0)

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_dup", comm);
    int r = PMPI_Comm_dup(comm, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_dup_with_info", comm);
    int r = PMPI_Comm_dup_with_info(comm, info, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_split", comm);
    int r = PMPI_Comm_split(comm, color, key, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_split_type", comm);
    int r = PMPI_Comm_split_type(comm, type, key, info, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_create", comm);
    int r = PMPI_Comm_create(comm, group, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_create_group", comm);
    int r = PMPI_Comm_create_group(comm, group, tag, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Cart_create", comm);
    int r = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Cart_sub", comm);
    int r = PMPI_Cart_sub(comm, remain, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Graph_create", comm);
    int r = PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int nodes[], const int degrees[],
                          const int targets[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Dist_graph_create", comm);
    int r = PMPI_Dist_graph_create(comm, n, nodes, degrees, targets, weights, info, reorder,
                                   newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Dist_graph_create_adjacent", comm);
    int r = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                            destinations, destweights, info, reorder, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader,
                         int tag, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Intercomm_create", local);
    int r = PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *newcomm) {
    CONSTRUCTOR_BEGIN("MPI_Intercomm_merge", inter);
    int r = PMPI_Intercomm_merge(inter, high, newcomm);
    CONSTRUCTOR_END(r, *newcomm);
    return r;
}

int MPI_Comm_free(MPI_Comm *comm) {
    CONSTRUCTOR_BEGIN("MPI_Comm_free", *comm);
    int r = PMPI_Comm_free(comm);
    COLL_END(PXL_OP_OTHER, k, 0, 0);
    return r;
}

#define GROUP_CALL(fn, name, params, args) \
    int fn params {                        \
        ENTER(name, PXL_SETUP);            \
        int r = P##fn args;                \
        LEAVE();                           \
        return r;                          \
    }

GROUP_CALL(MPI_Comm_group, "MPI_Comm_group", (MPI_Comm comm, MPI_Group *g), (comm, g))
GROUP_CALL(MPI_Group_incl, "MPI_Group_incl", (MPI_Group g, int n, const int ranks[], MPI_Group *ng),
           (g, n, ranks, ng))
GROUP_CALL(MPI_Group_excl, "MPI_Group_excl", (MPI_Group g, int n, const int ranks[], MPI_Group *ng),
           (g, n, ranks, ng))
GROUP_CALL(MPI_Group_union, "MPI_Group_union", (MPI_Group a, MPI_Group b, MPI_Group *ng),
           (a, b, ng))
GROUP_CALL(MPI_Group_intersection, "MPI_Group_intersection",
           (MPI_Group a, MPI_Group b, MPI_Group *ng), (a, b, ng))
GROUP_CALL(MPI_Group_difference, "MPI_Group_difference",
           (MPI_Group a, MPI_Group b, MPI_Group *ng), (a, b, ng))
GROUP_CALL(MPI_Group_free, "MPI_Group_free", (MPI_Group *g), (g))
