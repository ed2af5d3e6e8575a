/* Conformance: communicators in one process (cubert/comm.h). The members mix devices: N = 1 is
   the device under test; N = 2 is the CPU server and the device under test; N = 3 adds a second
   CPU client (another instance of the CPU server, or the same one once devices are shared).
   CUBERT_COMM_DEVICES (a selector list) replaces them, e.g. by two GPUs.
   Every result is compared with a host reduction in rank order, bit for bit. */
#include <math.h>
#include <stdint.h>

#include "cts.h"
#include "cubert/comm.h"

TestSuite(comm, .init = cts_setup, .fini = cts_teardown, .timeout = 600);

#define MAXN 3

typedef struct members {
  size_t n;
  cubert_client *clients[MAXN];
  int own[MAXN]; /* created here */
  cubert_comm *comm;
} members;

/* CUBERT_COMM_DEVICES="opencl:0,opencl:1" (the two-GPU machine): members 0..n-1 are clients
   of these selectors in turn instead of the CPU server and the device under test. */
static int members_from_env(members *m, size_t n) {
  const char *env = getenv("CUBERT_COMM_DEVICES");
  if (!env || !*env) return 0;
  char list[256], *sel[MAXN];
  size_t count = 0;
  snprintf(list, sizeof list, "%s", env);
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t && count < MAXN;
       t = strtok_r(NULL, ",", &save))
    sel[count++] = t;
  cr_assert(count > 0, "CUBERT_COMM_DEVICES=\"%s\" names no device", env);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_create(sel[i % count], &m->clients[i]));
    m->own[i] = 1;
  }
  return 1;
}

static void members_open(members *m, size_t n) {
  memset(m, 0, sizeof *m);
  m->n = n;
  if (members_from_env(m, n)) {
  } else if (n == 1) {
    m->clients[0] = cts_client;
  } else {
    ASSERT_OK(cubert_client_create("cpu", &m->clients[0]));
    m->own[0] = 1;
    m->clients[1] = cts_client;
    if (n == 3) {
      ASSERT_OK(cubert_client_create("cpu", &m->clients[2]));
      m->own[2] = 1;
    }
  }
  ASSERT_OK(cubert_comm_create(m->clients, n, &m->comm));
  cr_assert_eq(cubert_comm_size(m->comm), n);
  cr_assert_eq(cubert_comm_local_count(m->comm), n);
  cr_assert_eq(cubert_comm_rank(m->comm), 0);
}

static void members_close(members *m) {
  cubert_comm_release(m->comm);
  for (size_t i = 0; i < m->n; ++i)
    if (m->own[i]) cubert_client_release(m->clients[i]);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}

static void fill(void *p, size_t count, cubert_dtype dtype) {
  for (size_t i = 0; i < count; ++i) {
    if (dtype == CUBERT_DTYPE_F32)
      ((float *)p)[i] = (float)((int)(rnd() % 2001) - 1000) / 7.0f;
    else if (dtype == CUBERT_DTYPE_F64)
      ((double *)p)[i] = (double)((int)(rnd() % 200001) - 100000) / 13.0;
    else
      ((int32_t *)p)[i] = (int32_t)rnd();
  }
}

/* acc = acc op x, as the engine does it (rank order); the mean sums here, mean_finish
   divides. */
static void host_op(void *acc, const void *x, size_t count, cubert_dtype dtype,
                    cubert_reduce_op op) {
  if (op == CUBERT_REDUCE_MEAN) op = CUBERT_REDUCE_SUM;
  for (size_t i = 0; i < count; ++i) {
    if (dtype == CUBERT_DTYPE_F32) {
      float a = ((float *)acc)[i], b = ((const float *)x)[i];
      ((float *)acc)[i] = op == CUBERT_REDUCE_SUM   ? a + b
                          : op == CUBERT_REDUCE_MAX ? fmaxf(a, b)
                                                    : fminf(a, b);
    } else if (dtype == CUBERT_DTYPE_F64) {
      double a = ((double *)acc)[i], b = ((const double *)x)[i];
      ((double *)acc)[i] = op == CUBERT_REDUCE_SUM   ? a + b
                           : op == CUBERT_REDUCE_MAX ? fmax(a, b)
                                                     : fmin(a, b);
    } else {
      int32_t a = ((int32_t *)acc)[i], b = ((const int32_t *)x)[i];
      ((int32_t *)acc)[i] = op == CUBERT_REDUCE_SUM   ? (int32_t)((uint32_t)a + (uint32_t)b)
                            : op == CUBERT_REDUCE_MAX ? (a > b ? a : b)
                                                      : (a < b ? a : b);
    }
  }
}

/* The mean's rule (cubert/comm.h): the finished sum divided once by the member count n; f32
   rounds the double quotient once, i32 truncates toward zero. Other ops: nothing. */
static void mean_finish(void *acc, size_t count, cubert_dtype dtype, cubert_reduce_op op,
                        size_t n) {
  if (op != CUBERT_REDUCE_MEAN) return;
  for (size_t i = 0; i < count; ++i) {
    if (dtype == CUBERT_DTYPE_F32)
      ((float *)acc)[i] = (float)((double)((float *)acc)[i] / (double)n);
    else if (dtype == CUBERT_DTYPE_F64)
      ((double *)acc)[i] = ((double *)acc)[i] / (double)n;
    else
      ((int32_t *)acc)[i] = ((int32_t *)acc)[i] / (int32_t)n;
  }
}

