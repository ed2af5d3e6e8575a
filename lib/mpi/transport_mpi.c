/* cubert — the MPI transport of the communicator engine (cubert/mpi.h; built with CUBERT_MPI).

   The engine (lib/comm/) stages each chunk of a collective out of the member's device buffer
   into pinned host memory and calls `combine` here on its worker thread; combine exchanges the
   host chunk with the other ranks and the engine stages the result back in. One local member
   per process (rank r of the MPI communicator is member r).

   Algorithms, per chunk, with point-to-point messages on a private duplicate of the user's
   communicator (so a wait that times out can name the peer that did not answer):
     all_reduce      ring reduce-scatter + ring all-gather over `size` segments of the chunk
                     (each rank sends and receives 2 (P-1)/P of the chunk: bandwidth-optimal)
     reduce_scatter  ring reduce-scatter over the members' pieces
     all_gather      ring all-gather of the pieces
     broadcast       binomial tree from the root
     reduce          binomial tree to the root (reductions in the order the tree gives)
     send / recv     one message per chunk with the user's tag, on a second duplicate
   Every message goes as a header (a message of its own: the call's kind, dtype, op, root,
   count, its number among the collectives, the chunk and the payload's size), then the
   payload. The receiver checks the header against its own call before it posts the payload's
   receive, always of exactly the payload's size: calls that disagree (another collective,
   dtype, op, root or count, a rank that skipped a call, a recv shorter than its send) fail
   with both calls named, and no payload is ever received into a buffer shorter than it (Open
   MPI 4.1.4 writes past a short receive buffer). A rank that fails a call sends a notice to
   the others (a collective) or its peer (send/recv): their waits fail at once, quoting it,
   instead of running into the timeout.
   Reductions are cubert_comm_host_reduce (NaN-propagating max/min, as the in-process
   transport), so MPI's own reduction operators are not used.

   Waits poll MPI_Testall (yielding the core between polls: under --oversubscribe the peer may
   need it) until CUBERT_MPI_TIMEOUT_MS; the duplicates carry MPI_ERRORS_RETURN. A failure or
   a timeout breaks the transport: every later combine fails at once, quoting the first error;
   a rank that skips a call and makes none after it is found by that timeout.
   Calls into MPI come from the engine's worker thread: cubert_comm_create_mpi requires
   MPI_THREAD_MULTIPLE. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "comm/engine.h"
#include "comm/reduce.h"
#include "comm/submit.h"
#include "comm/transport.h"
#include "cubert/mpi.h"
#include "cubert/server.h"

#define MPI_DEFAULT_TIMEOUT_MS 300000L
#define MPI_MAX_WAIT 16
/* Tags on the collectives' duplicate: every message's header, a failure notice, then the
   payloads (one tag per chunk position). */
#define TAG_HEADER 0
#define TAG_NOTICE 1
#define TAG_ACK 2
#define TAG_DATA 3
#define HEADER_MAGIC 0x43424d48u /* "CBMH" */
#define NOTICE_AFTER_MS 200.0    /* a wait looks for the peers' failure notices after this */
#define DROP_SEND_MS 2000.0      /* a failing step lets its pending sends finish this long */
#define ACK_OK 0x43424b4fu       /* "CBKO" */
#define ACK_MISMATCH 0x43424b4eu /* "CBKN" */

/* What every message carries ahead of its payload, as a message of its own: the call it
   belongs to and the payload's size. The receiver checks it against its own call before it
   posts the payload's receive, so a payload is only ever received into a buffer of exactly
   its size (a longer message into a shorter receive overwrites memory past it in some MPI
   builds, Open MPI 4.1.4 among them) and calls that disagree fail instead of pairing up. */
typedef struct mpi_header {
  uint32_t magic;
  uint32_t kind;     /* the sender's cubert_comm_kind (a receive expects SEND) */
  uint32_t dtype;    /* cubert_dtype */
  uint32_t op;       /* cubert_reduce_op for the reducing kinds, else 0 */
  uint64_t root;     /* broadcast, reduce; else 0 */
  uint64_t total;    /* the call's count (elements per piece) */
  uint64_t sequence; /* collectives: the call's number among this communicator's collectives */
  uint64_t index, chunks, offset, count; /* the chunk */
  uint64_t bytes;                        /* the payload that follows (0: none) */
} mpi_header;

/* A failure notice: a rank that fails a call tells the others (collectives) or its peer
   (send/recv), whose waits stop at once instead of running into the timeout. */
typedef struct mpi_notice {
  uint32_t magic;
  int32_t rank;
  char text[768];
} mpi_notice;

typedef struct mpi_transport {
  cubert_comm_transport base;
  MPI_Comm coll;    /* collectives: headers, notices and payloads */
  MPI_Comm p2p;     /* send / recv payloads (user tags) */
  MPI_Comm p2p_hdr; /* send / recv headers (user tags) */
  MPI_Comm p2p_ack; /* send / recv acknowledgements (user tags) */
  long timeout_ms;
  int tag_ub;
  pthread_mutex_t mu;
  void *tmp; /* a received segment before it is reduced */
  size_t tmp_size;
  void *acc; /* partial reductions that are not this rank's output */
  size_t acc_size;
  uint64_t next_collective; /* the number the next collective call gets */
  uint64_t collective;      /* the number of the collective in progress */
  mpi_header hdr_out;       /* outgoing headers (outlive a send request freed on failure) */
  mpi_header hdr_in;
  mpi_header ack_out, ack_in; /* acknowledgements of one-way messages */
  mpi_notice notice;          /* the outgoing notice */
  int quiet;                  /* 1 while failing because of a peer's notice: no notices back */
  char failed[768];           /* the first error; empty while healthy */
} mpi_transport;

/* Where one step's messages go: payloads on `data` with `data_tag`, headers on `hdr` with
   `hdr_tag`, acknowledgements on `ack` with `ack_tag`. */
