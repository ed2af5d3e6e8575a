/* Asynchronous errors: a failure raised after the call that caused it returned is reported
   once, by the next flush/sync/read on its stream, as SERVER_UNHEALTHY; work queued behind it
   is not run; data is never handed out as valid; other streams are unaffected; the stream is
   usable again afterwards. (OpenCL's own asynchronous failures — an event completing with an
   error status — are covered by the OpenCL server's tests.) */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "client.h"
#include "cpu/api.h"
#include "cts.h"
#include "device.h"

TestSuite(errors, .init = cts_setup, .fini = cts_teardown);

static void failing_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, "injected kernel failure 4711");
}

static const cubert_kernel_def failing_kernel = {
    .name = "failing", .cpu = failing_cpu, .opencl_source = NULL};

static cubert_status fill(cubert_client *c, cubert_handle *h, uint32_t n, uint32_t value) {
  uint64_t info[2] = {n, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(n / 64, 1, 1),
                              cubert_cube_dim_new_3d(64, 1, 1), &args);
}

Test(errors, kernel_failure_is_reported_once_and_dependent_work_is_skipped) {
  if (!cts_is_cpu()) cr_skip_test("kernels report failures through the CPU context only");
  enum { N = 4096 };
  cubert_client *a = NULL, *b = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 10, &a));
  ASSERT_OK(cubert_client_with_stream(cts_client, 11, &b));
  cubert_handle *x = NULL, *y = NULL, *z = NULL;
  ASSERT_OK(cubert_client_empty(a, N * 4, &x));
  ASSERT_OK(cubert_client_empty(a, N * 4, &y));
  ASSERT_OK(cubert_client_empty(b, N * 4, &z));
  ASSERT_OK(fill(a, y, N, 1));
  ASSERT_OK(cubert_client_sync(a));

  /* the failure is raised on a worker, after launch returned */
  ASSERT_OK(cubert_client_launch(a, &failing_kernel, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_OK(fill(a, y, N, 5)); /* queued behind the failure: must not run */

  /* another stream is unaffected */
  ASSERT_OK(fill(b, z, N, 9));
  ASSERT_OK(cubert_client_sync(b));
  uint32_t *v = malloc(N * 4);
  ASSERT_OK(cubert_client_read(b, z, v, N * 4));
  cr_assert_eq(v[N - 1], 9);

  /* the read on the failed stream returns the error, not data */
  for (int i = 0; i < N; ++i) v[i] = 0xEEEEEEEE;
  cubert_status s = cubert_client_read(a, y, v, N * 4);
  cr_assert_not_null(s, "a read after a failed kernel returned data");
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY, "%s", cubert_status_message(s));
  cr_assert_geq(cubert_status_error_count(s), 1);
  cr_assert(strstr(cubert_status_message(s), "injected kernel failure 4711"), "%s",
            cubert_status_message(s));
  cr_assert_eq(v[0], 0xEEEEEEEE, "dst was written despite the error");
  cubert_status_free(s);

  /* reported once; the stream is usable again; the skipped fill never ran */
  ASSERT_OK(cubert_client_sync(a));
  ASSERT_OK(cubert_client_read(a, y, v, N * 4));
  for (int i = 0; i < N; ++i) cr_assert_eq(v[i], 1, "element %d: the dependent fill ran", i);
  ASSERT_OK(fill(a, y, N, 7));
  ASSERT_OK(cubert_client_read(a, y, v, N * 4));
  cr_assert_eq(v[N / 2], 7);
  free(v);
  cubert_handle_release(x);
  cubert_handle_release(y);
  cubert_handle_release(z);
  cubert_client_release(a);
  cubert_client_release(b);
}

