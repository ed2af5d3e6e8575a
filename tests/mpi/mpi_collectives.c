/* Every collective and send/recv of an MPI communicator (cubert/mpi.h) against a host
   reduction computed on every rank, for f32/f64/i32, sum/max/min, sizes 0, 1, a prime and a
   large one (several engine chunks); stream ordering (write -> collective -> read without a
   sync); argument errors (bad peer, root, tag, dtype, sizes). Run as
     mpiexec -n <ranks> mpi_collectives <device>
   Values are small integers, so sums are exact in any association and results are compared
   exactly. */
#include <stdint.h>

#include "mpi_common.h"

static const size_t sizes[] = {0, 1, 7919, (1u << 20) + 7};
static const cubert_dtype dtypes[] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_F64, CUBERT_DTYPE_I32};
static const cubert_reduce_op ops[] = {CUBERT_REDUCE_SUM, CUBERT_REDUCE_MAX, CUBERT_REDUCE_MIN};
static const char *const dtype_names[] = {"?", "f32", "f64", "i32"};
static const char *const op_names[] = {"sum", "max", "min", "mean"};

static size_t esize(cubert_dtype d) {
  return d == CUBERT_DTYPE_F64 ? 8 : 4;
}

/* Member m's element i for test `salt`: an integer in [-500, 500]. */
static int64_t gen(size_t m, size_t i, unsigned salt) {
  uint64_t x = (m + 1) * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xBF58476D1CE4E5B9ull ^
               salt * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86869B9B3ull;
  x ^= x >> 29;
  return (int64_t)(x % 1001) - 500;
}

static void put(void *buf, cubert_dtype d, size_t i, int64_t v) {
  if (d == CUBERT_DTYPE_F32)
    ((float *)buf)[i] = (float)v;
  else if (d == CUBERT_DTYPE_F64)
    ((double *)buf)[i] = (double)v;
  else
    ((int32_t *)buf)[i] = (int32_t)v;
}
static int64_t get(const void *buf, cubert_dtype d, size_t i) {
  if (d == CUBERT_DTYPE_F32) return (int64_t)((const float *)buf)[i];
  if (d == CUBERT_DTYPE_F64) return (int64_t)((const double *)buf)[i];
  return ((const int32_t *)buf)[i];
}
static int64_t apply(cubert_reduce_op op, int64_t a, int64_t b) {
  if (op == CUBERT_REDUCE_SUM || op == CUBERT_REDUCE_MEAN) return a + b;
  if (op == CUBERT_REDUCE_MAX) return a > b ? a : b;
  return a < b ? a : b;
}
/* op over members of gen(m, i, salt) */
static int64_t reduced(cubert_reduce_op op, size_t i, unsigned salt) {
  int64_t acc = gen(0, i, salt);
  for (size_t m = 1; m < (size_t)t_size; ++m) acc = apply(op, acc, gen(m, i, salt));
  /* mean (cubert/comm.h): sum / size, i32 truncating toward zero; the f32/f64 quotient read
     back through get()'s truncation is the same integer (it is exact or between integers) */
  if (op == CUBERT_REDUCE_MEAN) acc /= (int64_t)t_size;
  return acc;
}

/* A buffer of `n` elements holding gen(member, first + i, salt). */
static cubert_handle *make(cubert_client *c, cubert_dtype d, size_t n, size_t member, size_t first,
                           unsigned salt) {
  size_t es = esize(d);
  void *host = malloc(n ? n * es : es);
  for (size_t i = 0; i < n; ++i) put(host, d, i, gen(member, first + i, salt));
  cubert_handle *h = NULL;
  T_OK(cubert_client_create_buffer(c, host, n * es, &h));
  free(host);
  return h;
}
static cubert_handle *empty(cubert_client *c, size_t bytes) {
  cubert_handle *h = NULL;
  T_OK(cubert_client_empty(c, bytes, &h));
  return h;
}
/* Reads n elements and compares them with expect(i); reports the first mismatch. */
typedef int64_t (*expect_fn)(size_t i, const void *ctx);
static void check(cubert_client *c, cubert_handle *h, cubert_dtype d, size_t n, expect_fn expect,
                  const void *ctx, const char *what) {
  size_t es = esize(d);
  void *host = malloc(n ? n * es : es);
  cubert_status s = cubert_client_read(c, h, host, n * es);
  if (s) {
    t_fail(__FILE__, __LINE__, "%s: read: %s", what, cubert_status_message(s));
    cubert_status_free(s);
  } else {
    for (size_t i = 0; i < n; ++i) {
      int64_t want = expect(i, ctx), got = get(host, d, i);
      if (want != got) {
        t_fail(__FILE__, __LINE__, "%s: element %zu of %zu is %lld, expected %lld", what, i, n,
               (long long)got, (long long)want);
        break;
      }
    }
  }
  free(host);
}