typedef struct mpi_link {
  MPI_Comm data, hdr, ack;
  int data_tag, hdr_tag, ack_tag;
} mpi_link;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int is_p2p(cubert_comm_kind kind) {
  return kind == CUBERT_COMM_SEND || kind == CUBERT_COMM_RECV;
}

/* Tells the other ranks (a collective) or the peer (send/recv) that this transport failed,
   with its error text. Fire and forget: the requests are freed at once (the notice lives in
   the transport). */
static void notify(mpi_transport *t, const cubert_comm_chunk *c) {
  t->notice.magic = HEADER_MAGIC;
  t->notice.rank = (int)t->base.rank;
  snprintf(t->notice.text, sizeof t->notice.text, "%s", t->failed);
  for (size_t r = 0; r < t->base.size; ++r) {
    if (r == t->base.rank || (is_p2p(c->kind) && r != c->peer)) continue;
    MPI_Request req = MPI_REQUEST_NULL;
    if (MPI_Isend(&t->notice, (int)sizeof t->notice, MPI_BYTE, (int)r, TAG_NOTICE, t->coll, &req) ==
            MPI_SUCCESS &&
        req != MPI_REQUEST_NULL)
      MPI_Request_free(&req);
  }
}

/* Records the transport's first failure (printf-style), tells the peers (unless it came from
   a peer's notice) and returns it as an error. */
static cubert_status mpi_fail(mpi_transport *t, const cubert_comm_chunk *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cubert_status mpi_fail(mpi_transport *t, const cubert_comm_chunk *c, const char *fmt, ...) {
  char reason[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (is_p2p(c->kind))
    snprintf(t->failed, sizeof t->failed,
             "%s: MPI rank %zu: %s (peer %zu, tag %d, chunk %zu of %zu)",
             cubert_comm_kind_name(c->kind), t->base.rank, reason, c->peer, c->tag, c->index + 1,
             c->chunks);
  else
    snprintf(t->failed, sizeof t->failed, "%s: MPI rank %zu: %s (call %llu, chunk %zu of %zu)",
             cubert_comm_kind_name(c->kind), t->base.rank, reason,
             (unsigned long long)t->collective, c->index + 1, c->chunks);
  if (!t->quiet) notify(t, c);
  return cubert_status_make(CUBERT_CODE_EXECUTION, "%s", t->failed);
}

static void mpi_error_text(int rc, char *out, size_t size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
  snprintf(out, size, "%s", len ? text : "unknown MPI error");
}

/* One request of a wait: a message to or from `peer`, `bytes` expected for a receive. */
typedef struct mpi_op {
  MPI_Request req;
  int peer;
  int recv;
  size_t bytes;
} mpi_op;

/* Cancels (receives) and frees the requests of ops[0..n) still pending. */
/* Cancels the receives and finishes the sends of ops[0..n) still pending. A receive is
   waited for after its cancel (it completes at once, cancelled, unless its message is
   arriving), so that no receive writes into memory after this returns. A send is given
   DROP_SEND_MS to complete (the handshake of link_exchange sends a payload only to a rank
   that posted its receive, so one in flight completes), then freed: MPI must not read a
   payload after the engine reused or freed its memory. */
static void drop_ops(mpi_op *ops, int n) {
  for (int i = 0; i < n; ++i) {
    if (ops[i].req == MPI_REQUEST_NULL) continue;
    if (ops[i].recv) {
      MPI_Cancel(&ops[i].req);
      MPI_Wait(&ops[i].req, MPI_STATUS_IGNORE);
      continue;
    }
    double deadline = now_ms() + DROP_SEND_MS;
    int done = 0;
    while (!done && now_ms() < deadline) {
      if (MPI_Test(&ops[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
      if (!done) sched_yield();
    }
    if (ops[i].req != MPI_REQUEST_NULL) MPI_Request_free(&ops[i].req);
  }
}

/* A peer's failure notice, if one arrived: the error (this transport fails with it). */
static cubert_status take_notice(mpi_transport *t, const cubert_comm_chunk *c) {
  int flag = 0;
  MPI_Status ps;
  if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_NOTICE, t->coll, &flag, &ps) != MPI_SUCCESS || !flag)
    return NULL;
  mpi_notice n;
  memset(&n, 0, sizeof n);
  int got = 0;
  MPI_Get_count(&ps, MPI_BYTE, &got);
  if (got != (int)sizeof n) /* never sent by cubert: receive nothing into n */
    return mpi_fail(t, c, "rank %d sent a %d-byte message on cubert's notice tag", ps.MPI_SOURCE,
                    got);
  MPI_Recv(&n, (int)sizeof n, MPI_BYTE, ps.MPI_SOURCE, TAG_NOTICE, t->coll, MPI_STATUS_IGNORE);
  n.text[sizeof n.text - 1] = '\0';
  t->quiet = 1;
  return mpi_fail(t, c, "rank %d failed and stopped the communicator: %s", ps.MPI_SOURCE, n.text);
}

/* Waits for ops[0..n) until the deadline, watching for the peers' failure notices; checks the
   received sizes. On a failure the requests still pending are cancelled (receives) or freed
   (sends) and the error names their peer. */
static cubert_status mpi_wait(mpi_transport *t, const cubert_comm_chunk *c, mpi_op *ops, int n) {
  MPI_Request reqs[MPI_MAX_WAIT];
  MPI_Status st[MPI_MAX_WAIT];
  for (int i = 0; i < n; ++i) reqs[i] = ops[i].req;
  const double start = now_ms();
  double deadline = t->timeout_ms > 0 ? start + (double)t->timeout_ms : 0;
  unsigned polls = 0;
  cubert_status err = NULL;
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(n, reqs, &done, st);
    if (rc != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING + 32];
      int who = -1, src = rc;
      if (rc == MPI_ERR_IN_STATUS)
        for (int i = 0; i < n && who < 0; ++i)
          if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING) {
            who = i;
            src = st[i].MPI_ERROR;
          }
      mpi_error_text(src, text, sizeof text);
      for (int i = 0; i < n; ++i) ops[i].req = reqs[i];
      drop_ops(ops, n);
      if (who >= 0)
        return mpi_fail(t, c, "MPI %s rank %d failed: %s",
                        ops[who].recv ? "receive from" : "send to", ops[who].peer, text);
      return mpi_fail(t, c, "MPI_Testall failed: %s", text);
    }
    if (done) break;
    /* a peer's notice, once the wait is not over at once: a peer that finds a mismatch in
       this very step tells everyone, and this rank's own check of the step comes first */
    if ((polls & 15) == 0 && now_ms() > start + NOTICE_AFTER_MS &&
        (err = take_notice(t, c)) != NULL) {
      for (int i = 0; i < n; ++i) ops[i].req = reqs[i];
      drop_ops(ops, n);
      return err;
    }
    if (deadline > 0 && (polls & 63) == 0 && now_ms() > deadline) {
      int first = -1;
      for (int i = 0; i < n; ++i) {
        int flag = 0;
        if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (reqs[i] == MPI_REQUEST_NULL) continue;
        if (first < 0 || (ops[i].recv && !ops[first].recv)) first = i;
      }
      for (int i = 0; i < n; ++i) ops[i].req = reqs[i];
      if (first < 0) break; /* everything completed just now */
      int peer = ops[first].peer, recv = ops[first].recv;
      drop_ops(ops, n);
      /* no notice: every rank waits out its own timeout, so that the ranks that waited for the
         one that is missing name it (a notice would make them quote the first to give up) */
      t->quiet = 1;
      return mpi_fail(t, c,
                      "rank %d did not %s within %ld ms (CUBERT_MPI_TIMEOUT_MS): it failed, "
                      "exited or did not make the matching call",
                      peer, recv ? "send its part" : "receive its part", t->timeout_ms);
    }
    ++polls;
    sched_yield(); /* oversubscribed ranks (4 on 2 cores) need the core to make progress */
  }
  for (int i = 0; i < n; ++i) ops[i].req = MPI_REQUEST_NULL;
  for (int i = 0; i < n; ++i) {
    if (!ops[i].recv) continue;
    int got = 0;
    MPI_Get_count(&st[i], MPI_BYTE, &got);
    if ((size_t)got != ops[i].bytes)
      return mpi_fail(t, c,
                      "rank %d sent %d bytes where %zu were expected (the ranks disagree on "
                      "count, dtype, op or root)",
                      ops[i].peer, got, ops[i].bytes);
  }
  return NULL;
}

