/* CPU server: real asynchronous failures — execution-time allocations (cube runners, fiber
   tables and stacks, shared memory) refused inside a queued launch through the test-only hook
   cubert_cpu_debug_fail_allocations, driven through the server vtable. A refused allocation must
   fail only that launch (OUT_OF_MEMORY with the size on its stream), skip the work queued behind
   it until the error is taken, release every binding, leak nothing (run under ASan) and leave the
   server usable. */
#include <inttypes.h>
#include <stdio.h>

#include "base/config.h"
#include "cpu_harness.h"

/* ---- kernels -------------------------------------------------------------------------------- */

/* Each unit stores its id in shared memory; after the barrier it writes its right neighbour's
   (in the cube, wrapping) id + 1. Correct output needs the barrier and cube-private shared
   memory: out[id] = first + (u + 1) % units + 1. */
static void neighbour_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *out = ctx->buffers[0];
  uint32_t *shared = ctx->shared;
  const uint64_t id = ctx->unit_begin;
  const uint32_t u = cubert_cpu_unit_linear(ctx, id);
  const uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  shared[u] = (uint32_t)id;
  cubert_cpu_sync_cube(ctx);
  out[id] = shared[(u + 1) % units] + 1;
}

/* The same kernel with small and large shared memory: a runner warmed up by the first has to
   grow its shared buffer for the second. */
static const cubert_kernel_def neighbour_small = {
    .name = "neighbour_small",
    .cpu = neighbour_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 4096,
};
static const cubert_kernel_def neighbour_large = {
    .name = "neighbour_large",
    .cpu = neighbour_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 40000,
};

/* Writes info[0] to word 0 of buffer 0: the "dependent" launch queued behind a failing one. */
static void mark_kernel(const cubert_cpu_ctx *ctx) {
  ((uint32_t *)ctx->buffers[0])[0] = (uint32_t)ctx->info[0];
}
static const cubert_kernel_def mark = {.name = "mark", .cpu = mark_kernel};

/* ---- helpers -------------------------------------------------------------------------------- */

/* Launches neighbour-style `kernel` over `cubes` cubes of `dim` units into `out`. */
static void launch_neighbour(cubert_server *server, cpu_stream st, const cubert_kernel_def *kernel,
                             uint32_t cubes, uint32_t dim, cpu_buf *out) {
  memset(cpu_buf_ptr(out), 0, (size_t)cubes * dim * 4);
  cpu_launch(server, st, kernel, cubes, dim, &out, 1, NULL, 0);
}

static void expect_neighbour_output(const cpu_buf *out, uint32_t cubes, uint32_t dim) {
  const uint32_t *o = cpu_buf_ptr(out);
  for (uint32_t c = 0; c < cubes; ++c)
    for (uint32_t u = 0; u < dim; ++u) {
      const uint32_t id = c * dim + u, want = c * dim + (u + 1) % dim + 1;
      cr_assert_eq(o[id], want, "unit %u of cube %u: %u, expected %u", u, c, o[id], want);
    }
}

static void launch_mark(cubert_server *server, cpu_stream st, cpu_buf *flag, uint32_t value) {
  const uint64_t info[1] = {value};
  cpu_launch(server, st, &mark, 1, 1, &flag, 1, info, 1);
}

/* Takes the stream's errors and checks they are exactly one OUT_OF_MEMORY naming `kernel` whose
   message holds its size (and `what`, when not NULL). Returns the size. */
static uint64_t expect_one_out_of_memory(cpu_stream st, const char *kernel, const char *what) {
  cubert_status s = cpu_take_errors(st);
  cr_assert_not_null(s, "the refused allocation was not reported");
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_error_count(s), 1, "%s", cubert_status_message(s));
  cubert_status e = cubert_status_error_at(s, 0);
  cr_assert_eq(cubert_status_code(e), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(e));
  const uint64_t size = cubert_status_size(e);
  char digits[32];
  snprintf(digits, sizeof digits, "%" PRIu64, size);
  const char *msg = cubert_status_message(e);
  cr_assert_gt(size, 0, "%s", msg);
  cr_assert_not_null(strstr(msg, digits), "size %s not in \"%s\"", digits, msg);
  cr_assert_not_null(strstr(msg, kernel), "kernel %s not named in \"%s\"", kernel, msg);
  if (what) cr_assert_not_null(strstr(msg, what), "\"%s\" not in \"%s\"", what, msg);
  cubert_status_free(s);
  return size;
}

static void use_threads(const char *threads) {
  if (threads)
    setenv("CUBERT_CPU_THREADS", threads, 1);
  else
    unsetenv("CUBERT_CPU_THREADS");
  cubert_config_reload_for_tests();
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* The scenario of issue 5 on a fresh server with the default thread count: the first
   execution-time allocation (whichever participant makes it) is refused. */
Test(cpu_faults, refused_allocation_in_a_queued_launch_is_reported_and_skips_dependent_work) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t cubes = 8, dim = 64;
  cpu_buf *out = cpu_buf_new(server, cubes * dim * 4);
  cpu_buf *flag = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(flag), 0, 64);

  cubert_cpu_debug_fail_allocations(server, 1);
  launch_neighbour(server, st, &neighbour_small, cubes, dim, out); /* returns OK: queued */
  launch_mark(server, st, flag, 7);                                /* depends on it */
  cpu_sync(server, st);
  expect_one_out_of_memory(st, "neighbour_small", NULL);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(flag), 0, "the launch behind the failure ran");

  /* Errors taken: the same stream runs new launches, correctly, and reports nothing. */
  launch_neighbour(server, st, &neighbour_small, cubes, dim, out);
  launch_mark(server, st, flag, 8);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  expect_neighbour_output(out, cubes, dim);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(flag), 8);

  cpu_buf_free(server, out); /* checks that every launch released its binding */
  cpu_buf_free(server, flag);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* With one kernel thread (one worker, callers only wait) the order of allocations is known, so
   each kind of growth can be refused on purpose: the shared buffer, then the fiber table. */
