/* cubert — a collective call: validation, ordering on the members' streams, queuing.

   Every argument is checked for every member before anything is queued, so a call that fails
   changed nothing. Then, member after member, under its device lock and on the calling
   stream's slot: the stream waits for other streams that used src/dst (the core's
   cross-stream order, stream/resolve.c) and an event "src ready" is recorded on it. The job
   then goes to the worker, and only then, member after member, a gate is queued on each
   stream (server.h) and src/dst are marked as used by it at the gate, so that later work of
   any stream on them comes after the collective (order_leg says why in this order). */
#include "comm/submit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "call_scope.h"
#include "comm/engine.h"
#include "comm/member.h"
#include "comm/reduce.h"
#include "cubert/server/gates.h"
#include "device.h"
#include "handle.h"
#include "stream/resolve.h"
#include "stream/slots.h"

typedef struct comm_call {
  const char *fn;
  cubert_comm_kind kind;
  cubert_dtype dtype;
  cubert_reduce_op op;
  size_t root, peer;
  size_t self; /* send, recv: the rank of the local member that sends / receives */
  int tag;
  size_t count; /* elements per piece */
  cubert_handle *const *src, *const *dst;
  const char *src_name, *dst_name;
} comm_call;

const char *cubert_comm_kind_name(cubert_comm_kind kind) {
  switch (kind) {
    case CUBERT_COMM_ALL_REDUCE:
      return "cubert_comm_all_reduce";
    case CUBERT_COMM_BROADCAST:
      return "cubert_comm_broadcast";
    case CUBERT_COMM_REDUCE:
      return "cubert_comm_reduce";
    case CUBERT_COMM_ALL_GATHER:
      return "cubert_comm_all_gather";
    case CUBERT_COMM_REDUCE_SCATTER:
      return "cubert_comm_reduce_scatter";
    case CUBERT_COMM_SEND:
      return "cubert_comm_send";
    case CUBERT_COMM_RECV:
      return "cubert_comm_recv";
  }
  return "a collective";
}

static const char *dtype_label(cubert_dtype dtype) {
  return (int)dtype >= 0 && dtype < CUBERT_DTYPE_COUNT_ ? cubert_dtype_name(dtype) : "unknown";
}

static int reduces(cubert_comm_kind kind) {
  return kind == CUBERT_COMM_ALL_REDUCE || kind == CUBERT_COMM_REDUCE ||
         kind == CUBERT_COMM_REDUCE_SCATTER;
}

/* Which handles member i (rank r) of the call uses. */
static int uses_src(const comm_call *c, size_t r) {
  switch (c->kind) {
    case CUBERT_COMM_BROADCAST:
      return r == c->root;
    case CUBERT_COMM_RECV:
      return 0;
    case CUBERT_COMM_SEND:
      return r == c->self;
    default:
      return 1;
  }
}
static int uses_dst(const comm_call *c, size_t r) {
  switch (c->kind) {
    case CUBERT_COMM_REDUCE:
      return r == c->root;
    case CUBERT_COMM_BROADCAST:
      return r != c->root;
    case CUBERT_COMM_SEND:
      return 0;
    case CUBERT_COMM_RECV:
      return r == c->self;
    default:
      return 1;
  }
}

/* The handle array entry checked for member i, for messages: broadcast and send/recv pass one
   array (`buf`) as both. */