/* Posts a send (recv = 0) or a receive of `bytes` at `p` with peer `peer` on `comm`. */
static cubert_status mpi_post(mpi_transport *t, const cubert_comm_chunk *c, MPI_Comm comm,
                              mpi_op *op, int recv, void *p, size_t bytes, int peer, int tag) {
  op->peer = peer;
  op->recv = recv;
  op->bytes = bytes;
  op->req = MPI_REQUEST_NULL;
  if (bytes > (size_t)INT_MAX)
    return mpi_fail(t, c, "a message of %zu bytes exceeds MPI's int count", bytes);
  int rc = recv ? MPI_Irecv(p, (int)bytes, MPI_BYTE, peer, tag, comm, &op->req)
                : MPI_Isend(p, (int)bytes, MPI_BYTE, peer, tag, comm, &op->req);
  if (rc != MPI_SUCCESS) {
    op->req = MPI_REQUEST_NULL;
    char text[MPI_MAX_ERROR_STRING + 32];
    mpi_error_text(rc, text, sizeof text);
    return mpi_fail(t, c, "MPI_%s %s rank %d failed: %s", recv ? "Irecv" : "Isend",
                    recv ? "from" : "to", peer, text);
  }
  return NULL;
}

static int reduces(uint32_t kind) {
  return kind == CUBERT_COMM_ALL_REDUCE || kind == CUBERT_COMM_REDUCE ||
         kind == CUBERT_COMM_REDUCE_SCATTER;
}
static int rooted(uint32_t kind) {
  return kind == CUBERT_COMM_BROADCAST || kind == CUBERT_COMM_REDUCE;
}

/* The header of this rank's step of chunk c with a `bytes` payload (a receive describes the
   send it expects). */
static void header_fill(const mpi_transport *t, const cubert_comm_chunk *c, size_t bytes,
                        mpi_header *h) {
  memset(h, 0, sizeof *h);
  h->magic = HEADER_MAGIC;
  h->kind = (uint32_t)(c->kind == CUBERT_COMM_RECV ? CUBERT_COMM_SEND : c->kind);
  h->dtype = (uint32_t)c->dtype;
  h->op = reduces(h->kind) ? (uint32_t)c->op : 0;
  h->root = rooted(h->kind) ? c->root : 0;
  h->total = c->total;
  h->sequence = is_p2p(c->kind) ? 0 : t->collective;
  h->index = c->index;
  h->chunks = c->chunks;
  h->offset = c->offset;
  h->count = c->count;
  h->bytes = bytes;
}

static const char *op_name(uint32_t op) {
  switch (op) {
    case CUBERT_REDUCE_SUM:
      return "sum";
    case CUBERT_REDUCE_MAX:
      return "max";
    case CUBERT_REDUCE_MIN:
      return "min";
    case CUBERT_REDUCE_MEAN:
      return "mean";
  }
  return "an unknown op";
}

