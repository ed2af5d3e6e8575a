/* cubert — a minimal stand-in for the communicator engine (lib/comm/engine.c), compiled only
   while the tree has no lib/comm/engine.c (CMakeLists.txt), so that the MPI component works
   before the engine lands; delete it then.

   It drives a transport (comm/transport.h) for communicators of ONE local member (MPI)
   SYNCHRONOUSLY on the calling thread: per chunk, the member's input is read into host memory
   (cubert_client_read_range: after the stream's earlier work), combined by the transport and
   written back (cubert_client_write: queued on the stream), so the stream order holds but the
   call blocks until the exchange is done, and an error comes back from the call itself. On
   the CPU server, all_reduce, reduce, broadcast, send and recv run on the buffers in place
   (cubert_cpu_handle_ptr): no staging copies. In-process communicators (cubert_comm_create)
   need the real engine: UNAVAILABLE here. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"
#include "cubert/cpu.h"

/* Staged chunks; in place (CPU server) the chunks are much larger: every chunk costs the
   transport 2 (P-1) ring steps, and with oversubscribed ranks (4 on 2 cores) each step waits
   for the peers to be scheduled (about 10 ms): 256 MiB in 4 MiB chunks at 4 ranks took 3.8 s,
   in one chunk 1.7 s. */
#define FALLBACK_CHUNK_BYTES (4u << 20)
#define FALLBACK_DIRECT_CHUNK_BYTES (256u << 20)

struct cubert_comm {
  cubert_comm_transport *transport;
  cubert_client *client;
  uint64_t sequence;
  pthread_mutex_t mu; /* one call at a time */
};

CUBERT_API cubert_status cubert_comm_create(cubert_client *const *clients, size_t count,
                                            cubert_comm **out) {
  (void)clients;
  (void)count;
  if (out) *out = NULL;
  return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                            "cubert_comm_create: in-process communicators need the "
                            "communicator engine (lib/comm/engine.c), not in this build");
}

cubert_status cubert_comm_create_with_transport(cubert_client *const *clients, size_t local_count,
                                                cubert_comm_transport *transport,
                                                cubert_comm **out) {
  if (local_count != 1 || !clients || !clients[0]) {
    transport->vtable->destroy(transport);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "communicator: this build handles one local member with a "
                              "non-NULL client");
  }
  if (!cubert_client_properties(clients[0])) {
    transport->vtable->destroy(transport);
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "communicator: the client was released");
  }
  cubert_comm *c = calloc(1, sizeof *c);
  if (!c) {
    transport->vtable->destroy(transport);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "communicator");
  }
  c->transport = transport;
  c->client = cubert_client_retain(clients[0]);
  pthread_mutex_init(&c->mu, NULL);
  *out = c;
  return NULL;
}

cubert_comm_transport *cubert_comm_transport_of(cubert_comm *comm) {
  return comm ? comm->transport : NULL;
}

CUBERT_API void cubert_comm_release(cubert_comm *comm) {
  if (!comm) return;
  comm->transport->vtable->destroy(comm->transport);
  cubert_client_release(comm->client);
  pthread_mutex_destroy(&comm->mu);
  free(comm);
}
CUBERT_API size_t cubert_comm_size(const cubert_comm *comm) {
  return comm ? comm->transport->size : 0;
}
CUBERT_API size_t cubert_comm_local_count(const cubert_comm *comm) {
  return comm ? comm->transport->local_count : 0;
}
CUBERT_API size_t cubert_comm_rank(const cubert_comm *comm) {
  return comm ? comm->transport->rank : 0;
}

/* One call: kind, arguments, the public name for errors. */
typedef struct call {
  cubert_comm_kind kind;
  const char *what;
  cubert_handle *src, *dst;
  size_t count; /* elements per piece */
  cubert_dtype dtype;
  cubert_reduce_op op;
  size_t root, peer;
  int tag;
} call;

static cubert_status check_handle(const call *k, cubert_handle *h, const char *name,
                                  size_t pieces, size_t es) {
  if (!h)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s[0] (member 0) is NULL",
                              k->what, name);
  uint64_t need = (uint64_t)k->count * pieces * es, held = cubert_handle_size(h);
  if (held < need)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s[0] (member 0) holds %llu bytes, the call needs %llu", k->what,
                              name, (unsigned long long)held, (unsigned long long)need);
  return NULL;
}

