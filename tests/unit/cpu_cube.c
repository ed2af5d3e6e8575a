/* CPU server: cube barriers and shared memory — the cooperative fibers of SYNC_CUBE kernels at
   every cube size up to max_units_per_cube, with more than a thousand cubes in flight, shared
   memory private to each cube, units leaving early, and shared-memory kernels without
   barriers. */
#include "base/config.h"
#include "cpu_harness.h"

/* Per-cube sum with two barriers: every unit loads its value into shared memory; unit 0 sums the
   cube into shared[units]; every unit then writes the sum next to its element. */
static void cube_sum_kernel(const cubert_cpu_ctx *ctx) {
  const uint32_t *in = ctx->buffers[0];
  uint64_t *sums = ctx->buffers[1];
  uint64_t *each = ctx->buffers[2];
  uint64_t *shared = ctx->shared;
  uint64_t id = ctx->unit_begin;
  uint32_t u = cubert_cpu_unit_linear(ctx, id);
  uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  shared[u] = in[id];
  cubert_cpu_sync_cube(ctx);
  if (u == 0) {
    uint64_t total = 0;
    for (uint32_t k = 0; k < units; ++k) total += shared[k];
    shared[units] = total;
    sums[cubert_cpu_cube_linear(ctx, id)] = total;
  }
  cubert_cpu_sync_cube(ctx);
  each[id] = shared[units];
}
static const cubert_kernel_def cube_sum = {
    .name = "cube_sum",
    .cpu = cube_sum_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = (1024 + 1) * sizeof(uint64_t),
};

/* Tree reduction with log2(units) barriers (power-of-two cubes). */
static void tree_sum_kernel(const cubert_cpu_ctx *ctx) {
  const uint32_t *in = ctx->buffers[0];
  uint64_t *sums = ctx->buffers[1];
  uint64_t *shared = ctx->shared;
  uint64_t id = ctx->unit_begin;
  uint32_t u = cubert_cpu_unit_linear(ctx, id);
  uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  shared[u] = in[id];
  cubert_cpu_sync_cube(ctx);
  for (uint32_t half = units / 2; half > 0; half /= 2) {
    if (u < half) shared[u] += shared[u + half];
    cubert_cpu_sync_cube(ctx);
  }
  if (u == 0) sums[cubert_cpu_cube_linear(ctx, id)] = shared[0];
}
static const cubert_kernel_def tree_sum = {
    .name = "tree_sum",
    .cpu = tree_sum_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 1024 * sizeof(uint64_t),
};

/* Every unit fills all of shared memory with its cube id, then, after a barrier, checks that
   the whole buffer still holds it: any sharing between cubes running at once shows up. */
static void isolation_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *bad = ctx->buffers[0];
  uint64_t *shared = ctx->shared;
  uint64_t cube = cubert_cpu_cube_linear(ctx, ctx->unit_begin);
  uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  for (uint32_t k = 0; k < units; ++k) shared[k] = cube;
  cubert_cpu_sync_cube(ctx);
  for (int round = 0; round < 3; ++round) {
    for (uint32_t k = 0; k < units; ++k)
      if (shared[k] != cube) bad[cube] += 1;
    cubert_cpu_sync_cube(ctx);
  }
}
static const cubert_kernel_def isolation = {
    .name = "isolation",
    .cpu = isolation_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 1024 * sizeof(uint64_t),
};

/* Odd units return after the first barrier; even units go through two more. Checks that the
   remaining units still meet at their barriers and see each other's writes. */
static void early_exit_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *out = ctx->buffers[0];
  uint32_t *shared = ctx->shared;
  uint64_t id = ctx->unit_begin;
  uint32_t u = cubert_cpu_unit_linear(ctx, id);
  uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  shared[u] = u;
  cubert_cpu_sync_cube(ctx);
  if (u % 2) {
    out[id] = shared[u];
    return;
  }
  shared[u] += 1000;
  cubert_cpu_sync_cube(ctx);
  uint32_t next = (u + 2) % units;
  next -= next % 2;
  out[id] = shared[next];
  cubert_cpu_sync_cube(ctx);
}
static const cubert_kernel_def early_exit = {
    .name = "early_exit",
    .cpu = early_exit_kernel,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 1024 * sizeof(uint32_t),
};

