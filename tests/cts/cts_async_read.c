/* Asynchronous reads (issue 13, item 4): read_async and read_many_async return at once with a
   pending future while the stream is busy, on the CPU server too (its reads used to block until
   the kernel finished), and wait and poll both complete them; the same for the sync future
   (cubert_client_sync_async, issue 25); write_tensor against a host
   reference on non-contiguous views; copy descriptors from tensors. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "cts.h"
#ifdef CUBERT_WITH_OPENCL
#include <cubert/opencl.h>
#endif

TestSuite(async_read, .init = cts_setup, .fini = cts_teardown);

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A CPU kernel that spins until the test opens the gate (or 30 s passed, so a broken test fails
   instead of hanging), then writes out[i] = 7 i + 1 over the whole buffer from unit 0. The
   test never waits on the stream before opening the gate: a waiting thread helps run kernels
   and would spin here itself. */
static atomic_int gate;
static void spin_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin != 0) return;
  double start = now_s();
  while (!atomic_load(&gate) && now_s() - start < 30.0) sched_yield();
  uint32_t *out = ctx->buffers[0];
  for (uint64_t i = 0; i < ctx->buffer_bytes[0] / 4; ++i) out[i] = (uint32_t)(7 * i + 1);
}
static const cubert_kernel_def spin_kernel = {.name = "spin_until_gate", .cpu = spin_cpu};

static void spin(cubert_handle *h) {
  cubert_kernel_args args = {&h, 1, NULL, 0};
  ASSERT_OK(cubert_client_launch(cts_client, &spin_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), &args));
}

static void check_spun(const uint32_t *v, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    cr_assert_eq(v[i], (uint32_t)(7 * i + 1), "%s: element %zu is %u", what, i, v[i]);
}

Test(async_read, read_async_is_pending_while_a_kernel_runs_then_wait_completes_it) {
  if (!cts_is_cpu()) cr_skip_test("the gated kernel is a CPU kernel");
  enum { N = 1000 };
  atomic_store(&gate, 0);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &h));
  spin(h);
  uint32_t *dst = calloc(N, 4);
  cubert_future *f = NULL;
  double t0 = now_s();
  ASSERT_OK(cubert_client_read_async(cts_client, h, dst, N * 4, &f));
  cr_assert_lt(now_s() - t0, 10.0, "read_async blocked");
  int ready = 1;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 0, "the read is complete while its kernel still spins");
  cubert_handle_release(h); /* the read keeps the memory */
  atomic_store(&gate, 1);
  ASSERT_OK(cubert_future_wait(f));
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1);
  check_spun(dst, N, "read_async");
  cubert_future_release(f);
  free(dst);
}

Test(async_read, poll_in_a_loop_completes_a_pending_read) {
  if (!cts_is_cpu()) cr_skip_test("the gated kernel is a CPU kernel");
  enum { N = 777 };
  atomic_store(&gate, 0);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &h));
  spin(h);
  uint32_t *dst = calloc(N, 4);
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_async(cts_client, h, dst, N * 4, &f));
  int ready = 1;
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(cubert_future_poll(f, &ready));
    cr_assert_eq(ready, 0, "poll %d: complete while the kernel spins", i);
  }
  atomic_store(&gate, 1);
  double start = now_s();
  while (!ready && now_s() - start < 20.0) ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1, "poll never completed the read in 20 s");
  check_spun(dst, N, "read after poll");
  ASSERT_OK(cubert_future_wait(f)); /* the result: NULL */
  cubert_future_release(f);
  cubert_handle_release(h);
  free(dst);
}

Test(async_read, read_many_async_is_one_pending_future_for_all_handles) {
  if (!cts_is_cpu()) cr_skip_test("the gated kernel is a CPU kernel");
  enum { N = 513 };
  atomic_store(&gate, 0);
  uint32_t src[N];
  for (int i = 0; i < N; ++i) src[i] = (uint32_t)(i * 3 + 5);
  cubert_handle *a = cts_buffer(src, sizeof src), *b = NULL, *v = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &b));
  ASSERT_OK(cubert_handle_view(a, 12, 40, &v));
  spin(b);
  uint32_t da[N] = {0}, db[N] = {0}, dv[10] = {0};
  cubert_handle *hs[3] = {a, b, v};
  void *dsts[3] = {da, db, dv};
  size_t sizes[3] = {sizeof da, sizeof db, sizeof dv};
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_many_async(cts_client, 3, hs, dsts, sizes, &f));
  int ready = 1;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 0, "read_many_async completed while the kernel spins");
  atomic_store(&gate, 1);
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  for (int i = 0; i < N; ++i) cr_assert_eq(da[i], src[i], "a[%d]", i);
  check_spun(db, N, "b");
  for (int i = 0; i < 10; ++i) cr_assert_eq(dv[i], src[3 + i], "view[%d]", i);
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_handle_release(v);
}