typedef struct ctx {
  cubert_reduce_op op;
  unsigned salt;
  size_t n, root, offset;
} ctx;
static int64_t e_reduced(size_t i, const void *p) {
  const ctx *x = p;
  return reduced(x->op, x->offset + i, x->salt);
}
static int64_t e_root(size_t i, const void *p) {
  const ctx *x = p;
  return gen(x->root, i, x->salt);
}
static int64_t e_gather(size_t i, const void *p) {
  const ctx *x = p;
  return gen(i / x->n, i % x->n, x->salt);
}

static void test_all_reduce(cubert_comm *comm, cubert_client *c, cubert_dtype d,
                            cubert_reduce_op op, size_t n, int in_place, unsigned salt) {
  char what[128];
  snprintf(what, sizeof what, "all_reduce %s %s n=%zu%s", dtype_names[d], op_names[op], n,
           in_place ? " in place" : "");
  cubert_handle *src = make(c, d, n, (size_t)t_rank, 0, salt);
  cubert_handle *dst = in_place ? src : empty(c, n * esize(d) + 4);
  T_OK(cubert_comm_all_reduce(comm, &src, &dst, n, d, op));
  ctx x = {.op = op, .salt = salt};
  check(c, dst, d, n, e_reduced, &x, what);
  if (!in_place) cubert_handle_release(dst);
  cubert_handle_release(src);
}

static void test_reduce(cubert_comm *comm, cubert_client *c, cubert_dtype d, cubert_reduce_op op,
                        size_t n, unsigned salt) {
  size_t root = (n + salt) % (size_t)t_size;
  char what[128];
  snprintf(what, sizeof what, "reduce %s %s n=%zu root=%zu", dtype_names[d], op_names[op], n, root);
  cubert_handle *src = make(c, d, n, (size_t)t_rank, 0, salt);
  /* non-roots pass NULL on odd salts: their dst is ignored */
  cubert_handle *dst =
      ((size_t)t_rank == root || salt % 2 == 0) ? empty(c, n * esize(d) + 4) : NULL;
  T_OK(cubert_comm_reduce(comm, &src, &dst, n, d, op, root));
  ctx x = {.op = op, .salt = salt};
  if ((size_t)t_rank == root)
    check(c, dst, d, n, e_reduced, &x, what);
  else
    T_OK(cubert_client_sync(c));
  cubert_handle_release(dst);
  cubert_handle_release(src);
}

static void test_broadcast(cubert_comm *comm, cubert_client *c, cubert_dtype d, size_t n,
                           unsigned salt) {
  size_t root = (n / 2 + salt) % (size_t)t_size;
  char what[128];
  snprintf(what, sizeof what, "broadcast %s n=%zu root=%zu", dtype_names[d], n, root);
  cubert_handle *buf = make(c, d, n, (size_t)t_rank, 0, salt);
  T_OK(cubert_comm_broadcast(comm, &buf, n, d, root));
  ctx x = {.root = root, .salt = salt};
  check(c, buf, d, n, e_root, &x, what);
  cubert_handle_release(buf);
}

static void test_all_gather(cubert_comm *comm, cubert_client *c, cubert_dtype d, size_t n,
                            unsigned salt) {
  char what[128];
  snprintf(what, sizeof what, "all_gather %s n=%zu", dtype_names[d], n);
  cubert_handle *src = make(c, d, n, (size_t)t_rank, 0, salt);
  cubert_handle *dst = empty(c, n * (size_t)t_size * esize(d) + 4);
  T_OK(cubert_comm_all_gather(comm, &src, &dst, n, d));
  ctx x = {.n = n, .salt = salt};
  if (n)
    check(c, dst, d, n * (size_t)t_size, e_gather, &x, what);
  else
    T_OK(cubert_client_sync(c));
  cubert_handle_release(dst);
  cubert_handle_release(src);
}