static cubert_status check_handle(const cubert_comm *comm, const comm_call *c, size_t i,
                                  cubert_handle *h, const char *name, uint64_t bytes,
                                  cubert_handle_obj **out) {
  *out = NULL;
  size_t rank = comm->rank + i;
  if (!h)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s[%zu] (member %zu) is NULL",
                              c->fn, name, i, rank);
  cubert_handle_obj *o = cubert_handle_acquire(h);
  if (!o)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                              "%s: %s[%zu] (member %zu) was released (or is not a handle)", c->fn,
                              name, i, rank);
  const comm_member *m = &comm->members[i];
  if (o->device != m->device) {
    cubert_status s = cubert_status_make(
        CUBERT_CODE_NOT_FOUND,
        "%s: %s[%zu] is a handle of device '%s' (%s), but member %zu is a client of device "
        "'%s'; pass a handle of the member's device",
        c->fn, name, i, o->device->server->properties.name,
        strcmp(o->device->server->properties.name, m->server->properties.name) == 0
            ? "another instance"
            : "another device",
        rank, m->server->properties.name);
    cubert_handle_release(h);
    return s;
  }
  if (o->size < bytes) {
    cubert_status s = cubert_status_set_limits(
        cubert_status_make(
            CUBERT_CODE_INVALID_ARGUMENT,
            "%s: %s[%zu] (member %zu) holds %llu bytes; the collective needs %llu "
            "(%zu elements of %s%s)",
            c->fn, name, i, rank, (unsigned long long)o->size, (unsigned long long)bytes,
            (size_t)(bytes / cubert_comm_dtype_size(c->dtype)), dtype_label(c->dtype),
            c->kind == CUBERT_COMM_ALL_GATHER || c->kind == CUBERT_COMM_REDUCE_SCATTER
                ? ", size * count_per_member where the buffer holds every member's"
                : ""),
        bytes, o->size);
    cubert_handle_release(h);
    return s;
  }
  *out = o;
  return NULL;
}

static cubert_status check_scalars(const cubert_comm *comm, const comm_call *c, size_t *es) {
  *es = cubert_comm_dtype_size(c->dtype);
  if (!*es)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: dtype is %s (%d); collectives take f32, f64 or i32", c->fn,
                              dtype_label(c->dtype), (int)c->dtype);
  if (reduces(c->kind) && c->op != CUBERT_REDUCE_SUM && c->op != CUBERT_REDUCE_MAX &&
      c->op != CUBERT_REDUCE_MIN && c->op != CUBERT_REDUCE_MEAN)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: op is %d; collectives take CUBERT_REDUCE_SUM (0), _MAX (1), "
                              "_MIN (2) or _MEAN (3)",
                              c->fn, (int)c->op);
  if ((c->kind == CUBERT_COMM_BROADCAST || c->kind == CUBERT_COMM_REDUCE) && c->root >= comm->size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: root is %zu; the communicator has %zu members (ranks 0..%zu)",
                              c->fn, c->root, comm->size, comm->size - 1);
  if ((c->kind == CUBERT_COMM_SEND || c->kind == CUBERT_COMM_RECV) &&
      (c->peer >= comm->size || c->peer == c->self))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: peer is %zu; expected another rank in 0..%zu (this is rank %zu)",
                              c->fn, c->peer, comm->size - 1, c->self);
  size_t pieces =
      c->kind == CUBERT_COMM_ALL_GATHER || c->kind == CUBERT_COMM_REDUCE_SCATTER ? comm->size : 1;
  if (c->count > SIZE_MAX / *es / pieces)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: count %zu overflows", c->fn,
                              c->count);
  return NULL;
}

/* Same handle twice: allowed only as src[i] == dst[i] where the collective works in place. */
static cubert_status check_distinct(const cubert_comm *comm, const comm_call *c) {
  size_t n = comm->local_count;
  int in_place_ok = c->kind == CUBERT_COMM_ALL_REDUCE || c->kind == CUBERT_COMM_REDUCE;
  for (size_t a = 0; a < 2 * n; ++a) {
    int a_dst = a >= n;
    size_t ai = a % n;
    if (!(a_dst ? uses_dst(c, comm->rank + ai) : uses_src(c, comm->rank + ai))) continue;
    cubert_handle *ha = a_dst ? c->dst[ai] : c->src[ai];
    for (size_t b = a + 1; b < 2 * n; ++b) {
      int b_dst = b >= n;
      size_t bi = b % n;
      if (!(b_dst ? uses_dst(c, comm->rank + bi) : uses_src(c, comm->rank + bi))) continue;
      cubert_handle *hb = b_dst ? c->dst[bi] : c->src[bi];
      if (ha != hb) continue;
      if (in_place_ok && ai == bi && a_dst != b_dst) continue;
      const char *na = a_dst ? c->dst_name : c->src_name, *nb = b_dst ? c->dst_name : c->src_name;
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: %s[%zu] and %s[%zu] are the same handle%s", c->fn, na, ai, nb,
                                bi,
                                ai == bi ? " (this collective does not work in place)"
                                         : "; every member needs its own buffer");
    }
  }
  return NULL;
}