#ifdef CUBERT_WITH_OPENCL
/* Holds the calling stream's OpenCL queue with a barrier on a new user event (cubert/opencl.h
   rule 1): what is queued behind it is pending until the test completes the event. */
static cl_event hold_queue(void) {
  cl_context ctx = NULL;
  cl_command_queue q = NULL;
  ASSERT_OK(cubert_opencl_context(cts_client, &ctx, NULL));
  ASSERT_OK(cubert_opencl_queue(cts_client, &q));
  cl_int err = CL_SUCCESS;
  cl_event gate_event = clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(clEnqueueBarrierWithWaitList(q, 1, &gate_event, NULL), CL_SUCCESS);
  return gate_event;
}

/* The OpenCL server: a read queued behind the held queue is pending until the test completes
   the event. */
Test(async_read, opencl_read_async_is_pending_behind_a_user_event) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  enum { N = 1 << 14 };
  uint32_t *src = malloc(N * 4), *d1 = calloc(N, 4), *d2 = calloc(N, 4);
  for (int i = 0; i < N; ++i) src[i] = (uint32_t)i ^ 0x5a5a5a5au;
  cubert_handle *h = cts_buffer(src, N * 4);
  cl_event gate_event = hold_queue();
  cubert_future *f = NULL, *g = NULL;
  ASSERT_OK(cubert_client_read_async(cts_client, h, d1, N * 4, &f));
  cubert_handle *hs[2] = {h, h};
  void *dsts[2] = {d2, d2 + N / 2};
  size_t sizes[2] = {N * 2, N * 2};
  ASSERT_OK(cubert_client_read_many_async(cts_client, 2, hs, dsts, sizes, &g));
  int ready = 1;
  for (int i = 0; i < 50; ++i) {
    ASSERT_OK(cubert_future_poll(f, &ready));
    cr_assert_eq(ready, 0, "read complete behind an unset user event");
    ASSERT_OK(cubert_future_poll(g, &ready));
    cr_assert_eq(ready, 0, "reads complete behind an unset user event");
  }
  cr_assert_eq(clSetUserEventStatus(gate_event, CL_COMPLETE), CL_SUCCESS);
  ASSERT_OK(cubert_future_wait(f));
  double start = now_s();
  ready = 0;
  while (!ready && now_s() - start < 20.0) ASSERT_OK(cubert_future_poll(g, &ready));
  cr_assert_eq(ready, 1, "poll never completed the reads");
  cubert_future_release(f);
  cubert_future_release(g);
  for (int i = 0; i < N; ++i) {
    cr_assert_eq(d1[i], src[i], "d1[%d]", i);
    cr_assert_eq(d2[i], i < N / 2 ? src[i] : src[i - N / 2], "d2[%d]", i);
  }
  clReleaseEvent(gate_event);
  cubert_handle_release(h);
  free(src), free(d1), free(d2);
}
/* The sync future behind the same user event: pending until the event completes. */
Test(async_read, opencl_sync_async_is_pending_behind_a_user_event) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  cl_event gate_event = hold_queue();
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_sync_async(cts_client, &f));
  int ready = 1;
  for (int i = 0; i < 50; ++i) {
    ASSERT_OK(cubert_future_poll(f, &ready));
    cr_assert_eq(ready, 0, "sync complete behind an unset user event");
  }
  cr_assert_eq(clSetUserEventStatus(gate_event, CL_COMPLETE), CL_SUCCESS);
  ASSERT_OK(cubert_future_wait(f));
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1);
  cubert_future_release(f);
  clReleaseEvent(gate_event);
}
#endif

/* The future form of sync (seed-client.rs.txt `sync()`, which returns a future): pending while
   the stream's kernel runs, complete once it finished, the kernel's output then in place. */