static void test_reduce_scatter(cubert_comm *comm, cubert_client *c, cubert_dtype d,
                                cubert_reduce_op op, size_t n, unsigned salt) {
  char what[128];
  snprintf(what, sizeof what, "reduce_scatter %s %s n=%zu", dtype_names[d], op_names[op], n);
  /* member m's element j is gen(m, j): the reduction for member r is reduced(op, r*n + i) */
  cubert_handle *src = make(c, d, n * (size_t)t_size, (size_t)t_rank, 0, salt);
  cubert_handle *dst = empty(c, n * esize(d) + 4);
  T_OK(cubert_comm_reduce_scatter(comm, &src, &dst, n, d, op));
  ctx x = {.op = op, .salt = salt, .offset = (size_t)t_rank * n};
  check(c, dst, d, n, e_reduced, &x, what);
  cubert_handle_release(dst);
  cubert_handle_release(src);
}

/* Pairs (0,1), (2,3), ...: the even rank sends then receives, the odd one the other way round
   (queued sends complete like MPI_Send, so two sends first could wait on each other). */
static void test_send_recv(cubert_comm *comm, cubert_client *c, cubert_dtype d, size_t n,
                           unsigned salt) {
  size_t peer = (size_t)(t_rank ^ 1);
  if (peer >= (size_t)t_size) return;
  char what[128];
  snprintf(what, sizeof what, "send/recv %s n=%zu with rank %zu", dtype_names[d], n, peer);
  cubert_handle *mine = make(c, d, n, (size_t)t_rank, 0, salt);
  cubert_handle *got = empty(c, n * esize(d) + 4);
  size_t me = (size_t)t_rank;
  if (t_rank % 2 == 0 && salt % 2) { /* the named-member form of cubert/comm.h, over MPI */
    T_OK(cubert_comm_send_from(comm, me, mine, n, d, peer, 7));
    T_OK(cubert_comm_recv_at(comm, me, got, n, d, peer, 8));
  } else if (t_rank % 2 == 0) {
    T_OK(cubert_comm_send(comm, mine, n, d, peer, 7));
    T_OK(cubert_comm_recv(comm, got, n, d, peer, 8));
  } else {
    T_OK(cubert_comm_recv(comm, got, n, d, peer, 7));
    T_OK(cubert_comm_send(comm, mine, n, d, peer, 8));
  }
  ctx x = {.root = peer, .salt = salt};
  check(c, got, d, n, e_root, &x, what);
  cubert_handle_release(got);
  cubert_handle_release(mine);
}