static cubert_status validate(cubert_comm *comm, const call *k) {
  if (!comm)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: comm is NULL", k->what);
  size_t P = comm->transport->size, es = cubert_comm_dtype_size(k->dtype);
  if (!es)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: dtype %s is not supported (f32, f64, i32)", k->what,
                              cubert_dtype_name(k->dtype));
  if ((k->kind == CUBERT_COMM_ALL_REDUCE || k->kind == CUBERT_COMM_REDUCE ||
       k->kind == CUBERT_COMM_REDUCE_SCATTER) &&
      (unsigned)k->op > (unsigned)CUBERT_REDUCE_MIN)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: reduce op %d is not supported (sum, max, min)", k->what,
                              (int)k->op);
  if ((k->kind == CUBERT_COMM_BROADCAST || k->kind == CUBERT_COMM_REDUCE) && k->root >= P)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: root %zu is not a rank (0..%zu)",
                              k->what, k->root, P - 1);
  size_t pin = k->kind == CUBERT_COMM_REDUCE_SCATTER ? P : 1;
  size_t pout = k->kind == CUBERT_COMM_ALL_GATHER ? P : 1;
  cubert_status st = NULL;
  if (k->kind != CUBERT_COMM_RECV) st = check_handle(k, k->src, "src", pin, es);
  int dst_needed = k->kind != CUBERT_COMM_SEND && k->kind != CUBERT_COMM_BROADCAST &&
                   !(k->kind == CUBERT_COMM_REDUCE && comm->transport->rank != k->root && !k->dst);
  if (!st && dst_needed) st = check_handle(k, k->dst, "dst", pout, es);
  if (!st && (k->kind == CUBERT_COMM_ALL_GATHER || k->kind == CUBERT_COMM_REDUCE_SCATTER) &&
      k->src == k->dst)
    st = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                            "%s: src and dst of member 0 are the same handle; this call needs "
                            "two different handles",
                            k->what);
  return st;
}

/* Host pointers of src/dst on the CPU server (after their earlier work), else NULL. */
static cubert_status cpu_ptr(cubert_comm *comm, cubert_handle *h, char **out) {
  *out = NULL;
  if (!h) return NULL;
  void *p = NULL;
  cubert_status st = cubert_cpu_handle_ptr(comm->client, h, &p, NULL);
  if (st && cubert_status_code(st) == CUBERT_CODE_INVALID_ARGUMENT) { /* not the CPU server */
    cubert_status_free(st);
    return NULL;
  }
  *out = p;
  return st;
}

static cubert_status run(cubert_comm *comm, const call *k) {
  cubert_status st = validate(comm, k);
  if (st || k->count == 0) return st;
  cubert_comm_transport *t = comm->transport;
  size_t P = t->size, r = t->rank, es = cubert_comm_dtype_size(k->dtype), n = k->count;
  size_t pin = k->kind == CUBERT_COMM_REDUCE_SCATTER ? P : 1;
  size_t pout = k->kind == CUBERT_COMM_ALL_GATHER ? P : 1;
  int is_root = r == k->root;
  cubert_handle *src = k->kind == CUBERT_COMM_BROADCAST ? (is_root ? k->src : NULL) : k->src;
  cubert_handle *dst = k->kind == CUBERT_COMM_BROADCAST ? k->src : k->dst;
  if (k->kind == CUBERT_COMM_REDUCE && !is_root) dst = NULL; /* the root's result only */
  if (k->kind == CUBERT_COMM_BROADCAST && is_root) dst = NULL;  /* the root keeps its data */
  if (k->kind == CUBERT_COMM_SEND) dst = NULL;
  if (k->kind == CUBERT_COMM_RECV) src = NULL;

  /* in place on the CPU server for the contiguous calls */
  char *sp = NULL, *dp = NULL;
  int direct = pin == 1 && pout == 1;
  if (direct) st = cpu_ptr(comm, src, &sp);
  if (!st && direct) st = cpu_ptr(comm, dst, &dp);
  if (st) return st;
  direct = direct && (src ? sp != NULL : 1) && (dst ? dp != NULL : 1) && (sp || dp);
  size_t cn = (direct ? FALLBACK_DIRECT_CHUNK_BYTES : FALLBACK_CHUNK_BYTES) /
              (es * (pin > pout ? pin : pout));
  if (cn == 0) cn = 1;
  char *hin = NULL, *hout = NULL;
  if (!direct) hin = malloc(pin * cn * es);
  if (!direct) hout = malloc(pout * cn * es);
  if (!direct && (!hin || !hout)) {
    free(hin);
    free(hout);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "%s: staging buffers", k->what);
  }
  pthread_mutex_lock(&comm->mu);
  uint64_t seq = comm->sequence++;
  size_t chunks = (n + cn - 1) / cn;
  for (size_t ci = 0; ci < chunks && !st; ++ci) {
    size_t off = ci * cn, cnt = n - off < cn ? n - off : cn;
    const void *in[1] = {NULL};
    void *out = NULL;
    if (direct) {
      in[0] = sp ? sp + off * es : NULL;
      out = dp ? dp + off * es : NULL;
    } else {
      for (size_t j = 0; j < pin && src && !st; ++j)
        st = cubert_client_read_range(comm->client, src, (j * n + off) * es, hin + j * cnt * es,
                                      cnt * es);
      in[0] = src ? hin : NULL;
      out = dst ? hout : NULL;
    }
    void *outs[1] = {out};
    if (st) break;
    cubert_comm_chunk c = {.kind = k->kind, .dtype = k->dtype, .op = k->op, .elem_size = es,
                           .root = k->root, .peer = k->peer, .tag = k->tag, .sequence = seq,
                           .index = ci, .chunks = chunks, .offset = off, .count = cnt, .in = in,
                           .out = outs};
    st = t->vtable->combine(t, &c, 0, 1);
    if (st || direct || !dst) continue;
    if (k->kind == CUBERT_COMM_ALL_GATHER) {
      for (size_t j = 0; j < P && !st; ++j)
        st = cubert_client_write(comm->client, dst, (j * n + off) * es, hout + j * cnt * es,
                                 cnt * es);
    } else {
      st = cubert_client_write(comm->client, dst, off * es, hout, cnt * es);
    }
  }
  pthread_mutex_unlock(&comm->mu);
  free(hin);
  free(hout);
  return st;
}