Test(async_read, sync_async_is_pending_while_a_kernel_runs_then_wait_completes_it) {
  if (!cts_is_cpu()) cr_skip_test("the gated kernel is a CPU kernel");
  enum { N = 300 };
  atomic_store(&gate, 0);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &h));
  spin(h);
  cubert_future *f = NULL;
  double t0 = now_s();
  ASSERT_OK(cubert_client_sync_async(cts_client, &f));
  cr_assert_lt(now_s() - t0, 10.0, "sync_async blocked");
  int ready = 1;
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(cubert_future_poll(f, &ready));
    cr_assert_eq(ready, 0, "poll %d: the sync is complete while the kernel spins", i);
  }
  atomic_store(&gate, 1);
  ASSERT_OK(cubert_future_wait(f));
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1);
  cubert_future_release(f);
  uint32_t *dst = calloc(N, 4);
  cts_read(h, dst, N * 4);
  check_spun(dst, N, "after the sync future");
  cubert_handle_release(h);
  free(dst);
}

static void failing_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, "injected failure 6161");
}
static const cubert_kernel_def failing = {.name = "failing", .cpu = failing_cpu};

/* The stream's asynchronous errors come from the sync future's wait, once, as from
   cubert_client_sync; work queued after the sync future is not part of it. */
Test(async_read, sync_async_wait_returns_the_streams_errors_once) {
  if (!cts_is_cpu()) cr_skip_test("the failing kernel is a CPU kernel");
  ASSERT_OK(cubert_client_launch(cts_client, &failing, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_sync_async(cts_client, &f));
  ASSERT_CODE(cubert_future_wait(f), CUBERT_CODE_SERVER_UNHEALTHY, "6161");
  ASSERT_OK(cubert_future_wait(f)); /* the result was handed out once */
  cubert_future_release(f);
  ASSERT_OK(cubert_client_sync(cts_client)); /* the wait took the errors */
}

/* Every server: an empty stream gives a future that completes; work queued before the call is
   done when its wait returns; bad arguments are named. */
Test(async_read, sync_async_completes_the_work_queued_before_it) {
  enum { N = 2048 };
  uint32_t src[N], back[N];
  for (int i = 0; i < N; ++i) src[i] = (uint32_t)(i * 11 + 3);
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_sync_async(cts_client, &f));
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, sizeof src, &h));
  ASSERT_OK(cubert_client_write(cts_client, h, 0, src, sizeof src));
  ASSERT_OK(cubert_client_sync_async(cts_client, &f));
  int ready = 0;
  double start = now_s();
  while (!ready && now_s() - start < 20.0) ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1, "the sync future never completed");
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  cts_read(h, back, sizeof back);
  for (int i = 0; i < N; ++i) cr_assert_eq(back[i], src[i], "element %d", i);
  cubert_handle_release(h);
  ASSERT_CODE(cubert_client_sync_async(cts_client, NULL), CUBERT_CODE_INVALID_ARGUMENT, "out");
  f = (cubert_future *)&ready;
  ASSERT_CODE(cubert_client_sync_async(NULL, &f), CUBERT_CODE_INVALID_ARGUMENT, NULL);
  cr_assert_null(f, "a failed sync_async leaves *out NULL");
}

/* Every server: reads of several handles, partial sizes, one written by a launch queued just
   before, and an empty list. */
Test(async_read, read_many_async_returns_every_handle) {
  enum { N = 4097 };
  float *x = malloc(N * 4), *y = malloc(N * 4), *o = malloc(N * 4), *ry = malloc(N * 4);
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = (float)(N - i);
  }
  cubert_handle *hx = cts_buffer(x, N * 4), *hy = cts_buffer(y, N * 4), *ho = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &ho));
  cubert_handle *bufs[3] = {hx, hy, ho};
  uint64_t info[1] = {N};
  cubert_kernel_args args = {bufs, 3, info, 1};
  ASSERT_OK(cubert_client_launch(cts_client, &cubert_kernel_add_f32, cts_cubes(N, cts_dim()),
                                 cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args));
  cubert_handle *hs[2] = {ho, hy};
  void *dsts[2] = {o, ry};
  size_t sizes[2] = {N * 4, 100 * 4};
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_many_async(cts_client, 2, hs, dsts, sizes, &f));
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  for (int i = 0; i < N; ++i) cr_assert_eq(o[i], x[i] + y[i], "o[%d]", i);
  for (int i = 0; i < 100; ++i) cr_assert_eq(ry[i], y[i], "y[%d]", i);
  ASSERT_OK(cubert_client_read_many_async(cts_client, 0, NULL, NULL, NULL, &f));
  int ready = 0;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1, "an empty read list is complete");
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_handle_release(ho);
  free(x), free(y), free(o), free(ry);
}