/* Shared memory without barriers: one call per cube covering exactly that cube's units. */
static void per_cube_call_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *calls = ctx->buffers[0];
  uint32_t *bad = ctx->buffers[1];
  uint64_t units = cubert_cpu_units_per_cube(ctx);
  if (!ctx->shared || ctx->unit_begin % units != 0 || ctx->unit_end - ctx->unit_begin != units)
    bad[0] += 1;
  calls[cubert_cpu_cube_linear(ctx, ctx->unit_begin)] += 1;
}
static const cubert_kernel_def per_cube_call = {
    .name = "per_cube_call",
    .cpu = per_cube_call_kernel,
    .shared_bytes = 256,
};

/* Value of element i of the test input. */
static uint32_t input_at(uint64_t i) {
  return (uint32_t)((i * 2654435761u) >> 7) & 0xffff;
}

static void check_cube_sum(const uint32_t dim[3], const uint32_t count[3]) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  uint64_t units = (uint64_t)dim[0] * dim[1] * dim[2];
  uint64_t cubes = (uint64_t)count[0] * count[1] * count[2];
  uint64_t total = units * cubes;
  cpu_buf *bufs[3] = {cpu_buf_new(server, total * 4), cpu_buf_new(server, cubes * 8),
                      cpu_buf_new(server, total * 8)};
  uint32_t *in = cpu_buf_ptr(bufs[0]);
  for (uint64_t i = 0; i < total; ++i) in[i] = input_at(i);
  memset(cpu_buf_ptr(bufs[1]), 0xff, cubes * 8);
  memset(cpu_buf_ptr(bufs[2]), 0xff, total * 8);
  cpu_launch3(server, st, &cube_sum, count, dim, bufs, 3, NULL, 0);
  cpu_sync(server, st);
  cr_assert_null(cpu_take_errors(st));
  const uint64_t *sums = cpu_buf_ptr(bufs[1]), *each = cpu_buf_ptr(bufs[2]);
  for (uint64_t c = 0; c < cubes; ++c) {
    uint64_t ref = 0;
    for (uint64_t k = 0; k < units; ++k) ref += in[c * units + k];
    cr_assert_eq(sums[c], ref, "dim (%u,%u,%u) cube %llu", dim[0], dim[1], dim[2],
                 (unsigned long long)c);
    for (uint64_t k = 0; k < units; ++k)
      cr_assert_eq(each[c * units + k], ref, "dim (%u,%u,%u) cube %llu unit %llu", dim[0], dim[1],
                   dim[2], (unsigned long long)c, (unsigned long long)k);
  }
  for (int i = 0; i < 3; ++i) cpu_buf_free(server, bufs[i]);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_cube, two_barrier_sum_at_every_cube_size) {
  const uint32_t dims[] = {1, 2, 7, 64, 256, 1024};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i) {
    const uint32_t dim[3] = {dims[i], 1, 1}, count[3] = {1031, 1, 1};
    check_cube_sum(dim, count);
  }
}

Test(cpu_cube, two_barrier_sum_in_3d) {
  const uint32_t dim[3] = {4, 4, 4}, count[3] = {7, 11, 13};
  check_cube_sum(dim, count);
  const uint32_t dim2[3] = {8, 8, 16}, count2[3] = {3, 5, 70};
  check_cube_sum(dim2, count2);
}