static cubert_status check_arrays(cubert_comm *comm, const char *what, cubert_handle *const *a,
                                  const char *name) {
  if (!comm) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: comm is NULL", what);
  if (!a) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s is NULL", what, name);
  return NULL;
}

CUBERT_API cubert_status cubert_comm_all_reduce(cubert_comm *comm, cubert_handle *const *src,
                                                cubert_handle *const *dst, size_t count,
                                                cubert_dtype dtype, cubert_reduce_op op) {
  const char *what = "cubert_comm_all_reduce";
  cubert_status st = check_arrays(comm, what, src, "src");
  if (!st) st = check_arrays(comm, what, dst, "dst");
  if (st) return st;
  call k = {CUBERT_COMM_ALL_REDUCE, what, src[0], dst[0], count, dtype, op, 0, 0, 0};
  return run(comm, &k);
}
CUBERT_API cubert_status cubert_comm_broadcast(cubert_comm *comm, cubert_handle *const *buf,
                                               size_t count, cubert_dtype dtype, size_t root) {
  const char *what = "cubert_comm_broadcast";
  cubert_status st = check_arrays(comm, what, buf, "buf");
  if (st) return st;
  call k = {CUBERT_COMM_BROADCAST, what, buf[0], buf[0], count, dtype, CUBERT_REDUCE_SUM, root, 0, 0};
  return run(comm, &k);
}
CUBERT_API cubert_status cubert_comm_reduce(cubert_comm *comm, cubert_handle *const *src,
                                            cubert_handle *const *dst, size_t count,
                                            cubert_dtype dtype, cubert_reduce_op op, size_t root) {
  const char *what = "cubert_comm_reduce";
  cubert_status st = check_arrays(comm, what, src, "src");
  if (!st) st = check_arrays(comm, what, dst, "dst");
  if (st) return st;
  call k = {CUBERT_COMM_REDUCE, what, src[0], dst[0], count, dtype, op, root, 0, 0};
  return run(comm, &k);
}
CUBERT_API cubert_status cubert_comm_all_gather(cubert_comm *comm, cubert_handle *const *src,
                                                cubert_handle *const *dst,
                                                size_t count_per_member, cubert_dtype dtype) {
  const char *what = "cubert_comm_all_gather";
  cubert_status st = check_arrays(comm, what, src, "src");
  if (!st) st = check_arrays(comm, what, dst, "dst");
  if (st) return st;
  call k = {CUBERT_COMM_ALL_GATHER, what, src[0], dst[0], count_per_member, dtype,
            CUBERT_REDUCE_SUM, 0, 0, 0};
  return run(comm, &k);
}
CUBERT_API cubert_status cubert_comm_reduce_scatter(cubert_comm *comm, cubert_handle *const *src,
                                                    cubert_handle *const *dst,
                                                    size_t count_per_member, cubert_dtype dtype,
                                                    cubert_reduce_op op) {
  const char *what = "cubert_comm_reduce_scatter";
  cubert_status st = check_arrays(comm, what, src, "src");
  if (!st) st = check_arrays(comm, what, dst, "dst");
  if (st) return st;
  call k = {CUBERT_COMM_REDUCE_SCATTER, what, src[0], dst[0], count_per_member, dtype, op, 0, 0, 0};
  return run(comm, &k);
}

cubert_status cubert_comm_queue_send(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what) {
  call k = {CUBERT_COMM_SEND, what, buf, NULL, count, dtype, CUBERT_REDUCE_SUM, 0, peer, tag};
  return run(comm, &k);
}
cubert_status cubert_comm_queue_recv(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what) {
  call k = {CUBERT_COMM_RECV, what, NULL, buf, count, dtype, CUBERT_REDUCE_SUM, 0, peer, tag};
  return run(comm, &k);
}
