/* cubert — the in-process transport (transport.h): every member is a client of this process,
   so the members' staged host chunks are combined directly in host memory. Each member thread
   of the engine takes one part: for reductions, part p reduces elements [p/parts, (p+1)/parts)
   of the chunk over every member's input (in rank order) and writes them to every member's
   output buffer, a reduce-scatter across the member threads followed, in the engine, by every
   member staging the whole result in (the all-gather). reduce_scatter splits by result piece,
   all_gather and broadcast copy pieces.

   Point-to-point (cubert_comm_send_from / _recv_at): a send is posted to a mailbox when it is
   queued (p2p_post), with a host buffer of its bytes; its job copies the sender's staged chunks
   into that buffer. A recv, when it is queued, takes the oldest posted send from its peer to
   it with its tag (calls are queued in order, so that send's job runs first) and its job
   copies the buffer into the receiver's output. The message is freed when both jobs are done
   (or at destroy, for a send nobody received). */
#include "comm/inproc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "comm/reduce.h"
#include "comm/transport.h"

typedef struct p2p_message {
  size_t from, to;
  int tag;
  cubert_dtype dtype;
  size_t count, bytes;
  unsigned char *data;
  _Atomic size_t filled; /* bytes the send's job copied in */
  /* Set when the send's job failed, with its error's text (malloc'd; NULL without memory).
     Written by the engine's worker before it starts the recv's job, which reads them. */
  int send_failed;
  char *send_error;
  _Atomic int refs; /* the send job and (the mailbox until a recv takes it, then) the recv job */
  int claimed;      /* a recv took it (mailbox lock) */
  struct p2p_message *next;
} p2p_message;

typedef struct inproc_transport {
  cubert_comm_transport base;
  pthread_mutex_t lock; /* the mailbox */
  p2p_message *head, *tail;
} inproc_transport;

static void message_put(p2p_message *m) {
  if (atomic_fetch_sub(&m->refs, 1) != 1) return;
  free(m->data);
  free(m->send_error);
  free(m);
}

/* Elements [begin, end) of `count` for part `part` of `parts`, in multiples of 16 elements
   (64-byte lines for 4-byte types) so that two parts never write one cache line. */
static void part_range(size_t count, size_t part, size_t parts, size_t *begin, size_t *end) {
  size_t units = (count + 15) / 16;
  size_t b = units * part / parts * 16, e = units * (part + 1) / parts * 16;
  *begin = b < count ? b : count;
  *end = e < count ? e : count;
}

/* all_reduce and reduce: part `part` reduces its range of the chunk over every member's input,
   in rank order, into every member's output. */
static void reduce_range(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                         size_t parts, const void **ins, void **outs) {
  size_t n = t->local_count, es = c->elem_size, begin = 0, end = 0;
  part_range(c->count, part, parts, &begin, &end);
  if (begin >= end) return;
  for (size_t i = 0; i < n; ++i) {
    ins[i] = (const char *)c->in[i] + begin * es;
    outs[i] = c->out[i] ? (char *)c->out[i] + begin * es : NULL;
  }
  cubert_comm_host_reduce_n(outs, n, ins, n, end - begin, c->dtype, c->op, t->size);
}

/* reduce_scatter: part `part` reduces every parts-th result piece into its member's output. */
static void reduce_pieces(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                          size_t parts, const void **ins) {
  size_t n = t->local_count, es = c->elem_size;
  for (size_t j = part; j < n; j += parts) {
    for (size_t i = 0; i < n; ++i) ins[i] = (const char *)c->in[i] + j * c->count * es;
    cubert_comm_host_reduce_n(&c->out[j], 1, ins, n, c->count, c->dtype, c->op, t->size);
  }
}

/* The reductions, with the members' input and output pointers on the stack for up to 64
   members. OUT_OF_MEMORY beyond that when the arrays cannot be allocated. */
