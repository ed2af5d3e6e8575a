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
   Reductions are cubert_comm_host_reduce (NaN-propagating max/min, as the in-process
   transport), so MPI's own reduction operators are not used.

   Waits poll MPI_Testall (yielding the core between polls: under --oversubscribe the peer may
   need it) until CUBERT_MPI_TIMEOUT_MS; the duplicates carry MPI_ERRORS_RETURN. A failure or
   a timeout breaks the transport: every later combine fails at once, quoting the first error.
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

#include "comm/transport.h"
#include "cubert/mpi.h"
#include "cubert/server.h"

#define MPI_DEFAULT_TIMEOUT_MS 300000L
#define MPI_MAX_WAIT 8

typedef struct mpi_transport {
  cubert_comm_transport base;
  MPI_Comm coll; /* collectives */
  MPI_Comm p2p;  /* send / recv (user tags) */
  long timeout_ms;
  int tag_ub;
  pthread_mutex_t mu;
  void *tmp; /* a received segment before it is reduced */
  size_t tmp_size;
  void *acc; /* partial reductions that are not this rank's output */
  size_t acc_size;
  char failed[768]; /* the first error; empty while healthy */
} mpi_transport;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Records the transport's first failure (printf-style) and returns it as an error. */
static cubert_status mpi_fail(mpi_transport *t, const cubert_comm_chunk *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cubert_status mpi_fail(mpi_transport *t, const cubert_comm_chunk *c, const char *fmt, ...) {
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  snprintf(t->failed, sizeof t->failed, "%s: MPI rank %zu: %s (call %llu, chunk %zu of %zu)",
           cubert_comm_kind_name(c->kind), t->base.rank, reason, (unsigned long long)c->sequence,
           c->index + 1, c->chunks);
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

/* Waits for ops[0..n) until the deadline; checks the received sizes. On a timeout the requests
   still pending are cancelled (receives) or freed (sends) and the error names their peer. */
static cubert_status mpi_wait(mpi_transport *t, const cubert_comm_chunk *c, mpi_op *ops, int n) {
  MPI_Request reqs[MPI_MAX_WAIT];
  MPI_Status st[MPI_MAX_WAIT];
  for (int i = 0; i < n; ++i) reqs[i] = ops[i].req;
  double deadline = t->timeout_ms > 0 ? now_ms() + (double)t->timeout_ms : 0;
  unsigned polls = 0;
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
      if (who >= 0)
        return mpi_fail(t, c, "MPI %s rank %d failed: %s",
                        ops[who].recv ? "receive from" : "send to", ops[who].peer, text);
      return mpi_fail(t, c, "MPI_Testall failed: %s", text);
    }
    if (done) break;
    if (deadline > 0 && (polls & 63) == 0 && now_ms() > deadline) {
      int first = -1;
      for (int i = 0; i < n; ++i) {
        int flag = 0;
        if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (reqs[i] == MPI_REQUEST_NULL) continue;
        if (first < 0 || (ops[i].recv && !ops[first].recv)) first = i;
        if (ops[i].recv) MPI_Cancel(&reqs[i]);
        MPI_Request_free(&reqs[i]);
      }
      if (first < 0) break; /* everything completed just now */
      return mpi_fail(t, c,
                      "rank %d did not %s within %ld ms (CUBERT_MPI_TIMEOUT_MS): it failed, "
                      "exited or did not make the matching call",
                      ops[first].peer, ops[first].recv ? "send its part" : "receive its part",
                      t->timeout_ms);
    }
    ++polls;
    sched_yield(); /* oversubscribed ranks (4 on 2 cores) need the core to make progress */
  }
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
    char text[MPI_MAX_ERROR_STRING + 32];
    mpi_error_text(rc, text, sizeof text);
    return mpi_fail(t, c, "MPI_%s %s rank %d failed: %s", recv ? "Irecv" : "Isend",
                    recv ? "from" : "to", peer, text);
  }
  return NULL;
}

/* Sends `sbytes` at `s` to `to` and receives `rbytes` into `r` from `from` (either may be
   skipped with 0 bytes: both sides compute the same sizes). */