Test(cpu_faults, growth_of_shared_memory_and_fibers_fails_only_the_launch_that_needs_it) {
  use_threads("1");
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t cubes = 6;
  cpu_buf *out = cpu_buf_new(server, cubes * 64 * 4);
  cpu_buf *flag = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(flag), 0, 64);

  /* Warm-up: runner, 16 fibers with stacks, 4096 bytes of shared memory. */
  launch_neighbour(server, st, &neighbour_small, cubes, 16, out);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  expect_neighbour_output(out, cubes, 16);

  /* Armed, a launch that needs nothing new still runs. */
  cubert_cpu_debug_fail_allocations(server, 1);
  launch_neighbour(server, st, &neighbour_small, cubes, 16, out);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  expect_neighbour_output(out, cubes, 16);

  /* The larger shared buffer is refused: exactly its size is reported, nothing of the launch
     runs (a single participant fails before its first cube), the next launch is skipped. */
  launch_neighbour(server, st, &neighbour_large, cubes, 16, out);
  launch_mark(server, st, flag, 1);
  cpu_sync(server, st);
  uint64_t size = expect_one_out_of_memory(st, "neighbour_large", "shared memory");
  cr_assert_eq(size, neighbour_large.shared_bytes);
  for (uint32_t i = 0; i < cubes * 16; ++i) cr_assert_eq(((uint32_t *)cpu_buf_ptr(out))[i], 0);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(flag), 0);

  /* The injection was used up: the same launch now grows the buffer and runs. */
  launch_neighbour(server, st, &neighbour_large, cubes, 16, out);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  expect_neighbour_output(out, cubes, 16);

  /* Bigger cubes need a bigger fiber table and more stacks: refused, then granted. */
  cubert_cpu_debug_fail_allocations(server, 1);
  launch_neighbour(server, st, &neighbour_small, cubes, 64, out);
  cpu_sync(server, st);
  expect_one_out_of_memory(st, "neighbour_small", "fiber");
  launch_neighbour(server, st, &neighbour_small, cubes, 64, out);
  launch_mark(server, st, flag, 2);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  expect_neighbour_output(out, cubes, 64);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(flag), 2);

  cpu_buf_free(server, out);
  cpu_buf_free(server, flag);
  cpu_stream_free(server, st);
  cpu_server_free(server);
  use_threads(NULL);
}

/* Every execution-time allocation refused: cube launches on several streams fail each on its
   own stream, work that allocates nothing (a plain kernel on another stream) still runs, and
   once disarmed everything works again. */
Test(cpu_faults, every_allocation_refused_keeps_the_server_usable) {
  cubert_server *server = cpu_server_new();
  cpu_stream a = cpu_stream_new(server), b = cpu_stream_new(server), c = cpu_stream_new(server);
  const uint32_t cubes = 5, dim = 32;
  cpu_buf *out_a = cpu_buf_new(server, cubes * dim * 4),
          *out_b = cpu_buf_new(server, cubes * dim * 4);
  cpu_buf *flag = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(flag), 0, 64);

  cubert_cpu_debug_fail_allocations(server, UINT32_MAX);
  for (int round = 0; round < 3; ++round) {
    launch_neighbour(server, a, &neighbour_small, cubes, dim, out_a);
    launch_neighbour(server, b, &neighbour_large, cubes, dim, out_b);
  }
  launch_mark(server, c, flag, 3);
  cpu_sync(server, a);
  cpu_sync(server, b);
  cpu_sync(server, c);
  /* One error per stream: the first launch failed, the two behind it were skipped. */
  expect_one_out_of_memory(a, "neighbour_small", NULL);
  expect_one_out_of_memory(b, "neighbour_large", NULL);
  cr_assert_null(cpu_take_errors(c));
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(flag), 3);

  cubert_cpu_debug_fail_allocations(server, 0);
  launch_neighbour(server, a, &neighbour_small, cubes, dim, out_a);
  launch_neighbour(server, b, &neighbour_large, cubes, dim, out_b);
  cpu_sync(server, a);
  cpu_sync(server, b);
  cr_assert_null(cpu_take_errors(a));
  cr_assert_null(cpu_take_errors(b));
  expect_neighbour_output(out_a, cubes, dim);
  expect_neighbour_output(out_b, cubes, dim);

  cpu_buf_free(server, out_a);
  cpu_buf_free(server, out_b);
  cpu_buf_free(server, flag);
  cpu_stream_free(server, a);
  cpu_stream_free(server, b);
  cpu_stream_free(server, c);
  cpu_server_free(server);
}