static size_t esize(cubert_dtype dtype) {
  return dtype == CUBERT_DTYPE_F64 ? 8 : 4;
}

/* Buffers of `bytes` on each member holding host[i] (or uninitialised when host is NULL). */
static void buffers(members *m, void **host, size_t bytes, cubert_handle **out) {
  for (size_t i = 0; i < m->n; ++i) {
    if (host)
      ASSERT_OK(cubert_client_create_buffer(m->clients[i], host[i], bytes, &out[i]));
    else
      ASSERT_OK(cubert_client_empty(m->clients[i], bytes ? bytes : 1, &out[i]));
  }
}

static void release_all(cubert_handle **h, size_t n) {
  for (size_t i = 0; i < n; ++i) cubert_handle_release(h[i]);
}

static void expect_bytes(const void *got, const void *want, size_t bytes, const char *what,
                         size_t member, size_t n, size_t count) {
  if (bytes == 0 || memcmp(got, want, bytes) == 0) return;
  size_t at = 0;
  while (at < bytes && ((const unsigned char *)got)[at] == ((const unsigned char *)want)[at]) ++at;
  cr_assert_fail("%s: member %zu of %zu, count %zu: first difference at byte %zu", what, member, n,
                 count, at);
}

static void check_all_reduce(size_t n, size_t count, cubert_dtype dtype, cubert_reduce_op op,
                             int in_place) {
  members m;
  members_open(&m, n);
  size_t bytes = count * esize(dtype);
  void *host[MAXN], *want = malloc(bytes + 8), *got = malloc(bytes + 8);
  for (size_t i = 0; i < n; ++i) {
    host[i] = malloc(bytes + 8);
    fill(host[i], count, dtype);
  }
  if (bytes) memcpy(want, host[0], bytes);
  for (size_t i = 1; i < n; ++i) host_op(want, host[i], count, dtype, op);
  mean_finish(want, count, dtype, op, n);
  cubert_handle *src[MAXN], *dst[MAXN];
  buffers(&m, host, bytes, src);
  if (in_place)
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  else
    buffers(&m, NULL, bytes, dst);
  /* no sync between the writes, the collective and the reads */
  ASSERT_OK(cubert_comm_all_reduce(m.comm, src, dst, count, dtype, op));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst[i], got, bytes));
    expect_bytes(got, want, bytes, "all_reduce", i, n, count);
  }
  if (!in_place) { /* src is untouched */
    for (size_t i = 0; i < n; ++i) {
      ASSERT_OK(cubert_client_read(m.clients[i], src[i], got, bytes));
      expect_bytes(got, host[i], bytes, "all_reduce src", i, n, count);
    }
    release_all(dst, n);
  }
  release_all(src, n);
  for (size_t i = 0; i < n; ++i) free(host[i]);
  free(want);
  free(got);
  members_close(&m);
}

static const cubert_dtype dtypes[] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_F64, CUBERT_DTYPE_I32};
static const cubert_reduce_op ops[] = {CUBERT_REDUCE_SUM, CUBERT_REDUCE_MAX, CUBERT_REDUCE_MIN};

Test(comm, all_reduce_every_op_dtype_and_size) {
  const size_t sizes[] = {0, 1, 1009};
  for (size_t n = 1; n <= MAXN; ++n)
    for (size_t s = 0; s < 3; ++s)
      for (size_t d = 0; d < 3; ++d)
        for (size_t o = 0; o < 3; ++o) check_all_reduce(n, sizes[s], dtypes[d], ops[o], 0);
}

Test(comm, all_reduce_in_place) {
  for (size_t n = 1; n <= MAXN; ++n)
    check_all_reduce(n, 4099, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, 1);
  check_all_reduce(3, 777, CUBERT_DTYPE_I32, CUBERT_REDUCE_MAX, 1);
}

Test(comm, all_reduce_large) {
  /* several chunks (4 MiB each), a partial last one */
  check_all_reduce(3, 3000007, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, 0);
  check_all_reduce(2, 1000003, CUBERT_DTYPE_F64, CUBERT_REDUCE_MIN, 1);
}

Test(comm, all_reduce_small_chunks) {
  /* many chunks in flight: chunk of 4096 bytes, more chunks than staging slots */
  setenv("CUBERT_COMM_CHUNK_BYTES", "4096", 1);
  check_all_reduce(3, 100003, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM, 0);
  check_all_reduce(3, 100003, CUBERT_DTYPE_F64, CUBERT_REDUCE_MAX, 1);
  unsetenv("CUBERT_COMM_CHUNK_BYTES");
}