Test(errors, flush_and_sync_all_report_the_error_too) {
  if (!cts_is_cpu()) cr_skip_test("kernels report failures through the CPU context only");
  ASSERT_OK(cubert_client_launch(cts_client, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_CODE(cubert_client_sync_all(cts_client), CUBERT_CODE_SERVER_UNHEALTHY, "4711");
  ASSERT_OK(cubert_client_sync_all(cts_client)); /* returned once */
  ASSERT_OK(cubert_client_launch(cts_client, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  /* flush does not wait: poll it until the kernel has run and failed */
  cubert_status s = NULL;
  for (int i = 0; i < 100000 && !s; ++i) s = cubert_client_flush(cts_client);
  cr_assert_not_null(s, "flush never reported the failure");
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY, "%s", cubert_status_message(s));
  cubert_status_free(s);
  ASSERT_OK(cubert_client_sync(cts_client));
}

Test(errors, read_async_completes_with_the_data) {
  enum { N = 1 << 16 };
  uint32_t *src = malloc(N * 4), *dst = malloc(N * 4);
  for (int i = 0; i < N; ++i) src[i] = (uint32_t)i * 3u;
  cubert_handle *h = cts_buffer(src, N * 4);
  ASSERT_OK(fill(cts_client, h, N / 2, 12)); /* first half overwritten on the device */
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_async(cts_client, h, dst, N * 4, &f));
  ASSERT_OK(cubert_future_wait(f));
  int ready = 0;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1);
  cubert_future_release(f);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(dst[i], i < N / 2 ? 12u : (uint32_t)i * 3u, "element %d", i);
  cubert_handle_release(h);
  free(src);
  free(dst);
}

/* An allocation that fails inside a queued operation: the CPU server allocates a barrier
   kernel's cube runner, fiber stacks and shared memory when the launch executes; the
   test-only hook makes that allocation fail. */
static void barrier_cpu(const cubert_cpu_ctx *ctx) {
  uint32_t *out = ctx->buffers[0], *tile = ctx->shared;
  uint32_t unit = cubert_cpu_unit_linear(ctx, ctx->unit_begin);
  tile[unit] = unit + 1;
  cubert_cpu_sync_cube(ctx);
  out[ctx->unit_begin] = tile[(unit + 1) % cubert_cpu_units_per_cube(ctx)];
}
static const cubert_kernel_def barrier_kernel = {.name = "barrier_copy",
                                                 .cpu = barrier_cpu,
                                                 .flags = CUBERT_KERNEL_SYNC_CUBE,
                                                 .shared_bytes = 1024};

Test(errors, allocation_failing_inside_a_queued_launch_is_reported) {
  if (!cts_is_cpu()) cr_skip_test("the allocation-failure hook belongs to the CPU server");
  cubert_client *c = NULL; /* a fresh device: no cube runner allocated yet */
  ASSERT_OK(cubert_client_create("cpu!private", &c));
  enum { N = 32 };
  cubert_handle *out = NULL, *marker = NULL;
  ASSERT_OK(cubert_client_empty(c, N * 4, &out));
  ASSERT_OK(cubert_client_empty(c, 256 * 4, &marker));
  ASSERT_OK(fill(c, marker, 256, 1));
  ASSERT_OK(cubert_client_sync(c));
  cubert_cpu_debug_fail_allocations(cubert_client_device(c)->server, 1);
  cubert_kernel_args args = {&out, 1, NULL, 0};
  ASSERT_OK(cubert_client_launch(c, &barrier_kernel, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(8, 1, 1), &args));
  ASSERT_OK(fill(c, marker, 256, 2)); /* queued behind the failure */
  cubert_status s = cubert_client_sync(c);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_error_count(s), 1);
  cubert_status oom = cubert_status_error_at(s, 0);
  cr_assert_eq(cubert_status_code(oom), CUBERT_CODE_OUT_OF_MEMORY, "%s",
               cubert_status_message(oom));
  cr_assert_gt(cubert_status_size(oom), 0);
  char size[32];
  snprintf(size, sizeof size, "%llu", (unsigned long long)cubert_status_size(oom));
  cr_assert(strstr(cubert_status_message(oom), size), "%s", cubert_status_message(oom));
  cubert_status_free(s);
  uint32_t m[256];
  ASSERT_OK(cubert_client_read(c, marker, m, sizeof m));
  cr_assert_eq(m[0], 1, "the launch queued behind the failed one ran");
  /* usable again: the same barrier launch now runs */
  ASSERT_OK(cubert_client_launch(c, &barrier_kernel, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(8, 1, 1), &args));
  uint32_t v[N];
  ASSERT_OK(cubert_client_read(c, out, v, sizeof v));
  for (int i = 0; i < N; ++i) cr_assert_eq(v[i], (uint32_t)((i % 8 + 1) % 8 + 1), "unit %d", i);
  cubert_handle_release(out);
  cubert_handle_release(marker);
  cubert_client_release(c);
}