static void legs_drop(comm_job *job, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (job->legs[i].has_src) cubert_slice_release(job->legs[i].src.slice);
    if (job->legs[i].has_dst) cubert_slice_release(job->legs[i].dst.slice);
  }
}

/* Orders member i's leg on the calling stream of its client, in two steps over all members
   (device lock held inside each). Step 0: the member's stream waits for the other streams that
   used src/dst, records "src ready", and the leg's gate is made (not placed). Step 1, after the
   job was queued: the gate is placed on the stream and src/dst are marked as used there. All
   "ready" events come before all gates, so members that share a stream (one client twice)
   never wait for each other's gate.

   Why the job is queued before any gate is placed: placing a gate may first have to take the
   stream's slot over from another stream id (stream/slots.c), which syncs the slot under the
   device lock, and so does any other thread's submit to that slot. A gate whose job is not
   queued yet never opens, so such a sync waited for ever (two members of one call on ids 5 and
   133 of 128 slots, or CUBERT_MAX_STREAMS=1 with several threads). With every placed gate's job
   queued, a sync only waits for a collective in progress, whose threads take no device lock. */
static cubert_status order_leg(cubert_comm *comm, comm_leg *leg, size_t i, int step) {
  /* a member a send/recv does not involve: its stream is not held up */
  if (!leg->has_src && !leg->has_dst) return NULL;
  comm_member *m = &comm->members[i];
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(m->client, &call));
  cubert_device *device = m->device;
  cubert_server *server = m->server;
  cubert_status s = cubert_call_lock(&call);
  uint32_t index = call.index;
  cubert_stream_slot *slot = call.slot;
  cubert_binding b[2];
  uint32_t nb = 0;
  if (leg->has_src) b[nb++] = leg->src;
  if (leg->has_dst && !(leg->has_src && leg->dst.slice == leg->src.slice)) b[nb++] = leg->dst;
  if (step == 0) {
    if (!s) s = cubert_slot_resolve(device, index, b, nb);
    if (!s) s = server->vtable->event_record(server, slot->stream, &leg->ready);
    if (!s) {
      leg->errors = slot->errors;
      leg->stream = slot->owner;
    }
    if (!s) s = server->gates->create(server, &leg->gate);
  } else {
    if (!s) s = server->gates->wait(server, slot->stream, leg->gate);
    if (!s) cubert_slot_mark_used(device, index, b, nb);
  }
  return cubert_call_leave(&call, s);
}

/* Undoes step 0 of order_leg for members [0, n): frees their gates (never placed) and events. */
static void unorder(cubert_comm *comm, comm_job *job, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    comm_leg *leg = &job->legs[i];
    comm_member *m = &comm->members[i];
    cubert_device_lock(m->device);
    if (leg->gate) m->server->gates->release(m->server, leg->gate);
    if (leg->ready) m->server->vtable->event_release(m->server, leg->ready);
    cubert_device_unlock(m->device);
    leg->gate = NULL;
    leg->ready = NULL;
  }
}

/* The call's arguments that do not need the handles: its scalars (*out_es: the element size),
   and src/dst present wherever a local member uses them, and distinct. */
static cubert_status check_call(cubert_comm *comm, const comm_call *c, size_t *out_es) {
  if (!comm) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: comm is NULL", c->fn);
  CUBERT_RETURN_IF_ERROR(check_scalars(comm, c, out_es));
  int any_src = 0, any_dst = 0;
  for (size_t i = 0; i < comm->local_count; ++i) {
    any_src |= uses_src(c, comm->rank + i);
    any_dst |= uses_dst(c, comm->rank + i);
  }
  if (any_src && !c->src)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s is NULL", c->fn, c->src_name);
  if (any_dst && !c->dst)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s is NULL", c->fn, c->dst_name);
  if (c->src && c->dst) CUBERT_RETURN_IF_ERROR(check_distinct(comm, c));
  return NULL;
}