static void check_broadcast(size_t n, size_t count, size_t root) {
  members m;
  members_open(&m, n);
  size_t bytes = count * 4;
  void *host[MAXN], *got = malloc(bytes + 4);
  for (size_t i = 0; i < n; ++i) {
    host[i] = malloc(bytes + 4);
    fill(host[i], count, CUBERT_DTYPE_I32);
  }
  cubert_handle *buf[MAXN];
  buffers(&m, host, bytes, buf);
  ASSERT_OK(cubert_comm_broadcast(m.comm, buf, count, CUBERT_DTYPE_I32, root));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], buf[i], got, bytes));
    expect_bytes(got, host[root], bytes, "broadcast", i, n, count);
  }
  release_all(buf, n);
  for (size_t i = 0; i < n; ++i) free(host[i]);
  free(got);
  members_close(&m);
}

Test(comm, broadcast_every_root) {
  for (size_t n = 1; n <= MAXN; ++n)
    for (size_t root = 0; root < n; ++root) {
      check_broadcast(n, 0, root);
      check_broadcast(n, 1, root);
      check_broadcast(n, 65537, root);
    }
  check_broadcast(3, 3000007, 1);
}

static void check_reduce(size_t n, size_t count, cubert_dtype dtype, cubert_reduce_op op,
                         size_t root, int in_place) {
  members m;
  members_open(&m, n);
  size_t bytes = count * esize(dtype);
  void *host[MAXN], *want = malloc(bytes + 8), *got = malloc(bytes + 8);
  for (size_t i = 0; i < n; ++i) {
    host[i] = malloc(bytes + 8);
    fill(host[i], count, dtype);
  }
  if (bytes) memcpy(want, host[0], bytes);
  for (size_t i = 1; i < n; ++i) host_op(want, host[i], count, dtype, op);
  mean_finish(want, count, dtype, op, n);
  cubert_handle *src[MAXN], *dst[MAXN];
  buffers(&m, host, bytes, src);
  if (in_place)
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  else
    buffers(&m, host, bytes, dst); /* non-roots' dst must keep these bytes */
  ASSERT_OK(cubert_comm_reduce(m.comm, src, dst, count, dtype, op, root));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst[i], got, bytes));
    expect_bytes(got, i == root ? want : host[i], bytes, "reduce", i, n, count);
  }
  if (!in_place) release_all(dst, n);
  release_all(src, n);
  for (size_t i = 0; i < n; ++i) free(host[i]);
  free(want);
  free(got);
  members_close(&m);
}

Test(comm, reduce_every_root) {
  for (size_t n = 1; n <= MAXN; ++n)
    for (size_t root = 0; root < n; ++root)
      for (size_t d = 0; d < 3; ++d) {
        check_reduce(n, 1, dtypes[d], ops[(root + d) % 3], root, 0);
        check_reduce(n, 1009, dtypes[d], ops[(root + d) % 3], root, root == 1);
      }
  check_reduce(3, 0, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, 2, 0);
  check_reduce(3, 3000007, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM, 1, 0);
}

static void check_all_gather(size_t n, size_t cpm, cubert_dtype dtype) {
  members m;
  members_open(&m, n);
  size_t piece = cpm * esize(dtype), total = piece * n;
  void *host[MAXN], *want = malloc(total + 8), *got = malloc(total + 8);
  for (size_t i = 0; i < n; ++i) {
    host[i] = malloc(piece + 8);
    fill(host[i], cpm, dtype);
    if (piece) memcpy((char *)want + i * piece, host[i], piece);
  }
  cubert_handle *src[MAXN], *dst[MAXN];
  buffers(&m, host, piece, src);
  buffers(&m, NULL, total, dst);
  ASSERT_OK(cubert_comm_all_gather(m.comm, src, dst, cpm, dtype));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst[i], got, total));
    expect_bytes(got, want, total, "all_gather", i, n, cpm);
  }
  release_all(src, n);
  release_all(dst, n);
  for (size_t i = 0; i < n; ++i) free(host[i]);
  free(want);
  free(got);
  members_close(&m);
}

Test(comm, all_gather) {
  for (size_t n = 1; n <= MAXN; ++n) {
    check_all_gather(n, 0, CUBERT_DTYPE_F32);
    check_all_gather(n, 1, CUBERT_DTYPE_F64);
    check_all_gather(n, 1009, CUBERT_DTYPE_I32);
  }
  check_all_gather(3, 1000003, CUBERT_DTYPE_F32);
}

static void check_reduce_scatter(size_t n, size_t cpm, cubert_dtype dtype, cubert_reduce_op op) {
  members m;
  members_open(&m, n);
  size_t piece = cpm * esize(dtype), total = piece * n;
  void *host[MAXN], *want = malloc(total + 8), *got = malloc(piece + 8);
  for (size_t i = 0; i < n; ++i) {
    host[i] = malloc(total + 8);
    fill(host[i], cpm * n, dtype);
  }
  if (total) memcpy(want, host[0], total);
  for (size_t i = 1; i < n; ++i) host_op(want, host[i], cpm * n, dtype, op);
  mean_finish(want, cpm * n, dtype, op, n);
  cubert_handle *src[MAXN], *dst[MAXN];
  buffers(&m, host, total, src);
  buffers(&m, NULL, piece, dst);
  ASSERT_OK(cubert_comm_reduce_scatter(m.comm, src, dst, cpm, dtype, op));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst[i], got, piece));
    expect_bytes(got, (char *)want + i * piece, piece, "reduce_scatter", i, n, cpm);
  }
  release_all(src, n);
  release_all(dst, n);
  for (size_t i = 0; i < n; ++i) free(host[i]);
  free(want);
  free(got);
  members_close(&m);
}