static cubert_status combine_reduce(cubert_comm_transport *t, const cubert_comm_chunk *c,
                                    size_t part, size_t parts) {
  size_t n = t->local_count;
  const void *in_at[64];
  void *out_at[64];
  const void **ins = n <= 64 ? in_at : malloc(n * sizeof *ins);
  void **outs = n <= 64 ? out_at : malloc(n * sizeof *outs);
  int allocated = ins && outs;
  if (allocated && c->kind == CUBERT_COMM_REDUCE_SCATTER)
    reduce_pieces(t, c, part, parts, ins);
  else if (allocated)
    reduce_range(t, c, part, parts, ins, outs);
  if (ins != in_at) free((void *)ins);
  if (outs != out_at) free(outs);
  return allocated ? NULL : cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
}

/* all_gather: part `part` copies every parts-th member's piece into every member's output. */
static void combine_all_gather(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                               size_t parts) {
  size_t n = t->local_count, es = c->elem_size;
  for (size_t j = part; j < n; j += parts)
    for (size_t i = 0; i < n; ++i) {
      if (!c->out[i]) continue;
      char *dst = (char *)c->out[i] + j * c->count * es;
      if (dst != c->in[j]) memcpy(dst, c->in[j], c->count * es);
    }
}

/* broadcast: part `part` copies its range of the root's input into every other output. */
static void combine_broadcast(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                              size_t parts) {
  size_t n = t->local_count, es = c->elem_size, begin = 0, end = 0;
  part_range(c->count, part, parts, &begin, &end);
  for (size_t i = 0; i < n && begin < end; ++i)
    if (c->out[i] && i != c->root)
      memcpy((char *)c->out[i] + begin * es, (const char *)c->in[c->root] + begin * es,
             (end - begin) * es);
}

/* A send's job: part `part` copies its range of the sender's staged chunk into the message. */
static void combine_send(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                         size_t parts) {
  size_t es = c->elem_size, begin = 0, end = 0;
  p2p_message *msg = c->message;
  part_range(c->count, part, parts, &begin, &end);
  if (msg && begin < end) {
    memcpy(msg->data + (c->offset + begin) * es,
           (const char *)c->in[c->self - t->rank] + begin * es, (end - begin) * es);
    atomic_fetch_add(&msg->filled, (end - begin) * es);
  }
}

/* A recv's job: part `part` copies its range of the message into the receiver's output.
   EXECUTION, the output untouched, when the matching send failed or did not fill the message
   (quoting the send's error: a failed command on the sender's stream, say). */
static cubert_status combine_recv(cubert_comm_transport *t, const cubert_comm_chunk *c, size_t part,
                                  size_t parts) {
  size_t es = c->elem_size, begin = 0, end = 0;
  p2p_message *msg = c->message;
  if (!msg || msg->send_failed || atomic_load(&msg->filled) != msg->bytes)
    return cubert_status_make(
        CUBERT_CODE_EXECUTION,
        "cubert_comm_recv_at: rank %zu received nothing from rank %zu (tag "
        "%d) and its buf was not written: the matching send failed (%s)",
        c->self, c->peer, c->tag,
        msg && msg->send_error ? msg->send_error : "before its data was complete");
  part_range(c->count, part, parts, &begin, &end);
  if (begin < end)
    memcpy((char *)c->out[c->self - t->rank] + begin * es, msg->data + (c->offset + begin) * es,
           (end - begin) * es);
  return NULL;
}

static cubert_status inproc_combine(cubert_comm_transport *t, const cubert_comm_chunk *c,
                                    size_t part, size_t parts) {
  switch (c->kind) {
    case CUBERT_COMM_ALL_REDUCE:
    case CUBERT_COMM_REDUCE:
    case CUBERT_COMM_REDUCE_SCATTER:
      return combine_reduce(t, c, part, parts);
    case CUBERT_COMM_ALL_GATHER:
      combine_all_gather(t, c, part, parts);
      return NULL;
    case CUBERT_COMM_BROADCAST:
      combine_broadcast(t, c, part, parts);
      return NULL;
    case CUBERT_COMM_SEND:
      combine_send(t, c, part, parts);
      return NULL;
    case CUBERT_COMM_RECV:
      return combine_recv(t, c, part, parts);
    default:
      return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                                "the in-process transport: unknown operation %d", (int)c->kind);
  }
}