Test(async_read, read_many_async_errors_name_the_element) {
  uint32_t v[8] = {0}, d0[8], d1[8];
  cubert_handle *a = cts_buffer(v, sizeof v), *b = cts_buffer(v, sizeof v), *dead = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4, &dead));
  cubert_handle_release(dead);
  void *dsts[2] = {d0, d1};
  size_t sizes[2] = {sizeof d0, sizeof d1};
  cubert_future *f = (cubert_future *)1;
  cubert_handle *null_one[2] = {a, NULL};
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, null_one, dsts, sizes, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "handles[1] is NULL");
  cr_assert_null(f, "out is cleared on error");
  cubert_handle *released[2] = {a, dead};
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, released, dsts, sizes, &f),
              CUBERT_CODE_NOT_FOUND, "handles[1]");
  cubert_handle *ok_list[2] = {a, b};
  size_t too_big[2] = {sizeof d0, sizeof d1 + 4};
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, ok_list, dsts, too_big, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "sizes[1] is 36 bytes");
  void *null_dst[2] = {d0, NULL};
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, ok_list, null_dst, sizes, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "dsts[1] is NULL");
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, NULL, dsts, sizes, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "handles, dsts and sizes");
  ASSERT_CODE(cubert_client_read_many_async(cts_client, 2, ok_list, dsts, sizes, NULL),
              CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  ASSERT_CODE(cubert_client_read_async(cts_client, a, NULL, 4, &f), CUBERT_CODE_INVALID_ARGUMENT,
              "dst is NULL");
  ASSERT_CODE(cubert_client_read_async(cts_client, a, d0, 36, &f), CUBERT_CODE_INVALID_ARGUMENT,
              "past the end of the handle");
  cubert_handle_release(a);
  cubert_handle_release(b);
}

/* ---- write_tensor and copy descriptors ------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)rng_state;
}

/* Writes random data through `d` (a view of a handle of `total` elements of 4 bytes holding
   `before`) and checks the whole handle against the host: the region's elements replaced in
   row-major order, every other element unchanged. Then reads the region back. */
static void write_and_check(cubert_copy_desc d, uint64_t total) {
  uint32_t *before = malloc(total * 4), *after = malloc(total * 4), *expect = malloc(total * 4);
  for (uint64_t i = 0; i < total; ++i) before[i] = expect[i] = rnd();
  uint64_t n = 1;
  for (uint32_t k = 0; k < d.rank; ++k) n *= d.shape[k];
  uint32_t *src = malloc(n * 4 + 4), *back = malloc(n * 4 + 4);
  for (uint64_t i = 0; i < n; ++i) src[i] = rnd();
  ASSERT_OK(cubert_client_write(cts_client, d.handle, 0, before, total * 4));
  ASSERT_OK(cubert_client_write_tensor(cts_client, &d, src, n * 4));
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t rest = i, at = d.offset;
    for (uint32_t k = d.rank; k-- > 0;) {
      at += (rest % d.shape[k]) * d.strides[k];
      rest /= d.shape[k];
    }
    expect[at] = src[i];
  }
  cts_read(d.handle, after, total * 4);
  for (uint64_t i = 0; i < total; ++i)
    cr_assert_eq(after[i], expect[i], "element %llu: %u, expected %u (%s)", (unsigned long long)i,
                 after[i], expect[i], expect[i] == before[i] ? "outside the region" : "region");
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, back, n * 4));
  for (uint64_t i = 0; i < n; ++i)
    cr_assert_eq(back[i], src[i], "read back %llu", (unsigned long long)i);
  free(before), free(after), free(expect), free(src), free(back);
}

Test(async_read, write_tensor_matches_the_host_on_strided_views) {
  enum { R = 37, C = 53 };
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, R * C * 4, &h));
  /* transposed */
  write_and_check(
      (cubert_copy_desc){
          .handle = h, .rank = 2, .shape = {C, R}, .strides = {1, C}, .elem_size = 4},
      R * C);
  /* a sliced sub-block at an offset, every other column */
  write_and_check((cubert_copy_desc){.handle = h,
                                     .rank = 2,
                                     .shape = {11, 9},
                                     .strides = {C, 2},
                                     .elem_size = 4,
                                     .offset = 3 * C + 5},
                  R * C);
  /* contiguous rows at an offset (the plain write path) */
  write_and_check((cubert_copy_desc){.handle = h,
                                     .rank = 2,
                                     .shape = {3, C},
                                     .strides = {C, 1},
                                     .elem_size = 4,
                                     .offset = 7 * C},
                  R * C);
  /* rank 3, a size-1 dimension, reversed-order strides */
  write_and_check((cubert_copy_desc){.handle = h,
                                     .rank = 3,
                                     .shape = {5, 1, 7},
                                     .strides = {1, 999, 5 * 3},
                                     .elem_size = 4,
                                     .offset = 2},
                  R * C);
  /* single element, and empty (a no-op) */
  write_and_check((cubert_copy_desc){.handle = h,
                                     .rank = 1,
                                     .shape = {1},
                                     .strides = {1},
                                     .elem_size = 4,
                                     .offset = R * C - 1},
                  R * C);
  cubert_copy_desc empty = {
      .handle = h, .rank = 2, .shape = {0, 4}, .strides = {4, 1}, .elem_size = 4};
  ASSERT_OK(cubert_client_write_tensor(cts_client, &empty, NULL, 0));
  cubert_handle_release(h);
}