Test(comm, reduce_scatter) {
  for (size_t n = 1; n <= MAXN; ++n)
    for (size_t d = 0; d < 3; ++d) {
      check_reduce_scatter(n, 0, dtypes[d], CUBERT_REDUCE_SUM);
      check_reduce_scatter(n, 1, dtypes[d], ops[d]);
      check_reduce_scatter(n, 1009, dtypes[d], ops[(d + 1) % 3]);
    }
  check_reduce_scatter(3, 1000003, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM);
}

/* Mean in the reducing collectives: seed-server-base.rs.txt, ReduceOperation::Mean (the
   all_reduce "op - the reduce's aggregation operation e.g. mean, sum"). Every dtype, every
   member count, all_reduce / reduce / reduce_scatter, against the rule of cubert/comm.h. */
Test(comm, mean_every_collective_dtype_and_size) {
  for (size_t n = 1; n <= MAXN; ++n)
    for (size_t d = 0; d < 3; ++d) {
      check_all_reduce(n, 1, dtypes[d], CUBERT_REDUCE_MEAN, 0);
      check_all_reduce(n, 4099, dtypes[d], CUBERT_REDUCE_MEAN, n == 2);
      check_reduce(n, 1009, dtypes[d], CUBERT_REDUCE_MEAN, n - 1, 0);
      check_reduce_scatter(n, 1009, dtypes[d], CUBERT_REDUCE_MEAN);
    }
  check_all_reduce(3, 3000007, CUBERT_DTYPE_F32, CUBERT_REDUCE_MEAN, 0);
}

/* The integer rule of the mean (seed-server-base.rs.txt, ReduceOperation::Mean; the rule is
   cubert's, comm.h): the i32 sum divided by the member count, truncating toward zero, with
   known values: 3 members {7, 0, 0} -> 2, {-7, 0, 0} -> -2, {1, 1, 2} -> 1, {-1, -1, -2} -> -1,
   {5, 5, 5} -> 5; and f32 {1, 2, 4} -> 7/3 correctly rounded. */
Test(comm, mean_integer_rule_truncates_toward_zero) {
  members m;
  members_open(&m, 3);
  enum { K = 5 };
  const int32_t v[3][K] = {{7, -7, 1, -1, 5}, {0, 0, 1, -1, 5}, {0, 0, 2, -2, 5}};
  const int32_t want[K] = {2, -2, 1, -1, 5};
  cubert_handle *h[3];
  for (size_t i = 0; i < 3; ++i)
    ASSERT_OK(cubert_client_create_buffer(m.clients[i], v[i], sizeof v[i], &h[i]));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, h, h, K, CUBERT_DTYPE_I32, CUBERT_REDUCE_MEAN));
  for (size_t i = 0; i < 3; ++i) {
    int32_t got[K];
    ASSERT_OK(cubert_client_read(m.clients[i], h[i], got, sizeof got));
    for (size_t k = 0; k < K; ++k)
      cr_assert_eq(got[k], want[k], "member %zu, element %zu: mean %d, expected %d", i, k, got[k],
                   want[k]);
  }
  release_all(h, 3);
  const float f[3] = {1.0f, 2.0f, 4.0f};
  for (size_t i = 0; i < 3; ++i)
    ASSERT_OK(cubert_client_create_buffer(m.clients[i], &f[i], 4, &h[i]));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, h, h, 1, CUBERT_DTYPE_F32, CUBERT_REDUCE_MEAN));
  for (size_t i = 0; i < 3; ++i) {
    float got = 0;
    ASSERT_OK(cubert_client_read(m.clients[i], h[i], &got, 4));
    cr_assert_eq(got, 7.0f / 3.0f, "member %zu: f32 mean %.9g, expected %.9g", i, got, 7.0f / 3.0f);
  }
  release_all(h, 3);
  members_close(&m);
}

/* In-process point-to-point: seed-server-base.rs.txt, ServerCommunication::send / recv (a
   server sends a copy descriptor to the server of device_id_dst, which receives it), as the MPI
   communicator has it (cubert/mpi.h). Every ordered pair of members, every dtype, odd sizes and
   several chunks; the send's bytes are those before it on its stream (a write queued after the
   send does not leak into the message); two messages with one tag arrive in order. */