static cubert_status inproc_p2p_post(cubert_comm_transport *base, cubert_comm_kind kind,
                                     size_t self, size_t peer, int tag, cubert_dtype dtype,
                                     size_t count, const char *fn, void **out_message) {
  inproc_transport *t = (inproc_transport *)base;
  *out_message = NULL;
  size_t es = cubert_comm_dtype_size(dtype);
  if (kind == CUBERT_COMM_SEND) {
    p2p_message *m = calloc(1, sizeof *m);
    if (m) m->data = malloc(count * es > 0 ? count * es : 1);
    if (!m || !m->data) {
      free(m);
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "%s: no host memory for the %zu-byte message", fn, count * es);
    }
    m->from = self;
    m->to = peer;
    m->tag = tag;
    m->dtype = dtype;
    m->count = count;
    m->bytes = count * es;
    atomic_init(&m->filled, 0);
    atomic_init(&m->refs, 2);
    pthread_mutex_lock(&t->lock);
    if (t->tail)
      t->tail->next = m;
    else
      t->head = m;
    t->tail = m;
    pthread_mutex_unlock(&t->lock);
    *out_message = m;
    return NULL;
  }
  pthread_mutex_lock(&t->lock);
  p2p_message *prev = NULL, *m = t->head;
  while (m && !(m->from == peer && m->to == self && m->tag == tag)) {
    prev = m;
    m = m->next;
  }
  cubert_status s = NULL;
  if (!m)
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "%s: no send from rank %zu to rank %zu with tag %d is queued; in one "
                           "process the cubert_comm_send_from must be queued before its recv",
                           fn, peer, self, tag);
  else if (m->count != count || m->dtype != dtype)
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "%s: rank %zu receives %zu %s from rank %zu (tag %d), but the queued "
                           "send has %zu %s: send and recv must agree on count and dtype",
                           fn, self, count, cubert_dtype_name(dtype), peer, tag, m->count,
                           cubert_dtype_name(m->dtype));
  if (!s) { /* the recv job takes the mailbox's reference */
    if (prev)
      prev->next = m->next;
    else
      t->head = m->next;
    if (t->tail == m) t->tail = prev;
    m->next = NULL;
    m->claimed = 1;
    *out_message = m;
  }
  pthread_mutex_unlock(&t->lock);
  return s;
}

static void inproc_p2p_release(cubert_comm_transport *base, cubert_comm_kind kind, void *message,
                               cubert_status error) {
  (void)base;
  p2p_message *m = message;
  if (kind == CUBERT_COMM_SEND && error) {
    m->send_failed = 1;
    m->send_error = strdup(cubert_status_message(error));
  }
  message_put(m);
}

static void inproc_destroy(cubert_comm_transport *base) {
  inproc_transport *t = (inproc_transport *)base;
  /* every job is done: what is left are sends nobody received (their send jobs' references
     are gone, the mailbox's is the last) */
  for (p2p_message *m = t->head, *next = NULL; m; m = next) {
    next = m->next;
    message_put(m);
  }
  pthread_mutex_destroy(&t->lock);
  free(t);
}

static const cubert_comm_transport_vtable inproc_vtable = {
    .name = "inproc",
    .combine = inproc_combine,
    .destroy = inproc_destroy,
    .p2p_post = inproc_p2p_post,
    .p2p_release = inproc_p2p_release,
};

cubert_comm_transport *cubert_comm_inproc_create(size_t size) {
  inproc_transport *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->lock, NULL);
  t->base.vtable = &inproc_vtable;
  t->base.size = size;
  t->base.rank = 0;
  t->base.local_count = size;
  t->base.parts_split = 1;
  return &t->base;
}