static cubert_status mpi_exchange(mpi_transport *t, const cubert_comm_chunk *c, const void *s,
                                  size_t sbytes, int to, void *r, size_t rbytes, int from,
                                  int tag) {
  mpi_op ops[2];
  int n = 0;
  cubert_status st = NULL;
  if (rbytes) st = mpi_post(t, c, t->coll, &ops[n++], 1, r, rbytes, from, tag);
  if (!st && sbytes) st = mpi_post(t, c, t->coll, &ops[n++], 0, (void *)s, sbytes, to, tag);
  if (st) {
    for (int i = 0; i < n; ++i)
      if (ops[i].req != MPI_REQUEST_NULL) {
        if (ops[i].recv) MPI_Cancel(&ops[i].req);
        MPI_Request_free(&ops[i].req);
      }
    return st;
  }
  return n ? mpi_wait(t, c, ops, n) : NULL;
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
                                         size_t piece, int tag) {
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
    cubert_status st = mpi_exchange(t, c, sp, slen * es, right, tmp, rlen * es, left, tag);
    if (st) return st;
    if (rlen) {
      const void *in2[2] = {src + roff * es, tmp};
      void *dst[1] = {s + 2 == P && last_out ? last_out : acc + roff * es};
      cubert_comm_host_reduce_n(dst, 1, in2, 2, rlen, c->dtype, c->op);
    }
  }
  return NULL;
}

/* Ring all-gather: block `rank` of buf is this rank's; on return every block is filled. */
static cubert_status ring_all_gather(mpi_transport *t, const cubert_comm_chunk *c, char *buf,
                                     size_t count, size_t piece, int tag) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size;
  int right = (int)((r + 1) % P), left = (int)((r + P - 1) % P);
  for (size_t s = 0; s + 1 < P; ++s) {
    size_t sb = (r + P - s) % P, rb = (r + 2 * P - s - 1) % P;
    size_t soff, slen, roff, rlen;
    ring_block(count, P, piece, sb, &soff, &slen);
    ring_block(count, P, piece, rb, &roff, &rlen);
    cubert_status st = mpi_exchange(t, c, buf + soff * es, slen * es, right, buf + roff * es,
                                    rlen * es, left, tag);
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
                                      char *out, size_t count, int tag) {
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
    cubert_status st =
        mpi_exchange(t, c, cur + gf * es, gn * es, partner, tmp, kn * es, partner, tag);
    if (st) return st;
    if (kn) {
      const void *in2[2] = {cur + kf * es, tmp};
      void *dst[1] = {out + kf * es};
      cubert_comm_host_reduce_n(dst, 1, in2, 2, kn, c->dtype, c->op);
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
        mpi_exchange(t, c, out + mf * es, mn * es, partner, out + tf * es, tn * es, partner, tag);
    if (st) return st;
  }
  return NULL;
}

/* Binomial tree broadcast of `bytes` at buf from `root`. */
static cubert_status tree_broadcast(mpi_transport *t, const cubert_comm_chunk *c, void *buf,
                                    size_t bytes, int tag) {
  size_t P = t->base.size, rel = (t->base.rank + P - c->root) % P;
  size_t mask = 1;
  while (mask < P) { /* receive from the parent */
    if (rel & mask) {
      int parent = (int)((t->base.rank + P - mask) % P);
      cubert_status st = mpi_exchange(t, c, NULL, 0, 0, buf, bytes, parent, tag);
      if (st) return st;
      break;
    }
    mask <<= 1;
  }
  mpi_op ops[MPI_MAX_WAIT];
  int n = 0;
  for (mask >>= 1; mask > 0; mask >>= 1) { /* send to the children */
    if (rel + mask < P) {
      int child = (int)((t->base.rank + mask) % P);
      if (n == MPI_MAX_WAIT) {
        cubert_status st = mpi_wait(t, c, ops, n);
        if (st) return st;
        n = 0;
      }
      cubert_status st = mpi_post(t, c, t->coll, &ops[n++], 0, buf, bytes, child, tag);
      if (st) return st;
    }
  }
  return n ? mpi_wait(t, c, ops, n) : NULL;
}