/* "cubert_comm_all_reduce of 4096 f32 (sum), call 3" */
static void describe_call(const mpi_header *h, char *out, size_t size) {
  char extra[64] = "";
  if (reduces(h->kind) && rooted(h->kind))
    snprintf(extra, sizeof extra, " (%s, root %llu)", op_name(h->op), (unsigned long long)h->root);
  else if (reduces(h->kind))
    snprintf(extra, sizeof extra, " (%s)", op_name(h->op));
  else if (rooted(h->kind))
    snprintf(extra, sizeof extra, " (root %llu)", (unsigned long long)h->root);
  char seq[40] = "";
  if (!is_p2p((cubert_comm_kind)h->kind))
    snprintf(seq, sizeof seq, ", collective call %llu", (unsigned long long)h->sequence);
  snprintf(out, size, "%s of %llu %s%s%s",
           h->kind <= CUBERT_COMM_RECV ? cubert_comm_kind_name((cubert_comm_kind)h->kind)
                                       : "an unknown call",
           (unsigned long long)h->total, cubert_dtype_name((cubert_dtype)h->dtype), extra, seq);
}

/* "cubert_comm_recv of 50000 f32" for this rank's receive (its header describes the send it
   expects). */
static void describe_mine(const cubert_comm_chunk *c, const mpi_header *h, char *out, size_t size) {
  if (c->kind == CUBERT_COMM_RECV)
    snprintf(out, size, "%s of %llu %s", cubert_comm_kind_name(CUBERT_COMM_RECV),
             (unsigned long long)h->total, cubert_dtype_name((cubert_dtype)h->dtype));
  else
    describe_call(h, out, size);
}

/* The error for calls that disagree: `theirs` (rank `from`'s) against this rank's `mine`. */
static cubert_status call_mismatch(mpi_transport *t, const cubert_comm_chunk *c,
                                   const mpi_header *theirs, const mpi_header *mine, int from) {
  char a[160], b[160];
  if (is_p2p(c->kind)) {
    /* a send's header describes the send; an acknowledgement the receive that refused it */
    if (c->kind == CUBERT_COMM_RECV) {
      describe_call(theirs, a, sizeof a);
      describe_mine(c, mine, b, sizeof b);
      return mpi_fail(t, c,
                      "rank %d sent %s where this rank receives %s: send and recv must agree on "
                      "count and dtype",
                      from, a, b);
    }
    snprintf(a, sizeof a, "%s of %llu %s", cubert_comm_kind_name(CUBERT_COMM_RECV),
             (unsigned long long)theirs->total, cubert_dtype_name((cubert_dtype)theirs->dtype));
    describe_call(mine, b, sizeof b);
    return mpi_fail(t, c,
                    "rank %d receives %s where this rank sent %s: send and recv must agree on "
                    "count and dtype",
                    from, a, b);
  }
  describe_call(theirs, a, sizeof a);
  describe_call(mine, b, sizeof b);
  return mpi_fail(t, c,
                  "mismatched collective calls: rank %d made %s where this rank made %s (every "
                  "rank must make the same calls in the same order, with the same count, dtype, "
                  "op and root)",
                  from, a, b);
}

/* Whether a peer's header describes the same call as this rank's (0: another call). */
static int same_call(const mpi_header *got, const mpi_header *want) {
  return got->kind == want->kind && got->dtype == want->dtype && got->op == want->op &&
         got->root == want->root && got->total == want->total && got->sequence == want->sequence;
}

/* Checks a peer's header against what this rank expects; an error (on every rank: the
   failure notice) when the calls differ. */
static cubert_status check_header(mpi_transport *t, const cubert_comm_chunk *c,
                                  const mpi_header *got, const mpi_header *want, int from) {
  if (got->magic != HEADER_MAGIC)
    return mpi_fail(t, c, "rank %d sent a message cubert does not recognise", from);
  if (!same_call(got, want)) return call_mismatch(t, c, got, want, from);
  if (got->index != want->index || got->chunks != want->chunks || got->offset != want->offset ||
      got->count != want->count || got->bytes != want->bytes)
    return mpi_fail(t, c,
                    "rank %d sent chunk %llu of %llu (elements %llu..%llu, %llu bytes) where "
                    "this rank expected chunk %llu of %llu (elements %llu..%llu, %llu bytes): "
                    "the ranks split the call into different chunks",
                    from, (unsigned long long)got->index + 1, (unsigned long long)got->chunks,
                    (unsigned long long)got->offset, (unsigned long long)(got->offset + got->count),
                    (unsigned long long)got->bytes, (unsigned long long)want->index + 1,
                    (unsigned long long)want->chunks, (unsigned long long)want->offset,
                    (unsigned long long)(want->offset + want->count),
                    (unsigned long long)want->bytes);
  return NULL;
}

/* Sends `sbytes` at `s` to `to` and receives `rbytes` into `r` from `from` (to or from < 0:
   that direction is skipped). Each message is a handshake: the sender sends a header, the
   receiver checks it against its own call and answers with an acknowledgement (after posting
   the payload's receive, of exactly `rbytes`) or a refusal naming its call, and only then the
   payload moves. So calls that disagree fail on both sides of every message, a payload never
   reaches a buffer shorter than it, and no payload is ever in flight towards a rank that
   does not receive it (no send stays pending on memory the engine frees after a failure). */