Test(cpu_cube, tree_reduction_with_many_barriers) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  for (uint32_t dim = 2; dim <= 1024; dim *= 4) {
    const uint32_t cubes = 1500;
    uint64_t total = (uint64_t)dim * cubes;
    cpu_buf *bufs[2] = {cpu_buf_new(server, total * 4), cpu_buf_new(server, cubes * 8)};
    uint32_t *in = cpu_buf_ptr(bufs[0]);
    for (uint64_t i = 0; i < total; ++i) in[i] = input_at(i);
    cpu_launch(server, st, &tree_sum, cubes, dim, bufs, 2, NULL, 0);
    cpu_sync(server, st);
    const uint64_t *sums = cpu_buf_ptr(bufs[1]);
    for (uint32_t c = 0; c < cubes; ++c) {
      uint64_t ref = 0;
      for (uint32_t k = 0; k < dim; ++k) ref += in[(uint64_t)c * dim + k];
      cr_assert_eq(sums[c], ref, "dim %u cube %u", dim, c);
    }
    cpu_buf_free(server, bufs[0]);
    cpu_buf_free(server, bufs[1]);
  }
  cr_assert_null(cpu_take_errors(st));
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_cube, shared_memory_is_private_to_each_cube) {
  cubert_server *server = cpu_server_new();
  /* Two streams too, so cubes of different launches also run side by side. */
  cpu_stream a = cpu_stream_new(server), b = cpu_stream_new(server);
  const uint32_t dims[] = {1, 3, 32, 256};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i) {
    const uint32_t cubes = 2000;
    cpu_buf *bad_a = cpu_buf_new(server, cubes * 4), *bad_b = cpu_buf_new(server, cubes * 4);
    memset(cpu_buf_ptr(bad_a), 0, cubes * 4);
    memset(cpu_buf_ptr(bad_b), 0, cubes * 4);
    cpu_launch(server, a, &isolation, cubes, dims[i], &bad_a, 1, NULL, 0);
    cpu_launch(server, b, &isolation, cubes, dims[i], &bad_b, 1, NULL, 0);
    cpu_sync(server, a);
    cpu_sync(server, b);
    for (uint32_t c = 0; c < cubes; ++c) {
      cr_assert_eq(((uint32_t *)cpu_buf_ptr(bad_a))[c], 0, "dim %u cube %u saw another cube",
                   dims[i], c);
      cr_assert_eq(((uint32_t *)cpu_buf_ptr(bad_b))[c], 0, "dim %u cube %u saw another cube",
                   dims[i], c);
    }
    cpu_buf_free(server, bad_a);
    cpu_buf_free(server, bad_b);
  }
  cpu_stream_free(server, a);
  cpu_stream_free(server, b);
  cpu_server_free(server);
}

Test(cpu_cube, units_may_return_before_later_barriers) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t dim = 10, cubes = 1200;
  cpu_buf *out = cpu_buf_new(server, (uint64_t)dim * cubes * 4);
  cpu_launch(server, st, &early_exit, cubes, dim, &out, 1, NULL, 0);
  cpu_sync(server, st);
  const uint32_t *o = cpu_buf_ptr(out);
  for (uint32_t c = 0; c < cubes; ++c)
    for (uint32_t u = 0; u < dim; ++u) {
      uint32_t next = (u + 2) % dim;
      next -= next % 2;
      uint32_t want = u % 2 ? u : next + 1000;
      cr_assert_eq(o[c * dim + u], want, "cube %u unit %u", c, u);
    }
  cr_assert_null(cpu_take_errors(st));
  cpu_buf_free(server, out);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_cube, shared_memory_without_barriers_gets_one_call_per_cube) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t count[3] = {13, 7, 3}, dim[3] = {4, 2, 3};
  const uint32_t cubes = 13 * 7 * 3;
  cpu_buf *bufs[2] = {cpu_buf_new(server, cubes * 4), cpu_buf_new(server, 64)};
  memset(cpu_buf_ptr(bufs[0]), 0, cubes * 4);
  memset(cpu_buf_ptr(bufs[1]), 0, 64);
  cpu_launch3(server, st, &per_cube_call, count, dim, bufs, 2, NULL, 0);
  cpu_sync(server, st);
  for (uint32_t c = 0; c < cubes; ++c) cr_assert_eq(((uint32_t *)cpu_buf_ptr(bufs[0]))[c], 1);
  cr_assert_eq(((uint32_t *)cpu_buf_ptr(bufs[1]))[0], 0);
  cpu_buf_free(server, bufs[0]);
  cpu_buf_free(server, bufs[1]);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* With one kernel thread the host does not help, and with more threads than cores several
   workers share a core: barriers work the same either way. */
static void cube_sum_with_threads(const char *threads) {
  setenv("CUBERT_CPU_THREADS", threads, 1);
  cubert_config_reload_for_tests();
  const uint32_t dim[3] = {128, 1, 1}, count[3] = {1100, 1, 1};
  check_cube_sum(dim, count);
  unsetenv("CUBERT_CPU_THREADS");
  cubert_config_reload_for_tests();
}

Test(cpu_cube, one_kernel_thread) {
  cube_sum_with_threads("1");
}
Test(cpu_cube, more_threads_than_cores) {
  cube_sum_with_threads("9");
}