Test(comm, send_recv_in_process_every_pair) {
  members m;
  members_open(&m, 3);
  const size_t counts[] = {0, 1, 1009, 3000007};
  for (size_t d = 0; d < 3; ++d)
    for (size_t from = 0; from < 3; ++from)
      for (size_t to = 0; to < 3; ++to) {
        if (from == to) continue;
        size_t count = counts[(d + from + to) % 4], bytes = count * esize(dtypes[d]);
        void *want = malloc(bytes + 8), *later = malloc(bytes + 8), *got = malloc(bytes + 8);
        fill(want, count, dtypes[d]);
        fill(later, count, dtypes[d]);
        cubert_handle *src = NULL, *dst = NULL;
        ASSERT_OK(cubert_client_create_buffer(m.clients[from], want, bytes ? bytes : 1, &src));
        ASSERT_OK(cubert_client_empty(m.clients[to], bytes ? bytes : 1, &dst));
        ASSERT_OK(cubert_comm_send_from(m.comm, from, src, count, dtypes[d], to, 7));
        if (bytes) ASSERT_OK(cubert_client_write(m.clients[from], src, 0, later, bytes));
        ASSERT_OK(cubert_comm_recv_at(m.comm, to, dst, count, dtypes[d], from, 7));
        ASSERT_OK(cubert_client_read(m.clients[to], dst, got, bytes));
        expect_bytes(got, want, bytes, "send/recv", to, 3, count);
        cubert_handle_release(src);
        cubert_handle_release(dst);
        free(want);
        free(later);
        free(got);
      }
  /* two messages 0 -> 2 with one tag, and one with another tag in between: FIFO per tag */
  int32_t a = 11, b = 22, c = 33, got = 0;
  cubert_handle *ha = NULL, *hb = NULL, *hc = NULL, *r = NULL;
  ASSERT_OK(cubert_client_create_buffer(m.clients[0], &a, 4, &ha));
  ASSERT_OK(cubert_client_create_buffer(m.clients[0], &b, 4, &hb));
  ASSERT_OK(cubert_client_create_buffer(m.clients[0], &c, 4, &hc));
  ASSERT_OK(cubert_client_empty(m.clients[2], 4, &r));
  ASSERT_OK(cubert_comm_send_from(m.comm, 0, ha, 1, CUBERT_DTYPE_I32, 2, 1));
  ASSERT_OK(cubert_comm_send_from(m.comm, 0, hc, 1, CUBERT_DTYPE_I32, 2, 2));
  ASSERT_OK(cubert_comm_send_from(m.comm, 0, hb, 1, CUBERT_DTYPE_I32, 2, 1));
  const int32_t order[3] = {11, 22, 33};
  const int tags[3] = {1, 1, 2};
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(cubert_comm_recv_at(m.comm, 2, r, 1, CUBERT_DTYPE_I32, 0, tags[i]));
    ASSERT_OK(cubert_client_read(m.clients[2], r, &got, 4));
    cr_assert_eq(got, order[i], "message %d (tag %d): %d, expected %d", i, tags[i], got, order[i]);
  }
  /* a send nobody receives is freed with the communicator (the leak checkers see it) */
  ASSERT_OK(cubert_comm_send_from(m.comm, 0, ha, 0, CUBERT_DTYPE_I32, 1, 5));
  cubert_handle_release(ha);
  cubert_handle_release(hb);
  cubert_handle_release(hc);
  cubert_handle_release(r);
  members_close(&m);
}

/* Bad point-to-point calls fail at the call, naming the argument and the limit; nothing is
   queued (the streams stay clean). */
Test(comm, send_recv_in_process_errors) {
  members m;
  members_open(&m, 2);
  cubert_handle *h0 = NULL, *h1 = NULL;
  ASSERT_OK(cubert_client_empty(m.clients[0], 64, &h0));
  ASSERT_OK(cubert_client_empty(m.clients[1], 64, &h1));
  const cubert_dtype f32 = CUBERT_DTYPE_F32;
  ASSERT_CODE(cubert_comm_send_from(NULL, 0, h0, 4, f32, 1, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "cubert_comm_send_from: comm is NULL");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 2, h0, 4, f32, 1, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "rank is 2; the members in this process are ranks 0..1");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h0, 4, f32, 0, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "peer is 0; expected another rank in 0..1 (this is rank 0)");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h0, 4, f32, 5, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "peer is 5");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h0, 4, f32, 1, -3), CUBERT_CODE_INVALID_ARGUMENT,
              "tag -3 is negative");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h0, 17, f32, 1, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "holds 64 bytes; the collective needs 68");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, NULL, 4, f32, 1, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "buf");
  if (strcmp(cubert_client_properties(m.clients[0])->backend,
             cubert_client_properties(m.clients[1])->backend) != 0)
    ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h1, 4, f32, 1, 0), CUBERT_CODE_NOT_FOUND,
                "member 0");
  ASSERT_CODE(cubert_comm_send_from(m.comm, 0, h0, 4, CUBERT_DTYPE_U32, 1, 0),
              CUBERT_CODE_INVALID_ARGUMENT, "dtype is u32");
  /* a recv with no send queued before it, and one that disagrees with the send */
  ASSERT_CODE(cubert_comm_recv_at(m.comm, 1, h1, 4, f32, 0, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "no send from rank 0 to rank 1 with tag 0 is queued");
  ASSERT_OK(cubert_comm_send_from(m.comm, 0, h0, 4, f32, 1, 9));
  ASSERT_CODE(cubert_comm_recv_at(m.comm, 1, h1, 3, f32, 0, 9), CUBERT_CODE_INVALID_ARGUMENT,
              "rank 1 receives 3 f32 from rank 0 (tag 9), but the queued send has 4 f32");
  ASSERT_OK(cubert_comm_recv_at(m.comm, 1, h1, 4, f32, 0, 9));
  ASSERT_OK(cubert_client_sync(m.clients[0]));
  ASSERT_OK(cubert_client_sync(m.clients[1]));
  cubert_handle_release(h0);
  cubert_handle_release(h1);
  members_close(&m);
}