/* Binomial tree reduce of `count` elements into acc (which holds this rank's input) to root. */
static cubert_status tree_reduce(mpi_transport *t, const cubert_comm_chunk *c, char *acc,
                                 size_t count, int tag) {
  size_t P = t->base.size, rel = (t->base.rank + P - c->root) % P, es = c->elem_size;
  char *tmp = tmp_get(t, count * es);
  if (!tmp) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", count * es);
  for (size_t mask = 1; mask < P; mask <<= 1) {
    if (rel & mask) { /* send the partial result to the parent and stop */
      int parent = (int)((t->base.rank + P - mask) % P);
      return mpi_exchange(t, c, acc, count * es, parent, NULL, 0, 0, tag);
    }
    if (rel + mask < P) {
      int child = (int)((t->base.rank + mask) % P);
      cubert_status st = mpi_exchange(t, c, NULL, 0, 0, tmp, count * es, child, tag);
      if (st) return st;
      cubert_comm_host_reduce(acc, tmp, count, c->dtype, c->op);
    }
  }
  return NULL;
}

static cubert_status combine_locked(mpi_transport *t, const cubert_comm_chunk *c) {
  size_t P = t->base.size, r = t->base.rank, es = c->elem_size, n = c->count;
  /* one tag per chunk position: messages of one chunk never match another's */
  int tag = (int)(c->index % (size_t)(t->tag_ub > 0 ? t->tag_ub : 32767));
  const char *in = c->in[0];
  char *out = c->out[0];
  switch (c->kind) {
    case CUBERT_COMM_ALL_REDUCE: {
      if (P == 1) {
        if (out != in) memcpy(out, in, n * es);
        return NULL;
      }
      /* out may alias in: both algorithms read each block of in before writing it */
      if ((P & (P - 1)) == 0) return halving_doubling(t, c, in, out, n, tag);
      cubert_status st = ring_reduce_scatter(t, c, in, out, NULL, n, 0, tag);
      return st ? st : ring_all_gather(t, c, out, n, 0, tag);
    }
    case CUBERT_COMM_REDUCE_SCATTER: {
      /* in: P pieces; out: this rank's piece only; the other pieces pass through scratch */
      if (P == 1) {
        if (out != in) memmove(out, in, n * es);
        return NULL;
      }
      char *acc = acc_get(t, n * P * es);
      if (!acc) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", n * P * es);
      return ring_reduce_scatter(t, c, in, acc, out, n * P, n, tag);
    }
    case CUBERT_COMM_ALL_GATHER: {
      if ((const char *)(out + r * n * es) != in) memmove(out + r * n * es, in, n * es);
      return P == 1 ? NULL : ring_all_gather(t, c, out, n * P, n, tag);
    }
    case CUBERT_COMM_BROADCAST: {
      /* the root sends from in, the others receive into out */
      char *buf = r == c->root ? (char *)in : out;
      if (!buf)
        return mpi_fail(t, c, "no %s buffer from the engine", r == c->root ? "input" : "output");
      return P == 1 ? NULL : tree_broadcast(t, c, buf, n * es, tag);
    }
    case CUBERT_COMM_REDUCE: {
      /* partial results accumulate in out at the root, in scratch elsewhere */
      char *acc = r == c->root ? out : acc_get(t, n * es);
      if (!acc) return mpi_fail(t, c, "out of memory for a %zu-byte buffer", n * es);
      if (acc != in) memmove(acc, in, n * es);
      return P == 1 ? NULL : tree_reduce(t, c, acc, n, tag);
    }
    case CUBERT_COMM_SEND:
    case CUBERT_COMM_RECV: {
      mpi_op op;
      int recv = c->kind == CUBERT_COMM_RECV;
      cubert_status st =
          mpi_post(t, c, t->p2p, &op, recv, recv ? out : (void *)in, n * es, (int)c->peer, c->tag);
      return st ? st : mpi_wait(t, c, &op, 1);
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
  }
  pthread_mutex_destroy(&t->mu);
  free(t->tmp);
  free(t->acc);
  free(t);
}

static const cubert_comm_transport_vtable mpi_vtable = {
    .name = "mpi",
    .combine = mpi_combine,
    .destroy = mpi_destroy,
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
  t->coll = t->p2p = MPI_COMM_NULL;
  pthread_mutex_init(&t->mu, NULL);
  st = dup_comm(mpi_comm, &t->coll);
  if (!st) st = dup_comm(mpi_comm, &t->p2p);
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
                              "cubert_comm_create_mpi",
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