static cubert_status link_exchange(mpi_transport *t, const cubert_comm_chunk *c, const mpi_link *l,
                                   const void *s, size_t sbytes, int to, void *r, size_t rbytes,
                                   int from) {
  mpi_op hs, ar, hr, as, pr, ps; /* header send, ack receive, header receive, ack send, payloads */
  mpi_op *all[6] = {&hs, &ar, &hr, &as, &pr, &ps};
  for (int i = 0; i < 6; ++i) all[i]->req = MPI_REQUEST_NULL;
  cubert_status st = NULL;
  if (to >= 0) {
    header_fill(t, c, sbytes, &t->hdr_out);
    st = mpi_post(t, c, l->hdr, &hs, 0, &t->hdr_out, sizeof t->hdr_out, to, l->hdr_tag);
    if (!st) st = mpi_post(t, c, l->ack, &ar, 1, &t->ack_in, sizeof t->ack_in, to, l->ack_tag);
  }
  if (!st && from >= 0) {
    st = mpi_post(t, c, l->hdr, &hr, 1, &t->hdr_in, sizeof t->hdr_in, from, l->hdr_tag);
    if (!st) st = mpi_wait(t, c, &hr, 1);
    mpi_header want;
    header_fill(t, c, rbytes, &want);
    if (!st) {
      st = check_header(t, c, &t->hdr_in, &want, from);
      t->ack_out = want;
      t->ack_out.magic = st ? ACK_MISMATCH : ACK_OK;
      if (st) { /* tell the sender which call this rank made (fire and forget) */
        MPI_Request req = MPI_REQUEST_NULL;
        if (MPI_Isend(&t->ack_out, (int)sizeof t->ack_out, MPI_BYTE, from, l->ack_tag, l->ack,
                      &req) == MPI_SUCCESS &&
            req != MPI_REQUEST_NULL)
          MPI_Request_free(&req);
      }
    }
    if (!st && rbytes) st = mpi_post(t, c, l->data, &pr, 1, r, rbytes, from, l->data_tag);
    if (!st) st = mpi_post(t, c, l->ack, &as, 0, &t->ack_out, sizeof t->ack_out, from, l->ack_tag);
  }
  if (!st && to >= 0) {
    st = mpi_wait(t, c, &ar, 1);
    if (!st && t->ack_in.magic != ACK_OK) {
      mpi_header mine;
      header_fill(t, c, sbytes, &mine);
      t->quiet = 1; /* the receiver told the others already */
      st =
          t->ack_in.magic == ACK_MISMATCH
              ? call_mismatch(t, c, &t->ack_in, &mine, to)
              : mpi_fail(t, c, "rank %d acknowledged with a message cubert does not recognise", to);
    }
    if (!st && sbytes) st = mpi_post(t, c, l->data, &ps, 0, (void *)s, sbytes, to, l->data_tag);
  }
  if (!st) {
    mpi_op left[6];
    int n = 0;
    for (int i = 0; i < 6; ++i)
      if (all[i]->req != MPI_REQUEST_NULL) left[n++] = *all[i];
    for (int i = 0; i < 6; ++i) all[i]->req = MPI_REQUEST_NULL;
    st = n ? mpi_wait(t, c, left, n) : NULL;
    return st; /* mpi_wait dropped what was pending on failure */
  }
  for (int i = 0; i < 6; ++i) drop_ops(all[i], 1);
  return st;
}

/* The collectives' link of chunk c: headers on TAG_HEADER, payloads on one tag per chunk
   position. */
static mpi_link coll_link(const mpi_transport *t, const cubert_comm_chunk *c) {
  int span = t->tag_ub > TAG_DATA ? t->tag_ub - TAG_DATA : 1;
  mpi_link l = {t->coll,    t->coll, t->coll, TAG_DATA + (int)(c->index % (size_t)span),
                TAG_HEADER, TAG_ACK};
  return l;
}

/* link_exchange on the collectives' link. */
static cubert_status mpi_exchange(mpi_transport *t, const cubert_comm_chunk *c, const void *s,
                                  size_t sbytes, int to, void *r, size_t rbytes, int from) {
  mpi_link l = coll_link(t, c);
  return link_exchange(t, c, &l, s, sbytes, to, r, rbytes, from);
}

/* A transport-owned buffer (*buf of *size bytes) grown to at least `bytes`; NULL when out of
   memory. tmp: a received block before it is reduced; acc: partial reductions that are not
   this rank's output. */
static void *grow(void **buf, size_t *size, size_t bytes) {
  if (bytes <= *size) return *buf;
  void *p = realloc(*buf, bytes);
  if (!p) return NULL;
  *buf = p;
  *size = bytes;
  return p;
}
#define tmp_get(t, bytes) grow(&(t)->tmp, &(t)->tmp_size, bytes)
#define acc_get(t, bytes) grow(&(t)->acc, &(t)->acc_size, bytes)

/* Segment i of `count` elements split into `parts`: [*first, *first + *len). */
static void segment(size_t count, size_t parts, size_t i, size_t *first, size_t *len) {
  size_t base = count / parts, rem = count % parts;
  *first = i * base + (i < rem ? i : rem);
  *len = base + (i < rem ? 1 : 0);
}

/* Block b of a ring: `piece` elements at b * piece (piece > 0), else segment b of count. */
static void ring_block(size_t count, size_t parts, size_t piece, size_t b, size_t *first,
                       size_t *len) {
  if (piece) {
    *first = b * piece;
    *len = piece;
  } else {
    segment(count, parts, b, first, len);
  }
}

/* Ring reduce-scatter over P blocks of `acc` (block b: elements [off(b), off(b)+len(b))); on
   return block `rank` of acc (or `last_out`, when not NULL) holds the reduction over all
   ranks. `src` holds this rank's input (may equal acc: each block is read before it is
   written); blocks of acc other than the reduced ones are scratch. `piece` > 0: fixed blocks
   of `piece` elements (reduce_scatter); 0: segments of `count` (all_reduce). */
static cubert_status ring_reduce_scatter(mpi_transport *t, const cubert_comm_chunk *c,
                                         const char *src, char *acc, char *last_out, size_t count,
                                         size_t piece) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size;
  int right = (int)((r + 1) % P), left = (int)((r + P - 1) % P);
  size_t max_len = piece ? piece : (count + P - 1) / P;
  char *tmp = tmp_get(t, max_len * es);
  if (!tmp && max_len) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", max_len * es);
  for (size_t s = 0; s + 1 < P; ++s) {
    size_t sb = (r + 2 * P - s - 1) % P, rb = (r + 2 * P - s - 2) % P;
    size_t soff, slen, roff, rlen;
    ring_block(count, P, piece, sb, &soff, &slen);
    ring_block(count, P, piece, rb, &roff, &rlen);
    /* step 0 sends this rank's own input; later steps what it reduced the step before */
    const char *sp = (s == 0 ? src : acc) + soff * es;
    cubert_status st = mpi_exchange(t, c, sp, slen * es, right, tmp, rlen * es, left);
    if (st) return st;
    if (rlen) {
      const void *in2[2] = {src + roff * es, tmp};
      void *dst[1] = {s + 2 == P && last_out ? last_out : acc + roff * es};
      /* the last step finishes block `rank` over every rank: the mean divides there */
      cubert_comm_host_reduce_n(dst, 1, in2, 2, rlen, c->dtype, c->op, s + 2 == P ? P : 0);
    }
  }
  return NULL;
}