/* Frees a job that was never queued, with the slice references its legs hold. */
static void job_free(comm_job *job, size_t n) {
  legs_drop(job, n);
  free(job->legs);
  free(job);
}

/* A new job for call `c` of `es`-byte elements, its chunk sized for the staging slots. */
static cubert_status job_new(cubert_comm *comm, const comm_call *c, size_t es, comm_job **out) {
  *out = NULL;
  size_t pieces_in = c->kind == CUBERT_COMM_REDUCE_SCATTER ? comm->size : 1;
  size_t pieces_out = c->kind == CUBERT_COMM_ALL_GATHER ? comm->size : 1;
  comm_job *job = calloc(1, sizeof *job);
  if (job) job->legs = calloc(comm->local_count, sizeof *job->legs);
  if (!job || !job->legs) {
    free(job);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  job->kind = c->kind;
  job->dtype = c->dtype;
  job->op = c->op;
  job->es = es;
  job->root = c->root;
  job->peer = c->peer;
  job->self = c->self;
  job->tag = c->tag;
  job->count = c->count;
  job->pieces_in = pieces_in;
  job->pieces_out = pieces_out;
  size_t most = pieces_in > pieces_out ? pieces_in : pieces_out;
  job->chunk = comm->chunk_bytes / (es * most);
  if (job->chunk == 0) {
    free(job->legs);
    free(job);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: a chunk of one element per member (%zu members of %zu bytes) "
                              "exceeds the %zu-byte staging slots (CUBERT_COMM_CHUNK_BYTES)",
                              c->fn, most, es, comm->chunk_bytes);
  }
  if (c->count && job->chunk > c->count) job->chunk = c->count;
  job->chunks = c->count ? (c->count + job->chunk - 1) / job->chunk : 0;
  *out = job;
  return NULL;
}

/* Every handle of every member, checked before anything is queued: the legs' bindings, each
   holding a reference on its slice (dropped by job_free). */
static cubert_status job_take_handles(cubert_comm *comm, const comm_call *c, comm_job *job) {
  const size_t es = job->es;
  cubert_status s = NULL;
  for (size_t i = 0; i < comm->local_count && !s; ++i) {
    size_t r = comm->rank + i;
    comm_leg *leg = &job->legs[i];
    cubert_handle_obj *o = NULL;
    if (uses_src(c, r)) {
      s = check_handle(comm, c, i, c->src[i], c->src_name, es * c->count * job->pieces_in, &o);
      if (s) break;
      leg->src = cubert_handle_binding(o);
      leg->has_src = 1;
      cubert_slice_retain(leg->src.slice);
      cubert_handle_release(c->src[i]);
    }
    if (uses_dst(c, r)) {
      s = check_handle(comm, c, i, c->dst[i], c->dst_name, es * c->count * job->pieces_out, &o);
      if (s) break;
      leg->dst = cubert_handle_binding(o);
      leg->has_dst = 1;
      cubert_slice_retain(leg->dst.slice);
      cubert_handle_release(c->dst[i]);
    }
  }
  return s;
}