/* A send queued behind a failed kernel delivers nothing (issue 35: the receiver's sync returned
   OK with the data written). The kernel fails on the sender, a CPU client (a validate-mode fill
   told of more words than its buffer holds: the CPU server reports it as the kernel runs); the
   receiver is the device under test on a stream of its own (a view pinned to stream 3), so
   that only the sender's stream failed. The recv fails, naming the sender and its failed
   stream, and leaves buf as it was; both ends stay usable: the next send arrives. */
Test(comm, send_behind_a_failed_kernel_is_not_delivered) {
  cubert_client *clients[2] = {NULL, NULL};
  ASSERT_OK(cubert_client_create("cpu", &clients[0]));
  ASSERT_OK(cubert_client_with_stream(cts_client, 3, &clients[1]));
  cubert_comm *comm = NULL;
  ASSERT_OK(cubert_comm_create(clients, 2, &comm));
  enum { COUNT = 64 };
  int32_t mine[COUNT], theirs[COUNT], got[COUNT];
  for (int i = 0; i < COUNT; ++i) mine[i] = 1000 + i, theirs[i] = -1 - i;
  cubert_handle *bad = NULL, *src = NULL, *dst = NULL;
  ASSERT_OK(cubert_client_empty(clients[0], 16 * 4, &bad));
  ASSERT_OK(cubert_client_create_buffer(clients[0], mine, sizeof mine, &src));
  ASSERT_OK(cubert_client_create_buffer(clients[1], theirs, sizeof theirs, &dst));
  const uint64_t info[2] = {COUNT, 7};
  cubert_kernel_args args = {&bad, 1, info, 2};
  ASSERT_OK(cubert_client_launch_mode(
      clients[0], &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
      cubert_cube_dim_new_3d(COUNT, 1, 1), &args, CUBERT_EXECUTION_VALIDATE));
  ASSERT_OK(cubert_comm_send_from(comm, 0, src, COUNT, CUBERT_DTYPE_I32, 1, 3));
  ASSERT_OK(cubert_comm_recv_at(comm, 1, dst, COUNT, CUBERT_DTYPE_I32, 0, 3));
  cubert_status s = cubert_client_sync(clients[1]);
  cr_assert_not_null(s, "the recv behind a failed send succeeded");
  const char *text = cubert_status_message(s);
  cr_assert(strstr(text, "rank 1 received nothing from rank 0 (tag 3)") &&
                strstr(text,
                       "the send from rank 0 to rank 1 (tag 3, call #0): member 0's stream "
                       "had failed before it"),
            "the recv's error names the sender and its failed stream: %s", text);
  cubert_status_free(s);
  ASSERT_OK(cubert_client_read(clients[1], dst, got, sizeof got));
  for (int i = 0; i < COUNT; ++i)
    cr_assert_eq(got[i], theirs[i], "the failed recv wrote element %d: %d", i, got[i]);
  /* The sender's stream reports its kernel's failure (and the send's). */
  ASSERT_CODE(cubert_client_sync(clients[0]), CUBERT_CODE_SERVER_UNHEALTHY, "16 elements");
  ASSERT_OK(cubert_comm_send_from(comm, 0, src, COUNT, CUBERT_DTYPE_I32, 1, 3));
  ASSERT_OK(cubert_comm_recv_at(comm, 1, dst, COUNT, CUBERT_DTYPE_I32, 0, 3));
  ASSERT_OK(cubert_client_read(clients[1], dst, got, sizeof got));
  for (int i = 0; i < COUNT; ++i) cr_assert_eq(got[i], mine[i], "the next send: element %d", i);
  ASSERT_OK(cubert_client_sync(clients[0]));
  cubert_handle_release(bad);
  cubert_handle_release(src);
  cubert_handle_release(dst);
  cubert_comm_release(comm);
  cubert_client_release(clients[1]);
  cubert_client_release(clients[0]);
}