/* Ring all-gather: block `rank` of buf is this rank's; on return every block is filled. */
static cubert_status ring_all_gather(mpi_transport *t, const cubert_comm_chunk *c, char *buf,
                                     size_t count, size_t piece) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size;
  int right = (int)((r + 1) % P), left = (int)((r + P - 1) % P);
  for (size_t s = 0; s + 1 < P; ++s) {
    size_t sb = (r + P - s) % P, rb = (r + 2 * P - s - 1) % P;
    size_t soff, slen, roff, rlen;
    ring_block(count, P, piece, sb, &soff, &slen);
    ring_block(count, P, piece, rb, &roff, &rlen);
    cubert_status st =
        mpi_exchange(t, c, buf + soff * es, slen * es, right, buf + roff * es, rlen * es, left);
    if (st) return st;
  }
  return NULL;
}

/* Elements [*first, *first + *len) of segments [lo, hi) of `count` split into `parts`. */
static void segments(size_t count, size_t parts, size_t lo, size_t hi, size_t *first, size_t *len) {
  size_t a, b, l;
  segment(count, parts, lo, &a, &l);
  segment(count, parts, hi - 1, &b, &l);
  *first = a;
  *len = b + l - a;
}

/* All-reduce for a power-of-two P: reduce-scatter by recursive halving, then all-gather by
   recursive doubling (Rabenseifner): the ring's traffic in 2 log2(P) steps instead of
   2 (P-1), which matters when every step waits for oversubscribed peers to be scheduled.
   src may alias out (each block is read before it is written). */
static cubert_status halving_doubling(mpi_transport *t, const cubert_comm_chunk *c, const char *src,
                                      char *out, size_t count) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size;
  size_t lo = 0, hi = P;
  char *tmp = tmp_get(t, ((count + 1) / 2 + P) * es);
  if (!tmp) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", (count / 2 + P) * es);
  const char *cur = src;
  for (size_t mask = P / 2; mask > 0; mask /= 2) {
    size_t mid = lo + (hi - lo) / 2, klo, khi, glo, ghi;
    int partner = (int)(r ^ mask);
    if (r & mask)
      klo = mid, khi = hi, glo = lo, ghi = mid;
    else
      klo = lo, khi = mid, glo = mid, ghi = hi;
    size_t kf, kn, gf, gn;
    segments(count, P, klo, khi, &kf, &kn);
    segments(count, P, glo, ghi, &gf, &gn);
    cubert_status st = mpi_exchange(t, c, cur + gf * es, gn * es, partner, tmp, kn * es, partner);
    if (st) return st;
    if (kn) {
      const void *in2[2] = {cur + kf * es, tmp};
      void *dst[1] = {out + kf * es};
      /* the last halving (mask 1) finishes this rank's segments over every rank */
      cubert_comm_host_reduce_n(dst, 1, in2, 2, kn, c->dtype, c->op, mask == 1 ? P : 0);
    }
    cur = out;
    lo = klo, hi = khi;
  }
  for (size_t mask = 1; mask < P; mask *= 2) {
    size_t mine = r & ~(mask - 1), theirs = mine ^ mask;
    size_t mf, mn, tf, tn;
    segments(count, P, mine, mine + mask, &mf, &mn);
    segments(count, P, theirs, theirs + mask, &tf, &tn);
    int partner = (int)(r ^ mask);
    cubert_status st =
        mpi_exchange(t, c, out + mf * es, mn * es, partner, out + tf * es, tn * es, partner);
    if (st) return st;
  }
  return NULL;
}