static cubert_status submit(cubert_comm *comm, const comm_call *c) {
  size_t es = 0;
  CUBERT_RETURN_IF_ERROR(check_call(comm, c, &es));
  size_t n = comm->local_count;
  comm_job *job = NULL;
  CUBERT_RETURN_IF_ERROR(job_new(comm, c, es, &job));
  cubert_status s = job_take_handles(comm, c, job);
  if (s) {
    job_free(job, n);
    return s;
  }
  /* Host memory in place on every local member: the transport's chunk, when it wants bigger
     ones (MPI: each step waits for the peers, so 4 MiB chunks of 256 MiB cost 64 times the
     steps of one, which oversubscribed ranks feel most). */
  const size_t direct = comm->transport->direct_chunk_bytes;
  const size_t most = job->pieces_in > job->pieces_out ? job->pieces_in : job->pieces_out;
  if (direct > comm->chunk_bytes && c->count && cubert_comm_job_direct(comm, job)) {
    job->chunk = direct / (es * most) ? direct / (es * most) : 1;
    if (job->chunk > c->count) job->chunk = c->count;
    job->chunks = (c->count + job->chunk - 1) / job->chunk;
  }

  pthread_mutex_lock(&comm->submit_mu);
  size_t ordered = 0;
  for (ordered = 0; ordered < n && !s; ++ordered)
    s = order_leg(comm, &job->legs[ordered], ordered, 0);
  if (s) {
    unorder(comm, job, n);
    pthread_mutex_unlock(&comm->submit_mu);
    job_free(job, n);
    return cubert_status_wrap(cubert_status_code(s), s, "%s: ordering on member %zu's stream",
                              c->fn, comm->rank + ordered - 1);
  }
  const cubert_comm_transport_vtable *tv = comm->transport->vtable;
  if (!s && (c->kind == CUBERT_COMM_SEND || c->kind == CUBERT_COMM_RECV) && tv->p2p_post) {
    /* paired under submit_mu, so a recv matches the sends queued before it */
    s = tv->p2p_post(comm->transport, c->kind, c->self, c->peer, c->tag, c->dtype, c->count, c->fn,
                     &job->message);
    if (s) {
      unorder(comm, job, n);
      pthread_mutex_unlock(&comm->submit_mu);
      job_free(job, n);
      return s;
    }
  }
  atomic_init(&job->holds, 2); /* the worker's and this call's */
  cubert_comm_enqueue(comm, job);
  for (ordered = 0; ordered < n && !s; ++ordered)
    s = order_leg(comm, &job->legs[ordered], ordered, 1);
  pthread_mutex_unlock(&comm->submit_mu);
  if (s) {
    /* The job runs already and cannot be taken back: it fails instead, so that every member
       stream whose gate is placed reports the failure too and none uses a half-written dst
       unawares (host allocation failures only, in practice). */
    s = cubert_status_wrap(cubert_status_code(s), s,
                           "%s: placing the collective on member %zu's stream; the collective "
                           "was cancelled and its dst buffers are undefined",
                           c->fn, comm->rank + ordered - 1);
    cubert_comm_job_fail(comm, job, cubert_status_clone(s));
  }
  cubert_comm_job_put(comm, job);
  return s;
}

/* ---- the public calls -------------------------------------------------------------------- */

cubert_status cubert_comm_all_reduce(cubert_comm *comm, cubert_handle *const *src,
                                     cubert_handle *const *dst, size_t count, cubert_dtype dtype,
                                     cubert_reduce_op op) {
  comm_call c = {.fn = "cubert_comm_all_reduce",
                 .kind = CUBERT_COMM_ALL_REDUCE,
                 .dtype = dtype,
                 .op = op,
                 .count = count,
                 .src = src,
                 .dst = dst,
                 .src_name = "src",
                 .dst_name = "dst"};
  return submit(comm, &c);
}

cubert_status cubert_comm_broadcast(cubert_comm *comm, cubert_handle *const *buf, size_t count,
                                    cubert_dtype dtype, size_t root) {
  comm_call c = {.fn = "cubert_comm_broadcast",
                 .kind = CUBERT_COMM_BROADCAST,
                 .dtype = dtype,
                 .root = root,
                 .count = count,
                 .src = buf,
                 .dst = buf,
                 .src_name = "buf",
                 .dst_name = "buf"};
  return submit(comm, &c);
}

cubert_status cubert_comm_reduce(cubert_comm *comm, cubert_handle *const *src,
                                 cubert_handle *const *dst, size_t count, cubert_dtype dtype,
                                 cubert_reduce_op op, size_t root) {
  comm_call c = {.fn = "cubert_comm_reduce",
                 .kind = CUBERT_COMM_REDUCE,
                 .dtype = dtype,
                 .op = op,
                 .root = root,
                 .count = count,
                 .src = src,
                 .dst = dst,
                 .src_name = "src",
                 .dst_name = "dst"};
  return submit(comm, &c);
}