/* write -> all_reduce -> broadcast -> all_reduce -> read with no sync in between. */
static void test_stream_order(cubert_comm *comm, cubert_client *c) {
  size_t n = 100003;
  cubert_handle *a = empty(c, n * 4), *b = empty(c, n * 4);
  int32_t *host = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) host[i] = (int32_t)(i % 1000) + t_rank;
  T_OK(cubert_client_write(c, a, 0, host, n * 4));
  T_OK(cubert_comm_all_reduce(comm, &a, &b, n, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  /* overwrite b on rank 0 after the all_reduce, broadcast rank 0's, reduce again in place */
  if (t_rank == 0) {
    for (size_t i = 0; i < n; ++i) host[i] = (int32_t)(i % 7);
    T_OK(cubert_client_write(c, b, 0, host, n * 4));
  }
  T_OK(cubert_comm_broadcast(comm, &b, n, CUBERT_DTYPE_I32, 0));
  T_OK(cubert_comm_all_reduce(comm, &b, &b, n, CUBERT_DTYPE_I32, CUBERT_REDUCE_MAX));
  T_OK(cubert_comm_all_reduce(comm, &a, &a, n, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  int32_t *ra = malloc(n * 4), *rb = malloc(n * 4);
  T_OK(cubert_client_read(c, b, rb, n * 4));
  T_OK(cubert_client_read(c, a, ra, n * 4));
  int32_t ranks_sum = t_size * (t_size - 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    int32_t wa = (int32_t)(i % 1000) * t_size + ranks_sum, wb = (int32_t)(i % 7);
    if (ra[i] != wa || rb[i] != wb) {
      t_fail(__FILE__, __LINE__, "stream order: element %zu: a %d (want %d), b %d (want %d)", i,
             ra[i], wa, rb[i], wb);
      break;
    }
  }
  free(ra);
  free(rb);
  free(host);
  cubert_handle_release(a);
  cubert_handle_release(b);
}

/* Errors every rank gets alike (nothing is queued). */
static void test_argument_errors(cubert_comm *comm, cubert_client *c) {
  size_t P = (size_t)t_size;
  cubert_handle *h = empty(c, 64);
  T_ERR(cubert_comm_send(comm, h, 4, CUBERT_DTYPE_F32, P, 0), CUBERT_CODE_INVALID_ARGUMENT, "peer");
  T_ERR(cubert_comm_recv(comm, h, 4, CUBERT_DTYPE_F32, (size_t)t_rank, 0),
        CUBERT_CODE_INVALID_ARGUMENT, "peer");
  T_ERR(cubert_comm_send(comm, h, 4, CUBERT_DTYPE_F32, (size_t)(t_rank ^ 1) % P, -1),
        CUBERT_CODE_INVALID_ARGUMENT, "tag -1");
  T_ERR(cubert_comm_broadcast(comm, &h, 4, CUBERT_DTYPE_F32, P), CUBERT_CODE_INVALID_ARGUMENT,
        "root");
  /* the named-member form: only this process's rank, and MPI's tag limit */
  if (P > 1)
    T_ERR(cubert_comm_send_from(comm, ((size_t)t_rank + 1) % P, h, 4, CUBERT_DTYPE_F32,
                                (size_t)t_rank, 0),
          CUBERT_CODE_INVALID_ARGUMENT, "the members in this process are ranks");
  T_ERR(cubert_comm_recv_at(comm, (size_t)t_rank, h, 4, CUBERT_DTYPE_F32, (size_t)(t_rank ^ 1) % P,
                            -1),
        CUBERT_CODE_INVALID_ARGUMENT, "tag -1");
  T_ERR(cubert_comm_reduce(comm, &h, &h, 4, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, P + 3),
        CUBERT_CODE_INVALID_ARGUMENT, "root");
  /* 17 f32 = 68 bytes > 64 */
  T_ERR(cubert_comm_all_reduce(comm, &h, &h, 17, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM),
        CUBERT_CODE_INVALID_ARGUMENT, "68");
  T_ERR(cubert_comm_all_gather(comm, &h, &h, 2, CUBERT_DTYPE_F32), CUBERT_CODE_INVALID_ARGUMENT,
        "");
  T_ERR(cubert_comm_all_reduce(comm, &h, &h, 4, CUBERT_DTYPE_U32, CUBERT_REDUCE_SUM),
        CUBERT_CODE_INVALID_ARGUMENT, "dtype");
  T_ERR(cubert_comm_all_reduce(comm, &h, &h, 4, CUBERT_DTYPE_F32, CUBERT_REDUCE_ARGMAX),
        CUBERT_CODE_INVALID_ARGUMENT, "op is 4");
  T_ERR(cubert_comm_create_mpi(MPI_COMM_NULL, c, &(cubert_comm *){NULL}),
        CUBERT_CODE_INVALID_ARGUMENT, "MPI_COMM_NULL");
  /* send/recv need an MPI communicator */
  cubert_comm *local = NULL;
  T_OK(cubert_comm_create(&c, 1, &local));
  T_ERR(cubert_comm_send(local, h, 4, CUBERT_DTYPE_F32, 0, 0), CUBERT_CODE_INVALID_ARGUMENT,
        "cubert_comm_create_mpi");
  T_ERR(cubert_comm_recv(NULL, h, 4, CUBERT_DTYPE_F32, 0, 0), CUBERT_CODE_INVALID_ARGUMENT,
        "comm is NULL");
  cubert_comm_release(local);
  /* nothing was queued: the stream is clean */
  T_OK(cubert_client_sync(c));
  cubert_handle_release(h);
}

/* Ranks that disagree: an error for both ranks (from the stream's next sync; the call itself
   only checks arguments), at once, never a hang (tests/mpi/mpi_mismatch.c has the rest). A fresh
   communicator (this one breaks). */
static void test_mismatch(cubert_client *c) {
  setenv("CUBERT_MPI_TIMEOUT_MS", "4000", 1);
  cubert_comm *comm = NULL;
  T_OK(cubert_comm_create_mpi(MPI_COMM_WORLD, c, &comm));
  unsetenv("CUBERT_MPI_TIMEOUT_MS");
  if (!comm) return;
  /* send/recv of different sizes: rank 1 expects twice what rank 0 sends */
  cubert_handle *h = empty(c, 4096);
  cubert_status s = NULL;
  if (t_rank == 0) s = cubert_comm_send(comm, h, 100, CUBERT_DTYPE_F32, 1, 3);
  if (t_rank == 1) s = cubert_comm_recv(comm, h, 200, CUBERT_DTYPE_F32, 0, 3);
  if (!s) s = cubert_client_sync(c);
  /* both ranks fail, naming both calls (issue 22: the mismatch is reported on every rank) */
  if (t_rank == 1)
    T_CHECK(s && strstr(cubert_status_message(s),
                        "rank 0 sent cubert_comm_send of 100 f32 where this rank receives "
                        "cubert_comm_recv of 200 f32"),
            "mismatched recv: %s", s ? cubert_status_message(s) : "no error");
  else if (t_rank == 0)
    T_CHECK(s && strstr(cubert_status_message(s),
                        "rank 1 receives cubert_comm_recv of 200 f32 where this rank sent "
                        "cubert_comm_send of 100 f32"),
            "mismatched send: %s", s ? cubert_status_message(s) : "no error");
  cubert_status_free(s);
  /* rank 1's communicator is now broken: its next call fails at once, naming the first error */
  if (t_rank == 1) {
    s = cubert_comm_all_reduce(comm, &h, &h, 1, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM);
    if (!s) s = cubert_client_sync(c);
    T_CHECK(s && strstr(cubert_status_message(s), "failed earlier"), "broken comm: %s",
            s ? cubert_status_message(s) : "no error");
    cubert_status_free(s);
  }
  cubert_handle_release(h);
  cubert_comm_release(comm);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  cubert_client *c = t_init(&argc, &argv);
  cubert_comm *comm = NULL;
  T_OK(cubert_comm_create_mpi(MPI_COMM_WORLD, c, &comm));
  if (comm) {
    T_CHECK(cubert_comm_size(comm) == (size_t)t_size, "size %zu", cubert_comm_size(comm));
    T_CHECK(cubert_comm_rank(comm) == (size_t)t_rank, "rank %zu", cubert_comm_rank(comm));
    T_CHECK(cubert_comm_local_count(comm) == 1, "local_count %zu", cubert_comm_local_count(comm));
    unsigned salt = 1;
    for (size_t si = 0; si < 3; ++si)
      for (size_t di = 0; di < 3; ++di) {
        size_t n = sizes[si];
        for (size_t oi = 0; oi < 3; ++oi) {
          test_all_reduce(comm, c, dtypes[di], ops[oi], n, (int)(oi == 1), ++salt);
          test_reduce(comm, c, dtypes[di], ops[oi], n, ++salt);
          test_reduce_scatter(comm, c, dtypes[di], ops[oi], n, ++salt);
        }
        test_broadcast(comm, c, dtypes[di], n, ++salt);
        test_all_gather(comm, c, dtypes[di], n, ++salt);
        test_send_recv(comm, c, dtypes[di], n, ++salt);
      }
    /* Mean over MPI: seed-server-base.rs.txt, ReduceOperation::Mean ("the reduce's aggregation
       operation e.g. mean, sum"), with the integer rule of cubert/comm.h: every dtype and size
       through the ring / halving-doubling all_reduce, the tree reduce and the ring
       reduce_scatter (the division happens once, where each finishes its sum). */
    for (size_t si = 0; si < 3; ++si)
      for (size_t di = 0; di < 3; ++di) {
        test_all_reduce(comm, c, dtypes[di], CUBERT_REDUCE_MEAN, sizes[si], (int)(si == 1), ++salt);
        test_reduce(comm, c, dtypes[di], CUBERT_REDUCE_MEAN, sizes[si], ++salt);
        test_reduce_scatter(comm, c, dtypes[di], CUBERT_REDUCE_MEAN, sizes[si], ++salt);
      }
    /* large: several chunks of the engine's pipeline */
    size_t big = sizes[3];
    test_all_reduce(comm, c, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, big, 0, ++salt);
    test_all_reduce(comm, c, CUBERT_DTYPE_I32, CUBERT_REDUCE_MAX, big, 1, ++salt);
    test_all_reduce(comm, c, CUBERT_DTYPE_F64, CUBERT_REDUCE_MIN, big / 2, 0, ++salt);
    test_all_reduce(comm, c, CUBERT_DTYPE_F32, CUBERT_REDUCE_MEAN, big, 0, ++salt);
    test_all_reduce(comm, c, CUBERT_DTYPE_I32, CUBERT_REDUCE_MEAN, big, 1, ++salt);
    test_reduce(comm, c, CUBERT_DTYPE_F32, CUBERT_REDUCE_MIN, big, ++salt);
    test_reduce_scatter(comm, c, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, big / (size_t)t_size + 3,
                        ++salt);
    test_broadcast(comm, c, CUBERT_DTYPE_F32, big, ++salt);
    test_all_gather(comm, c, CUBERT_DTYPE_I32, big / (size_t)t_size + 1, ++salt);
    test_send_recv(comm, c, CUBERT_DTYPE_F32, big, ++salt);
    test_stream_order(comm, c);
    test_argument_errors(comm, c);
    cubert_comm_release(comm);
  }
  if (t_size >= 2) test_mismatch(c);
  cubert_client_release(c);
  return t_finish("mpi_collectives");
}