/* Binomial tree broadcast of `bytes` at buf from `root`. */
static cubert_status tree_broadcast(mpi_transport *t, const cubert_comm_chunk *c, void *buf,
                                    size_t bytes) {
  size_t P = t->base.size, rel = (t->base.rank + P - c->root) % P;
  size_t mask = 1;
  while (mask < P) { /* receive from the parent */
    if (rel & mask) {
      int parent = (int)((t->base.rank + P - mask) % P);
      cubert_status st = mpi_exchange(t, c, NULL, 0, -1, buf, bytes, parent);
      if (st) return st;
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) { /* send to the children, each acknowledging */
    if (rel + mask < P) {
      int child = (int)((t->base.rank + mask) % P);
      cubert_status st = mpi_exchange(t, c, buf, bytes, child, NULL, 0, -1);
      if (st) return st;
    }
  }
  return NULL;
}

/* Binomial tree reduce of `count` elements into acc (which holds this rank's input) to root. */
static cubert_status tree_reduce(mpi_transport *t, const cubert_comm_chunk *c, char *acc,
                                 size_t count) {
  size_t P = t->base.size, rel = (t->base.rank + P - c->root) % P, es = c->elem_size;
  char *tmp = tmp_get(t, count * es);
  if (!tmp) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", count * es);
  for (size_t mask = 1; mask < P; mask <<= 1) {
    if (rel & mask) { /* send the partial result to the parent and stop */
      int parent = (int)((t->base.rank + P - mask) % P);
      return mpi_exchange(t, c, acc, count * es, parent, NULL, 0, -1);
    }
    if (rel + mask < P) {
      int child = (int)((t->base.rank + mask) % P);
      cubert_status st = mpi_exchange(t, c, NULL, 0, -1, tmp, count * es, child);
      if (st) return st;
      cubert_comm_host_reduce(acc, tmp, count, c->dtype, c->op);
    }
  }
  if (c->op == CUBERT_REDUCE_MEAN) { /* the root (rel 0) holds the whole sum now */
    const void *in1[1] = {acc};
    void *out1[1] = {acc};
    cubert_comm_host_reduce_n(out1, 1, in1, 1, count, c->dtype, c->op, P);
  }
  return NULL;
}

static cubert_status combine_locked(mpi_transport *t, const cubert_comm_chunk *c) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size, n = c->count;
  /* collectives are numbered in the order they are made (the headers carry the number) */
  if (!is_p2p(c->kind) && c->index == 0) t->collective = t->next_collective++;
  const char *in = c->in[0];
  char *out = c->out[0];
  switch (c->kind) {
    case CUBERT_COMM_ALL_REDUCE: {
      if (P == 1) {
        if (out != in) memcpy(out, in, n * es);
        return NULL;
      }
      /* out may alias in: both algorithms read each block of in before writing it */
      if ((P & (P - 1)) == 0) return halving_doubling(t, c, in, out, n);
      cubert_status st = ring_reduce_scatter(t, c, in, out, NULL, n, 0);
      return st ? st : ring_all_gather(t, c, out, n, 0);
    }
    case CUBERT_COMM_REDUCE_SCATTER: {
      /* in: P pieces; out: this rank's piece only; the other pieces pass through scratch */
      if (P == 1) {
        if (out != in) memmove(out, in, n * es);
        return NULL;
      }
      char *acc = acc_get(t, n * P * es);
      if (!acc) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", n * P * es);
      return ring_reduce_scatter(t, c, in, acc, out, n * P, n);
    }
    case CUBERT_COMM_ALL_GATHER: {
      if ((const char *)(out + r * n * es) != in) memmove(out + r * n * es, in, n * es);
      return P == 1 ? NULL : ring_all_gather(t, c, out, n * P, n);
    }
    case CUBERT_COMM_BROADCAST: {
      /* the root sends from in, the others receive into out */
      char *buf = r == c->root ? (char *)in : out;
      if (!buf)
        return mpi_fail(t, c, "no %s buffer from the engine", r == c->root ? "input" : "output");
      return P == 1 ? NULL : tree_broadcast(t, c, buf, n * es);
    }
    case CUBERT_COMM_REDUCE: {
      /* partial results accumulate in out at the root, in scratch elsewhere */
      char *acc = r == c->root ? out : acc_get(t, n * es);
      if (!acc) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", n * es);
      if (acc != in) memmove(acc, in, n * es);
      return P == 1 ? NULL : tree_reduce(t, c, acc, n);
    }
    case CUBERT_COMM_SEND:
    case CUBERT_COMM_RECV: {
      /* the header on its own duplicate with the user's tag, then the payload */
      mpi_link l = {t->p2p, t->p2p_hdr, t->p2p_ack, c->tag, c->tag, c->tag};
      if (c->kind == CUBERT_COMM_SEND)
        return link_exchange(t, c, &l, in, n * es, (int)c->peer, NULL, 0, -1);
      return link_exchange(t, c, &l, NULL, 0, -1, out, n * es, (int)c->peer);
    }
  }
  return mpi_fail(t, c, "unknown operation %d", (int)c->kind);
}

static cubert_status mpi_combine(cubert_comm_transport *base, const cubert_comm_chunk *c,
                                 size_t part, size_t parts) {
  (void)parts;
  mpi_transport *t = (mpi_transport *)base;
  if (part != 0) return NULL; /* one local member: part 0 does the whole chunk */
  pthread_mutex_lock(&t->mu);
  cubert_status st;
  if (t->failed[0])
    st = cubert_status_make(CUBERT_CODE_EXECUTION,
                            "%s: the MPI communicator failed earlier and is unusable: %s",
                            cubert_comm_kind_name(c->kind), t->failed);
  else
    st = combine_locked(t, c);
  pthread_mutex_unlock(&t->mu);
  return st;
}

static void mpi_destroy(cubert_comm_transport *base) {
  mpi_transport *t = (mpi_transport *)base;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) {
    if (t->coll != MPI_COMM_NULL) MPI_Comm_free(&t->coll);
    if (t->p2p != MPI_COMM_NULL) MPI_Comm_free(&t->p2p);
    if (t->p2p_hdr != MPI_COMM_NULL) MPI_Comm_free(&t->p2p_hdr);
    if (t->p2p_ack != MPI_COMM_NULL) MPI_Comm_free(&t->p2p_ack);
  }
  pthread_mutex_destroy(&t->mu);
  free(t->tmp);
  free(t->acc);
  free(t);
}

static cubert_status mpi_p2p_check(cubert_comm_transport *base, const char *fn, size_t peer,
                                   int tag);

static const cubert_comm_transport_vtable mpi_vtable = {
    .name = "mpi",
    .combine = mpi_combine,
    .destroy = mpi_destroy,
    .p2p_check = mpi_p2p_check,
};

static const char *thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown level";
}

/* CUBERT_MPI_TIMEOUT_MS: milliseconds, 0 = no timeout; unset or empty: the default; a bad
   value (not plain decimal digits, or above INT_MAX): the default with a warning, as every
   CUBERT_* variable (docs/environment.md). Read at each cubert_comm_create_mpi. */