cubert_status cubert_comm_all_gather(cubert_comm *comm, cubert_handle *const *src,
                                     cubert_handle *const *dst, size_t count_per_member,
                                     cubert_dtype dtype) {
  comm_call c = {.fn = "cubert_comm_all_gather",
                 .kind = CUBERT_COMM_ALL_GATHER,
                 .dtype = dtype,
                 .count = count_per_member,
                 .src = src,
                 .dst = dst,
                 .src_name = "src",
                 .dst_name = "dst"};
  return submit(comm, &c);
}

cubert_status cubert_comm_reduce_scatter(cubert_comm *comm, cubert_handle *const *src,
                                         cubert_handle *const *dst, size_t count_per_member,
                                         cubert_dtype dtype, cubert_reduce_op op) {
  comm_call c = {.fn = "cubert_comm_reduce_scatter",
                 .kind = CUBERT_COMM_REDUCE_SCATTER,
                 .dtype = dtype,
                 .op = op,
                 .count = count_per_member,
                 .src = src,
                 .dst = dst,
                 .src_name = "src",
                 .dst_name = "dst"};
  return submit(comm, &c);
}

/* send (buf is the source) or recv (buf is the destination) of local member rank `self`
   through the engine: buf goes in the member's slot of a local_count array, the other
   entries NULL (unused). */
static cubert_status queue_point_to_point(cubert_comm *comm, cubert_comm_kind kind, size_t self,
                                          cubert_handle *buf, size_t count, cubert_dtype dtype,
                                          size_t peer, int tag, const char *what) {
  if (!comm) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: comm is NULL", what);
  if (self < comm->rank || self - comm->rank >= comm->local_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: rank is %zu; the members in this process are ranks %zu..%zu",
                              what, self, comm->rank, comm->rank + comm->local_count - 1);
  if (tag < 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: tag %d is negative", what, tag);
  if (comm->transport->vtable->p2p_check)
    CUBERT_RETURN_IF_ERROR(comm->transport->vtable->p2p_check(comm->transport, what, peer, tag));
  cubert_handle *one[1] = {buf}, **bufs = one;
  if (comm->local_count > 1) {
    bufs = calloc(comm->local_count, sizeof *bufs);
    if (!bufs) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    bufs[self - comm->rank] = buf;
  }
  comm_call c = {.fn = what,
                 .kind = kind,
                 .dtype = dtype,
                 .peer = peer,
                 .self = self,
                 .tag = tag,
                 .count = count,
                 .src = kind == CUBERT_COMM_SEND ? bufs : NULL,
                 .dst = kind == CUBERT_COMM_RECV ? bufs : NULL,
                 .src_name = "buf",
                 .dst_name = "buf"};
  cubert_status s = submit(comm, &c);
  if (bufs != one) free(bufs);
  return s;
}

cubert_status cubert_comm_queue_send(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what) {
  return queue_point_to_point(comm, CUBERT_COMM_SEND, comm ? comm->rank : 0, buf, count, dtype,
                              peer, tag, what);
}

cubert_status cubert_comm_queue_recv(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what) {
  return queue_point_to_point(comm, CUBERT_COMM_RECV, comm ? comm->rank : 0, buf, count, dtype,
                              peer, tag, what);
}

cubert_status cubert_comm_send_from(cubert_comm *comm, size_t rank, cubert_handle *buf,
                                    size_t count, cubert_dtype dtype, size_t peer, int tag) {
  return queue_point_to_point(comm, CUBERT_COMM_SEND, rank, buf, count, dtype, peer, tag,
                              "cubert_comm_send_from");
}

cubert_status cubert_comm_recv_at(cubert_comm *comm, size_t rank, cubert_handle *buf, size_t count,
                                  cubert_dtype dtype, size_t peer, int tag) {
  return queue_point_to_point(comm, CUBERT_COMM_RECV, rank, buf, count, dtype, peer, tag,
                              "cubert_comm_recv_at");
}