/* Issue 10, item 5: stream ids that share a slot (id % max_streams) keep their own errors. */
Test(errors, errors_stay_with_their_stream_when_streams_share_a_slot) {
  if (!cts_is_cpu()) cr_skip_test("kernels report failures through the CPU context only");
  enum { N = 4096 };
  uint32_t slots = cubert_client_device(cts_client)->max_streams;
  cubert_client *a = NULL, *b = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 1001, &a));
  ASSERT_OK(cubert_client_with_stream(cts_client, 1001 + slots, &b)); /* the same slot */
  cubert_handle *x = NULL;
  ASSERT_OK(cubert_client_empty(b, N * 4, &x));
  ASSERT_OK(fill(b, x, N, 1));
  ASSERT_OK(cubert_client_sync(b));

  ASSERT_OK(cubert_client_launch(a, &failing_kernel, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_OK(fill(b, x, N, 9)); /* b's work: neither skipped nor failed because of a */
  ASSERT_OK(cubert_client_sync(b));
  uint32_t *v = malloc(N * 4);
  ASSERT_OK(cubert_client_read(b, x, v, N * 4));
  for (int i = 0; i < N; i += 97) cr_assert_eq(v[i], 9, "element %d: b's fill was skipped", i);
  free(v);
  ASSERT_OK(cubert_client_flush(b));

  /* a's error went to a, once */
  ASSERT_CODE(cubert_client_sync(a), CUBERT_CODE_SERVER_UNHEALTHY, "4711");
  ASSERT_OK(cubert_client_sync(a));

  /* and with a's failure still unreported while b works, sync_all reports it */
  ASSERT_OK(cubert_client_launch(a, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_OK(fill(b, x, N, 3));
  ASSERT_OK(cubert_client_sync(b));
  ASSERT_CODE(cubert_client_sync_all(cts_client), CUBERT_CODE_SERVER_UNHEALTHY, "4711");
  ASSERT_OK(cubert_client_sync(a));
  cubert_handle_release(x);
  cubert_client_release(a);
  cubert_client_release(b);
}

/* A CPU kernel that spins until the test opens the gate (30 s at most, so a broken test fails
   rather than hangs), with `spinning` set while it does. */
static atomic_int gate, spinning;
static void spin_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin != 0) return;
  atomic_store(&spinning, 1);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (!atomic_load(&gate) && t.tv_sec - t0.tv_sec < 30);
  atomic_store(&spinning, 0);
}
static const cubert_kernel_def spin_kernel = {.name = "spin_until_gate", .cpu = spin_cpu};

/* Issue 25, item 6 (seed-stream-event.rs.txt, StreamPool: ids that share a slot share its stream,
   with no host sync): on the CPU server, which keeps each command's submitter, a slot changes
   hands while the previous owner's kernel still runs; the new owner's work runs behind it and
   each id still gets its own errors, once. */
Test(errors, a_slot_changes_hands_without_a_host_wait_on_the_cpu_server) {
  if (!cts_is_cpu()) cr_skip_test("the OpenCL server waits at a hand-over (errors.c says why)");
  enum { N = 4096 };
  uint32_t slots = cubert_client_device(cts_client)->max_streams;
  cubert_client *a = NULL, *b = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 2001, &a));
  ASSERT_OK(cubert_client_with_stream(cts_client, 2001 + slots, &b)); /* the same slot */
  cubert_handle *x = NULL;
  ASSERT_OK(cubert_client_empty(a, N * 4, &x));
  ASSERT_OK(cubert_client_sync(a));
  atomic_store(&gate, 0);
  atomic_store(&spinning, 0);
  ASSERT_OK(cubert_client_launch(a, &spin_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_OK(cubert_client_launch(a, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(1, 1, 1), NULL));
  ASSERT_OK(cubert_client_flush(a));
  /* A worker runs a's kernel (this thread never waits on the stream before the gate opens: a
     waiting thread helps run kernels and would spin there itself). */
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (!atomic_load(&spinning) && t.tv_sec - t0.tv_sec < 10);
  cr_assert_eq(atomic_load(&spinning), 1, "no worker started a's kernel in 10 s");
  /* b takes the slot over and queues its fill while a's kernel spins: a host wait for a's work
     would return only after the gate opened (or 30 s), with the kernel no longer spinning. */
  ASSERT_OK(fill(b, x, N, 5));
  ASSERT_OK(cubert_client_flush(b));
  cr_assert_eq(atomic_load(&spinning), 1, "b's submit waited for a's kernel");
  atomic_store(&gate, 1);
  ASSERT_OK(cubert_client_sync(b)); /* b's work ran, behind a's; a's failure is not b's */
  uint32_t *v = malloc(N * 4);
  ASSERT_OK(cubert_client_read(b, x, v, N * 4));
  for (int i = 0; i < N; i += 61) cr_assert_eq(v[i], 5, "element %d: b's fill was skipped", i);
  free(v);
  /* a's error went to a, once */
  ASSERT_CODE(cubert_client_sync(a), CUBERT_CODE_SERVER_UNHEALTHY, "4711");
  ASSERT_OK(cubert_client_sync(a));
  ASSERT_OK(cubert_client_sync(b));
  cubert_handle_release(x);
  cubert_client_release(a);
  cubert_client_release(b);
}