static long read_timeout(void) {
  const char *v = getenv("CUBERT_MPI_TIMEOUT_MS");
  if (!v || !*v) return MPI_DEFAULT_TIMEOUT_MS;
  long ms = 0;
  int ok = strlen(v) <= 10;
  for (const char *p = v; ok && *p; ++p) ok = *p >= '0' && *p <= '9';
  if (ok) {
    ms = strtol(v, NULL, 10);
    ok = ms <= INT_MAX;
  }
  if (ok) return ms;
  cubert_log(CUBERT_LOG_WARN, "config",
             "CUBERT_MPI_TIMEOUT_MS=\"%s\" is not valid: expected an integer in 0..%d "
             "(milliseconds, 0 = no timeout); using %ld",
             v, INT_MAX, MPI_DEFAULT_TIMEOUT_MS);
  return MPI_DEFAULT_TIMEOUT_MS;
}

static cubert_status dup_comm(MPI_Comm from, MPI_Comm *out) {
  int rc = MPI_Comm_dup(from, out);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) return NULL;
  char text[MPI_MAX_ERROR_STRING + 32];
  mpi_error_text(rc, text, sizeof text);
  return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                            "cubert_comm_create_mpi: duplicating the MPI communicator failed: %s",
                            text);
}

CUBERT_API cubert_status cubert_comm_create_mpi(MPI_Comm mpi_comm, cubert_client *client,
                                                cubert_comm **out) {
  if (!out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "cubert_comm_create_mpi: out is NULL");
  *out = NULL;
  if (!client)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_comm_create_mpi: client is NULL");
  if (mpi_comm == MPI_COMM_NULL)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_comm_create_mpi: mpi_comm is MPI_COMM_NULL");
  int initialized = 0, finalized = 0, level = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "cubert_comm_create_mpi: MPI is %s (call MPI_Init_thread with "
                              "MPI_THREAD_MULTIPLE first)",
                              finalized ? "already finalized" : "not initialized");
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "cubert_comm_create_mpi: MPI provides %s; cubert calls MPI from "
                              "its communicator's worker thread and needs MPI_THREAD_MULTIPLE "
                              "(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided))",
                              thread_level_name(level));
  long timeout_ms = read_timeout();
  cubert_status st = NULL;
  int size = 0, rank = 0;
  MPI_Comm_size(mpi_comm, &size);
  MPI_Comm_rank(mpi_comm, &rank);
  mpi_transport *t = calloc(1, sizeof *t);
  if (!t) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "cubert_comm_create_mpi");
  t->base.vtable = &mpi_vtable;
  t->base.size = (size_t)size;
  t->base.rank = (size_t)rank;
  t->base.local_count = 1;
  /* CPU-server buffers in place: 256 MiB chunks (each chunk is 2 log2 P or 2 (P - 1) waits on
     the peers; a ring piece of it stays far below MPI's INT_MAX-element messages). */
  t->base.direct_chunk_bytes = (size_t)256 << 20;
  t->timeout_ms = timeout_ms;
  t->coll = t->p2p = t->p2p_hdr = t->p2p_ack = MPI_COMM_NULL;
  pthread_mutex_init(&t->mu, NULL);
  st = dup_comm(mpi_comm, &t->coll);
  if (!st) st = dup_comm(mpi_comm, &t->p2p);
  if (!st) st = dup_comm(mpi_comm, &t->p2p_hdr);
  if (!st) st = dup_comm(mpi_comm, &t->p2p_ack);
  if (!st) {
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(t->p2p, MPI_TAG_UB, &ub, &flag);
    t->tag_ub = flag && ub ? *ub : 32767;
  }
  if (st) {
    mpi_destroy(&t->base);
    return st;
  }
  cubert_client *clients[1] = {client};
  return cubert_comm_create_with_transport(clients, 1, &t->base, out);
}

/* The MPI transport of `comm`, or an error naming `what`. */
static cubert_status mpi_of(cubert_comm *comm, const char *what, mpi_transport **out) {
  if (!comm) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: comm is NULL", what);
  cubert_comm_transport *tr = cubert_comm_transport_of(comm);
  if (!tr)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s: the communicator was released", what);
  if (tr->vtable != &mpi_vtable)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: comm is a '%s' communicator; send/recv need one of "
                              "cubert_comm_create_mpi (in one process, name the member: "
                              "cubert_comm_send_from / cubert_comm_recv_at)",
                              what, tr->vtable->name);
  *out = (mpi_transport *)tr;
  return NULL;
}

static cubert_status check_p2p(mpi_transport *t, const char *what, size_t peer, int tag) {
  if (peer >= t->base.size || peer == t->base.rank)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: peer %zu is not another rank of the communicator (ranks "
                              "0..%zu, this one is %zu)",
                              what, peer, t->base.size - 1, t->base.rank);
  if (tag < 0 || tag > t->tag_ub)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: tag %d is outside 0..%d (MPI_TAG_UB)", what, tag, t->tag_ub);
  return NULL;
}

/* cubert_comm_send_from / _recv_at on an MPI communicator: the same checks. */
static cubert_status mpi_p2p_check(cubert_comm_transport *base, const char *fn, size_t peer,
                                   int tag) {
  return check_p2p((mpi_transport *)base, fn, peer, tag);
}

CUBERT_API cubert_status cubert_comm_send(cubert_comm *comm, cubert_handle *buf, size_t count,
                                          cubert_dtype dtype, size_t peer, int tag) {
  mpi_transport *t = NULL;
  cubert_status st = mpi_of(comm, "cubert_comm_send", &t);
  if (!st) st = check_p2p(t, "cubert_comm_send", peer, tag);
  return st ? st : cubert_comm_queue_send(comm, buf, count, dtype, peer, tag, "cubert_comm_send");
}

CUBERT_API cubert_status cubert_comm_recv(cubert_comm *comm, cubert_handle *buf, size_t count,
                                          cubert_dtype dtype, size_t peer, int tag) {
  mpi_transport *t = NULL;
  cubert_status st = mpi_of(comm, "cubert_comm_recv", &t);
  if (!st) st = check_p2p(t, "cubert_comm_recv", peer, tag);
  return st ? st : cubert_comm_queue_recv(comm, buf, count, dtype, peer, tag, "cubert_comm_recv");
}