Test(comm, stream_order_write_collective_write_read) {
  /* write -> all_reduce -> write src again -> all_reduce -> read, no syncs: each collective
     sees the writes queued before it and none after it. */
  members m;
  members_open(&m, 3);
  size_t count = 100003, bytes = count * 4;
  int32_t *a = malloc(bytes), *b = malloc(bytes), *got = malloc(bytes);
  cubert_handle *src[MAXN], *dst1[MAXN], *dst2[MAXN];
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(cubert_client_empty(m.clients[i], bytes, &src[i]));
    ASSERT_OK(cubert_client_empty(m.clients[i], bytes, &dst1[i]));
    ASSERT_OK(cubert_client_empty(m.clients[i], bytes, &dst2[i]));
  }
  for (size_t k = 0; k < count; ++k) {
    a[k] = (int32_t)k;
    b[k] = -(int32_t)(2 * k);
  }
  for (size_t i = 0; i < 3; ++i) ASSERT_OK(cubert_client_write(m.clients[i], src[i], 0, a, bytes));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, src, dst1, count, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  for (size_t i = 0; i < 3; ++i) ASSERT_OK(cubert_client_write(m.clients[i], src[i], 0, b, bytes));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, src, dst2, count, CUBERT_DTYPE_I32, CUBERT_REDUCE_MAX));
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst1[i], got, bytes));
    for (size_t k = 0; k < count; ++k)
      cr_assert_eq(got[k], 3 * a[k], "member %zu element %zu: %d", i, k, got[k]);
    ASSERT_OK(cubert_client_read(m.clients[i], dst2[i], got, bytes));
    for (size_t k = 0; k < count; ++k) cr_assert_eq(got[k], b[k], "member %zu element %zu", i, k);
  }
  /* a chain on one buffer: in-place all_reduce twice, then read */
  for (size_t i = 0; i < 3; ++i) ASSERT_OK(cubert_client_write(m.clients[i], src[i], 0, a, bytes));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, src, src, count, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  ASSERT_OK(cubert_comm_all_reduce(m.comm, src, src, count, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], src[i], got, bytes));
    for (size_t k = 0; k < count; ++k)
      cr_assert_eq(got[k], 9 * a[k], "member %zu element %zu", i, k);
  }
  release_all(src, 3);
  release_all(dst1, 3);
  release_all(dst2, 3);
  free(a);
  free(b);
  free(got);
  members_close(&m);
}