Test(async_read, write_tensor_errors_name_the_argument) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 64, &h));
  uint32_t src[16] = {0};
  cubert_copy_desc d = {.handle = h, .rank = 2, .shape = {4, 4}, .strides = {1, 4}, .elem_size = 4};
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &d, src, 60), CUBERT_CODE_INVALID_ARGUMENT,
              "src_size is 60 bytes");
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &d, NULL, 64), CUBERT_CODE_INVALID_ARGUMENT,
              "src is NULL");
  ASSERT_CODE(cubert_client_write_tensor(cts_client, NULL, src, 64), CUBERT_CODE_INVALID_ARGUMENT,
              "desc is NULL");
  cubert_copy_desc off = d;
  off.offset = 1;
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &off, src, 64), CUBERT_CODE_INVALID_ARGUMENT,
              "past the end of the handle");
  cubert_copy_desc bc = d;
  bc.strides[0] = 0;
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &bc, src, 64), CUBERT_CODE_UNSUPPORTED_STRIDES,
              "desc->strides[0] is 0");
  cubert_copy_desc none = d;
  none.handle = NULL;
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &none, src, 64), CUBERT_CODE_INVALID_ARGUMENT,
              "desc->handle is NULL");
  cubert_handle_release(h);
  ASSERT_CODE(cubert_client_write_tensor(cts_client, &d, src, 64), CUBERT_CODE_NOT_FOUND,
              "desc->handle");
}

Test(async_read, copy_desc_from_tensor_reads_and_writes_a_permuted_view) {
  enum { R = 19, C = 23 };
  float *m = malloc(R * C * 4), *t = malloc(R * C * 4);
  for (int i = 0; i < R * C; ++i) m[i] = (float)(rnd() % 1000);
  cubert_layout_desc ld = {.rank = 2, .shape = {R, C}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor tensor;
  ASSERT_OK(cubert_client_create_tensor(cts_client, m, &ld, &tensor));
  uint32_t axes[2] = {1, 0};
  cubert_tensor tr;
  ASSERT_OK(cubert_tensor_permute(&tensor, axes, &tr));
  cubert_copy_desc d;
  ASSERT_OK(cubert_copy_desc_from_tensor(&tr, &d));
  cr_assert_eq(d.handle, tensor.handle);
  cr_assert_eq(d.rank, 2);
  cr_assert_eq(d.shape[0], C);
  cr_assert_eq(d.elem_size, 4);
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, t, R * C * 4));
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < R; ++j) cr_assert_eq(t[i * R + j], m[j * C + i], "t[%d][%d]", i, j);
  /* writing the transpose back through the view transposes twice: m again */
  ASSERT_OK(cubert_client_write_tensor(cts_client, &d, t, R * C * 4));
  cubert_copy_desc whole;
  ASSERT_OK(cubert_copy_desc_from_tensor(&tensor, &whole));
  float *back = malloc(R * C * 4);
  ASSERT_OK(cubert_client_read_tensor(cts_client, &whole, back, R * C * 4));
  for (int i = 0; i < R * C; ++i) cr_assert_eq(back[i], m[i], "m[%d]", i);
  ASSERT_CODE(cubert_copy_desc_from_tensor(NULL, &d), CUBERT_CODE_INVALID_ARGUMENT, "tensor");
  cubert_tensor bad = tensor;
  bad.rank = CUBERT_MAX_RANK + 1;
  ASSERT_CODE(cubert_copy_desc_from_tensor(&bad, &d), CUBERT_CODE_INVALID_ARGUMENT, "tensor->rank");
  cubert_tensor_release(&tensor);
  free(m), free(t), free(back);
}