Test(comm, same_client_twice_and_release_waits) {
  /* two members on one client (one stream), handles released right after the call, the
     communicator released with the work still queued */
  cubert_client *clients[2] = {cts_client, cts_client};
  cubert_comm *comm = NULL;
  ASSERT_OK(cubert_comm_create(clients, 2, &comm));
  size_t count = 5003;
  float x[5003], y[5003], got[5003];
  for (size_t k = 0; k < count; ++k) {
    x[k] = (float)k;
    y[k] = 0.5f;
  }
  cubert_handle *src[2], *dst[2];
  ASSERT_OK(cubert_client_create_buffer(cts_client, x, sizeof x, &src[0]));
  ASSERT_OK(cubert_client_create_buffer(cts_client, y, sizeof y, &src[1]));
  ASSERT_OK(cubert_client_empty(cts_client, sizeof x, &dst[0]));
  ASSERT_OK(cubert_client_empty(cts_client, sizeof x, &dst[1]));
  ASSERT_OK(cubert_comm_all_reduce(comm, src, dst, count, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  release_all(src, 2);
  cubert_comm_release(comm);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_OK(cubert_client_read(cts_client, dst[i], got, sizeof got));
    for (size_t k = 0; k < count; ++k) cr_assert_eq(got[k], x[k] + y[k]);
  }
  release_all(dst, 2);
}

Test(comm, argument_errors) {
  members m;
  members_open(&m, 2);
  cubert_handle *src[2], *dst[2], *small[2];
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_OK(cubert_client_empty(m.clients[i], 400, &src[i]));
    ASSERT_OK(cubert_client_empty(m.clients[i], 400, &dst[i]));
    ASSERT_OK(cubert_client_empty(m.clients[i], 396, &small[i]));
  }
  cubert_comm *c = m.comm;
  const cubert_dtype f32 = CUBERT_DTYPE_F32;
  const cubert_reduce_op sum = CUBERT_REDUCE_SUM;
  ASSERT_CODE(cubert_comm_all_reduce(NULL, src, dst, 100, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "comm is NULL");
  ASSERT_CODE(cubert_comm_all_reduce(c, NULL, dst, 100, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src is NULL");
  ASSERT_CODE(cubert_comm_all_reduce(c, src, NULL, 100, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "dst is NULL");
  /* lengths */
  ASSERT_CODE(cubert_comm_all_reduce(c, src, dst, 101, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[0] (member 0) holds 400 bytes; the collective needs 404");
  cubert_handle *mixed[2] = {src[0], small[1]};
  ASSERT_CODE(cubert_comm_all_reduce(c, mixed, dst, 100, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[1] (member 1) holds 396 bytes");
  ASSERT_CODE(cubert_comm_all_gather(c, src, dst, 100, f32), CUBERT_CODE_INVALID_ARGUMENT,
              "dst[0] (member 0) holds 400 bytes; the collective needs 800");
  ASSERT_CODE(cubert_comm_reduce_scatter(c, src, dst, 100, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[0] (member 0) holds 400 bytes; the collective needs 800");
  /* dtype, op, root */
  ASSERT_CODE(cubert_comm_all_reduce(c, src, dst, 10, CUBERT_DTYPE_U32, sum),
              CUBERT_CODE_INVALID_ARGUMENT, "dtype is u32");
  ASSERT_CODE(cubert_comm_all_reduce(c, src, dst, 10, CUBERT_DTYPE_F16, sum),
              CUBERT_CODE_INVALID_ARGUMENT, "dtype is f16");
  ASSERT_CODE(cubert_comm_all_reduce(c, src, dst, 10, (cubert_dtype)99, sum),
              CUBERT_CODE_INVALID_ARGUMENT, "dtype is unknown (99)");
  ASSERT_CODE(cubert_comm_all_reduce(c, src, dst, 10, f32, CUBERT_REDUCE_ARGMAX),
              CUBERT_CODE_INVALID_ARGUMENT,
              "op is 4; collectives take CUBERT_REDUCE_SUM (0), _MAX (1), _MIN (2) or _MEAN (3)");
  ASSERT_CODE(cubert_comm_reduce(c, src, dst, 10, f32, (cubert_reduce_op)-1, 0),
              CUBERT_CODE_INVALID_ARGUMENT, "op is -1");
  ASSERT_CODE(cubert_comm_reduce(c, src, dst, 10, f32, sum, 2), CUBERT_CODE_INVALID_ARGUMENT,
              "root is 2; the communicator has 2 members (ranks 0..1)");
  ASSERT_CODE(cubert_comm_broadcast(c, src, 10, f32, 7), CUBERT_CODE_INVALID_ARGUMENT, "root is 7");
  /* the same handle twice */
  cubert_handle *twice[2] = {src[0], src[0]};
  ASSERT_CODE(cubert_comm_all_reduce(c, twice, dst, 10, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[0] and src[1] are the same handle");
  cubert_handle *cross[2] = {src[1], dst[1]};
  ASSERT_CODE(cubert_comm_all_reduce(c, src, cross, 10, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[1] and dst[0] are the same handle");
  ASSERT_CODE(cubert_comm_all_gather(c, src, src, 10, f32), CUBERT_CODE_INVALID_ARGUMENT,
              "does not work in place");
  ASSERT_CODE(cubert_comm_broadcast(c, twice, 10, f32, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "buf[0] and buf[1] are the same handle");
  /* NULL entry, released handle */
  cubert_handle *hole[2] = {src[0], NULL};
  ASSERT_CODE(cubert_comm_all_reduce(c, hole, dst, 10, f32, sum), CUBERT_CODE_INVALID_ARGUMENT,
              "src[1] (member 1) is NULL");
  cubert_handle *gone = NULL;
  ASSERT_OK(cubert_client_empty(m.clients[1], 400, &gone));
  cubert_handle_release(gone);
  cubert_handle *stale[2] = {src[0], gone};
  ASSERT_CODE(cubert_comm_all_reduce(c, stale, dst, 10, f32, sum), CUBERT_CODE_NOT_FOUND,
              "src[1] (member 1) was released");
  /* a handle of another device (cts_opencl: member 0 is the CPU server, member 1 OpenCL;
     CUBERT_COMM_DEVICES may name one device twice, whose clients share handles) */
  float probe[1];
  cubert_status other = cubert_client_read(m.clients[0], src[1], probe, sizeof probe);
  int other_device = cubert_status_code(other) == CUBERT_CODE_NOT_FOUND;
  cubert_status_free(other);
  if (!cts_is_cpu() && other_device) {
    cubert_handle *swapped[2] = {src[1], src[0]};
    ASSERT_CODE(cubert_comm_all_reduce(c, swapped, dst, 10, f32, sum), CUBERT_CODE_NOT_FOUND,
                "src[0] is a handle of device");
  }
  /* a reduce ignores non-root dst entries */
  cubert_handle *root_only[2] = {NULL, dst[1]};
  ASSERT_OK(cubert_comm_reduce(c, src, root_only, 10, f32, sum, 1));
  /* everything still works after the errors */
  float ones[100], got[100];
  for (int k = 0; k < 100; ++k) ones[k] = 1.0f;
  for (size_t i = 0; i < 2; ++i)
    ASSERT_OK(cubert_client_write(m.clients[i], src[i], 0, ones, sizeof ones));
  ASSERT_OK(cubert_comm_all_reduce(c, src, dst, 100, f32, sum));
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_OK(cubert_client_read(m.clients[i], dst[i], got, sizeof got));
    for (int k = 0; k < 100; ++k) cr_assert_eq(got[k], 2.0f);
  }
  release_all(src, 2);
  release_all(dst, 2);
  release_all(small, 2);
  members_close(&m);
}

Test(comm, create_errors) {
  cubert_comm *comm = NULL;
  cubert_client *none[2] = {cts_client, NULL};
  ASSERT_CODE(cubert_comm_create(none, 2, &comm), CUBERT_CODE_INVALID_ARGUMENT,
              "clients[1] is NULL");
  ASSERT_CODE(cubert_comm_create(none, 0, &comm), CUBERT_CODE_INVALID_ARGUMENT, "count is 0");
  ASSERT_CODE(cubert_comm_create(NULL, 1, &comm), CUBERT_CODE_INVALID_ARGUMENT, "clients is NULL");
  ASSERT_CODE(cubert_comm_create(none, 1, NULL), CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_client *gone = NULL;
  ASSERT_OK(cubert_client_create("cpu", &gone));
  cubert_client_release(gone);
  cubert_client *stale[2] = {cts_client, gone};
  ASSERT_CODE(cubert_comm_create(stale, 2, &comm), CUBERT_CODE_NOT_FOUND, "clients[1]");
  cr_assert_null(comm);
  cr_assert_eq(cubert_comm_size(NULL), 0);
  cubert_comm_release(NULL);
}
