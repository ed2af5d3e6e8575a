/* CPU server: launches without barriers — chunking over odd sizes, per-stream order, asynchrony,
   concurrent streams, events between streams, kernel failures and dynamic cube counts, driven
   through the server vtable. */
#include <pthread.h>

#include "base/config.h"
#include "base/log.h"
#include "cpu_harness.h"

/* ---- kernels -------------------------------------------------------------------------------- */

/* out[id] = a[id] + b[id] for id < info[0]. */
CUBERT_CPU_KERNEL(add_u32_kernel, ctx, id) {
  const uint32_t *a = ctx->buffers[0], *b = ctx->buffers[1];
  uint32_t *out = ctx->buffers[2];
  if (id < ctx->info[0]) out[id] = a[id] + b[id];
}
static const cubert_kernel_def add_u32 = {.name = "add_u32", .cpu = add_u32_kernel};

/* Counts visits of every unit id and checks each call's range; buffer 1 word 0 counts bad
   ranges. */
static void visit_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *hits = ctx->buffers[0];
  _Atomic uint32_t *bad = ctx->buffers[1];
  uint64_t total = (uint64_t)ctx->cube_count[0] * ctx->cube_count[1] * ctx->cube_count[2] *
                   cubert_cpu_units_per_cube(ctx);
  if (ctx->unit_begin >= ctx->unit_end || ctx->unit_end > total) atomic_fetch_add(bad, 1);
  for (uint64_t id = ctx->unit_begin; id < ctx->unit_end && id < total; ++id) hits[id] += 1;
}
static const cubert_kernel_def visit = {.name = "visit", .cpu = visit_kernel};

/* x[id] = x[id] * 3 + 1 for id < info[0]: a chain of these is order-sensitive. */
CUBERT_CPU_KERNEL(step_kernel, ctx, id) {
  uint32_t *x = ctx->buffers[0];
  if (id < ctx->info[0]) x[id] = x[id] * 3u + 1u;
}
static const cubert_kernel_def step = {.name = "step", .cpu = step_kernel};

/* Holds until the host flag (info[0] is its address) is set, then writes 42 to buffer 0.
   Writes 0xdead instead when the flag never comes (a hang guard, which fails the test). */
static void hold_kernel(const cubert_cpu_ctx *ctx) {
  _Atomic int *flag = (_Atomic int *)(uintptr_t)ctx->info[0];
  uint32_t *out = ctx->buffers[0];
  out[0] = cpu_wait_flag(flag, 20.0) ? 42u : 0xdeadu;
}
static const cubert_kernel_def hold = {.name = "hold", .cpu = hold_kernel};

/* Sets the host flag (address in info[0]). */
static void set_flag_kernel(const cubert_cpu_ctx *ctx) {
  atomic_store((_Atomic int *)(uintptr_t)ctx->info[0], 1);
}
static const cubert_kernel_def set_flag = {.name = "set_flag", .cpu = set_flag_kernel};

/* dst[0] = src[0]. */
static void copy_word_kernel(const cubert_cpu_ctx *ctx) {
  ((uint32_t *)ctx->buffers[1])[0] = ((const uint32_t *)ctx->buffers[0])[0];
}
static const cubert_kernel_def copy_word = {.name = "copy_word", .cpu = copy_word_kernel};

/* Every unit with id % 3 == 0 reports a failure; every unit writes 1. */
static void failing_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *out = ctx->buffers[0];
  for (uint64_t id = ctx->unit_begin; id < ctx->unit_end; ++id) {
    out[id] = 1;
    if (id % 3 == 0) cubert_cpu_fail(ctx, "unit saw a negative length");
  }
}
static const cubert_kernel_def failing = {.name = "failing", .cpu = failing_kernel};

static void barrier_without_flag_kernel(const cubert_cpu_ctx *ctx) {
  cubert_cpu_sync_cube(ctx);
}
static const cubert_kernel_def barrier_without_flag = {.name = "barrier_without_flag",
                                                       .cpu = barrier_without_flag_kernel};

/* Writes the cube count it sees into buffer 1 and counts units into buffer 0. */
static void count_units_kernel(const cubert_cpu_ctx *ctx) {
  _Atomic uint64_t *units = ctx->buffers[0];
  uint32_t *seen = ctx->buffers[1];
  atomic_fetch_add(units, ctx->unit_end - ctx->unit_begin);
  if (ctx->unit_begin == 0) memcpy(seen, ctx->cube_count, 3 * sizeof(uint32_t));
}
static const cubert_kernel_def count_units = {.name = "count_units", .cpu = count_units_kernel};

/* Writes the cube count info[0..2] into buffer 0 (a producer of dynamic counts). */
static void write_count_kernel(const cubert_cpu_ctx *ctx) {
  uint32_t *xyz = ctx->buffers[0];
  for (int i = 0; i < 3; ++i) xyz[i] = (uint32_t)ctx->info[i];
}
static const cubert_kernel_def write_count = {.name = "write_count", .cpu = write_count_kernel};

/* ---- chunking ------------------------------------------------------------------------------- */

Test(cpu_launch, elementwise_add_over_odd_sizes) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint64_t sizes[] = {
      1, 2, 3, 15, 16, 17, 63, 64, 65, 127, 1000, 4095, 4097, 65537, (1u << 20) + 3};
  const uint32_t dims[] = {1, 7, 64, 256};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; ++di) {
      uint64_t n = sizes[si];
      uint32_t dim = dims[di];
      uint32_t cubes = (uint32_t)((n + dim - 1) / dim);
      cpu_buf *bufs[3];
      for (int i = 0; i < 3; ++i) bufs[i] = cpu_buf_new(server, n * 4 + 64);
      uint32_t *a = cpu_buf_ptr(bufs[0]), *b = cpu_buf_ptr(bufs[1]), *out = cpu_buf_ptr(bufs[2]);
      for (uint64_t i = 0; i < n; ++i) {
        a[i] = (uint32_t)(i * 2654435761u);
        b[i] = (uint32_t)(i ^ 0x5bd1e995u);
      }
      memset(out, 0xab, n * 4 + 64);
      uint64_t info = n;
      cpu_launch(server, st, &add_u32, cubes, dim, bufs, 3, &info, 1);
      cpu_sync(server, st);
      for (uint64_t i = 0; i < n; ++i)
        cr_assert_eq(out[i], a[i] + b[i], "n=%llu dim=%u i=%llu", (unsigned long long)n, dim,
                     (unsigned long long)i);
      /* Slack past n untouched (the bound check worked, nothing ran past the grid). */
      cr_assert_eq(((uint8_t *)out)[n * 4 + 63], 0xab);
      for (int i = 0; i < 3; ++i) cpu_buf_free(server, bufs[i]);
    }
  }
  cr_assert_null(cpu_take_errors(st));
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_launch, every_unit_runs_exactly_once_in_3d_grids) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t shapes[][6] = {
      {1, 1, 1, 1, 1, 1},  {3, 5, 7, 1, 1, 1},    {2, 3, 4, 5, 6, 7},  {1000, 1, 1, 1, 16, 1},
      {17, 9, 1, 8, 8, 1}, {1, 1, 1, 1024, 1, 1}, {33, 2, 2, 3, 3, 3}, {4096, 3, 1, 2, 1, 1},
  };
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    const uint32_t *c = shapes[k], *d = shapes[k] + 3;
    uint64_t total = (uint64_t)c[0] * c[1] * c[2] * d[0] * d[1] * d[2];
    cpu_buf *bufs[2] = {cpu_buf_new(server, total * 4), cpu_buf_new(server, 64)};
    memset(cpu_buf_ptr(bufs[0]), 0, total * 4);
    memset(cpu_buf_ptr(bufs[1]), 0, 64);
    cpu_launch3(server, st, &visit, c, d, bufs, 2, NULL, 0);
    cpu_sync(server, st);
    const uint32_t *hits = cpu_buf_ptr(bufs[0]);
    for (uint64_t i = 0; i < total; ++i)
      cr_assert_eq(hits[i], 1, "shape %zu id %llu visited %u times", k, (unsigned long long)i,
                   hits[i]);
    cr_assert_eq(*(uint32_t *)cpu_buf_ptr(bufs[1]), 0, "bad ranges in shape %zu", k);
    cpu_buf_free(server, bufs[0]);
    cpu_buf_free(server, bufs[1]);
  }
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* The same kernel in cube mode (shared memory: one call per whole cube). */
static const cubert_kernel_def visit_cubes = {
    .name = "visit_cubes", .cpu = visit_kernel, .shared_bytes = 64};

/* Chunking depends on the thread count: big launches get a head of equal chunks and a tail of
   finer ones (scheduler.c). Sizes around those thresholds, in unit and cube mode, with several
   pool sizes: every unit runs exactly once, every call gets a sane range. */
Test(cpu_launch, chunking_covers_every_unit_once_for_any_thread_count) {
  const char *threads[] = {"1", "2", "3", "5"};
  const uint32_t shapes[][2] = {
      /* cubes, dim */
      {262143, 1}, {262144 + 4097, 1}, {(1u << 21) + 12345, 1}, {40961, 64}, {8191, 257},
  };
  const uint32_t cube_shapes[][2] = {{7, 3}, {49, 3}, {50, 5}, {1000, 2}, {4097, 3}};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
    setenv("CUBERT_CPU_THREADS", threads[t], 1);
    cubert_config_reload_for_tests();
    cubert_server *server = cpu_server_new();
    cpu_stream st = cpu_stream_new(server);
    for (int mode = 0; mode < 2; ++mode) {
      const uint32_t(*list)[2] = mode ? cube_shapes : shapes;
      size_t n =
          mode ? sizeof cube_shapes / sizeof cube_shapes[0] : sizeof shapes / sizeof shapes[0];
      for (size_t k = 0; k < n; ++k) {
        uint64_t total = (uint64_t)list[k][0] * list[k][1];
        cpu_buf *bufs[2] = {cpu_buf_new(server, total * 4), cpu_buf_new(server, 64)};
        memset(cpu_buf_ptr(bufs[0]), 0, total * 4);
        memset(cpu_buf_ptr(bufs[1]), 0, 64);
        cpu_launch(server, st, mode ? &visit_cubes : &visit, list[k][0], list[k][1], bufs, 2, NULL,
                   0);
        cpu_sync(server, st);
        const uint32_t *hits = cpu_buf_ptr(bufs[0]);
        for (uint64_t i = 0; i < total; ++i)
          cr_assert_eq(hits[i], 1, "%s threads, mode %d, shape %zu: id %llu visited %u times",
                       threads[t], mode, k, (unsigned long long)i, hits[i]);
        cr_assert_eq(*(uint32_t *)cpu_buf_ptr(bufs[1]), 0, "bad ranges: %s threads, shape %zu",
                     threads[t], k);
        cpu_buf_free(server, bufs[0]);
        cpu_buf_free(server, bufs[1]);
      }
    }
    cr_assert_null(cpu_take_errors(st));
    cpu_stream_free(server, st);
    cpu_server_free(server);
  }
  unsetenv("CUBERT_CPU_THREADS");
  cubert_config_reload_for_tests();
}

/* ---- order and asynchrony ------------------------------------------------------------------- */

Test(cpu_launch, launches_on_one_stream_run_in_order) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint64_t n = 100003;
  cpu_buf *x = cpu_buf_new(server, n * 4);
  uint32_t *px = cpu_buf_ptr(x);
  uint32_t *ref = malloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) px[i] = ref[i] = (uint32_t)i;
  for (int k = 0; k < 150; ++k) {
    cpu_launch(server, st, &step, (uint32_t)((n + 255) / 256), 256, &x, 1, &n, 1);
    for (uint64_t i = 0; i < n; ++i) ref[i] = ref[i] * 3u + 1u;
  }
  cpu_sync(server, st);
  for (uint64_t i = 0; i < n; ++i) cr_assert_eq(px[i], ref[i], "i=%llu", (unsigned long long)i);
  free(ref);
  cpu_buf_free(server, x);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_launch, many_tiny_launches_back_to_back) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  cpu_buf *x = cpu_buf_new(server, 64);
  uint32_t *px = cpu_buf_ptr(x);
  px[0] = 7;
  uint32_t ref = 7;
  const uint64_t one = 1;
  /* More than the queue bound, so the launch path's back-pressure runs too. */
  for (int k = 0; k < 70000; ++k) {
    cpu_launch(server, st, &step, 1, 1, &x, 1, &one, 1);
    ref = ref * 3u + 1u;
  }
  cpu_sync(server, st);
  cr_assert_eq(px[0], ref);
  cpu_buf_free(server, x);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_launch, launch_returns_before_the_kernel_runs) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  cpu_buf *out = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(out), 0, 64);
  _Atomic int flag = 0;
  uint64_t info = (uint64_t)(uintptr_t)&flag;
  cpu_launch(server, st, &hold, 1, 1, &out, 1, &info, 1);
  /* The kernel holds until this store: a synchronous launch would have timed out above. */
  cr_assert_eq(*(volatile uint32_t *)cpu_buf_ptr(out), 0);
  atomic_store(&flag, 1);
  cpu_sync(server, st);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(out), 42);
  cpu_buf_free(server, out);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_launch, launches_progress_without_a_sync) {
  cubert_server *server = cpu_server_new();
  const cubert_server_vtable *vt = server->vtable;
  cpu_stream st = cpu_stream_new(server);
  _Atomic int flag = 0;
  uint64_t info = (uint64_t)(uintptr_t)&flag;
  cpu_launch(server, st, &set_flag, 1, 1, NULL, 0, &info, 1);
  cubert_event *ev = NULL;
  cr_assert_null(vt->event_record(server, st.stream, &ev));
  /* Nobody waits: the workers must run it on their own (polling only). */
  cr_assert(cpu_wait_flag(&flag, 20.0), "the launch never ran without a sync");
  uint64_t limit = cubert_now_ns() + 20000000000ull;
  while (!vt->event_done(server, ev) && cubert_now_ns() < limit) continue;
  cr_assert_neq(vt->event_done(server, ev), 0);
  vt->event_release(server, ev);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* ---- several streams ------------------------------------------------------------------------ */

Test(cpu_launch, many_streams_at_once) {
  cubert_server *server = cpu_server_new();
  enum { STREAMS = 150, N = 3000 }; /* more streams than one word of the publication mask */
  cpu_stream *st = calloc(STREAMS, sizeof *st);
  cpu_buf **x = calloc(STREAMS, sizeof *x);
  const uint64_t n = N;
  for (int i = 0; i < STREAMS; ++i) {
    st[i] = cpu_stream_new(server);
    x[i] = cpu_buf_new(server, N * 4);
    for (uint32_t k = 0; k < N; ++k) ((uint32_t *)cpu_buf_ptr(x[i]))[k] = k + (uint32_t)i;
  }
  for (int round = 0; round < 5; ++round)
    for (int i = 0; i < STREAMS; ++i)
      cpu_launch(server, st[i], &step, N / 100, 100, &x[i], 1, &n, 1);
  for (int i = 0; i < STREAMS; ++i) {
    cpu_sync(server, st[i]);
    for (uint32_t k = 0; k < N; ++k) {
      uint32_t ref = k + (uint32_t)i;
      for (int round = 0; round < 5; ++round) ref = ref * 3u + 1u;
      cr_assert_eq(((uint32_t *)cpu_buf_ptr(x[i]))[k], ref, "stream %d element %u", i, k);
    }
    cpu_buf_free(server, x[i]);
    cpu_stream_free(server, st[i]);
  }
  free(st);
  free(x);
  cpu_server_free(server);
}

typedef struct chain_arg {
  cubert_server *server;
  uint32_t seed;
  int ok;
} chain_arg;

/* A host thread driving its own stream: a chain of dependent launches, then a check. */
static void *chain_thread(void *p) {
  chain_arg *arg = p;
  cubert_server *server = arg->server;
  cpu_stream st = cpu_stream_new(server);
  const uint64_t n = 20000;
  cpu_buf *x = cpu_buf_new(server, n * 4);
  uint32_t *px = cpu_buf_ptr(x);
  uint32_t *ref = malloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) px[i] = ref[i] = (uint32_t)i + arg->seed;
  for (int k = 0; k < 300; ++k) {
    cpu_launch(server, st, &step, (uint32_t)((n + 63) / 64), 64, &x, 1, &n, 1);
    for (uint64_t i = 0; i < n; ++i) ref[i] = ref[i] * 3u + 1u;
    if (k % 50 == 0) cpu_sync(server, st);
  }
  cpu_sync(server, st);
  arg->ok = memcmp(px, ref, n * 4) == 0;
  free(ref);
  cpu_buf_free(server, x);
  cpu_stream_free(server, st);
  return NULL;
}

Test(cpu_launch, streams_of_several_threads_stay_in_order) {
  cubert_server *server = cpu_server_new();
  enum { THREADS = 4 };
  pthread_t threads[THREADS];
  chain_arg args[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    args[i] = (chain_arg){server, (uint32_t)i * 1000003u, 0};
    cr_assert_eq(pthread_create(&threads[i], NULL, chain_thread, &args[i]), 0);
  }
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(threads[i], NULL);
    cr_assert(args[i].ok, "stream of thread %d computed a wrong chain", i);
  }
  cpu_server_free(server);
}

Test(cpu_launch, two_streams_run_concurrently) {
  cubert_server *server = cpu_server_new();
  if (server->properties.hardware.num_compute_units < 2) {
    cpu_server_free(server);
    cr_skip_test("one kernel thread (CUBERT_CPU_THREADS=1): streams cannot overlap");
  }
  cpu_stream a = cpu_stream_new(server), b = cpu_stream_new(server);
  cpu_buf *out = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(out), 0, 64);
  _Atomic int flag = 0;
  uint64_t info = (uint64_t)(uintptr_t)&flag;
  /* A's kernel can only finish once B's kernel ran: B must start while A is running. */
  cpu_launch(server, a, &hold, 1, 1, &out, 1, &info, 1);
  cpu_launch(server, b, &set_flag, 1, 1, NULL, 0, &info, 1);
  cpu_sync(server, a);
  cpu_sync(server, b);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(out), 42);
  cpu_buf_free(server, out);
  cpu_stream_free(server, a);
  cpu_stream_free(server, b);
  cpu_server_free(server);
}

Test(cpu_launch, events_order_work_between_streams) {
  cubert_server *server = cpu_server_new();
  const cubert_server_vtable *vt = server->vtable;
  cpu_stream a = cpu_stream_new(server), b = cpu_stream_new(server);
  cpu_buf *src = cpu_buf_new(server, 64), *dst = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(src), 0, 64);
  memset(cpu_buf_ptr(dst), 0, 64);
  _Atomic int flag = 0;
  uint64_t info = (uint64_t)(uintptr_t)&flag;
  cpu_launch(server, a, &hold, 1, 1, &src, 1, &info, 1); /* src = 42 once released */
  cubert_event *ev = NULL;
  cr_assert_null(vt->event_record(server, a.stream, &ev));
  cr_assert_null(vt->event_wait(server, b.stream, ev));
  cpu_buf *pair[2] = {src, dst};
  cpu_launch(server, b, &copy_word, 1, 1, pair, 2, NULL, 0); /* dst = src, after the event */
  cr_assert_eq(vt->event_done(server, ev), 0);
  /* B's copy must not have run yet: it waits for A's held kernel. */
  cr_assert_eq(*(volatile uint32_t *)cpu_buf_ptr(dst), 0);
  atomic_store(&flag, 1);
  cr_assert_null(vt->event_sync(server, ev));
  cr_assert_neq(vt->event_done(server, ev), 0);
  cpu_sync(server, b);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(dst), 42);
  vt->event_release(server, ev);

  /* An event of the waiting stream itself, and one already reached, need no wait. */
  cr_assert_null(vt->event_record(server, b.stream, &ev));
  cr_assert_null(vt->event_wait(server, b.stream, ev));
  cr_assert_null(vt->event_wait(server, a.stream, ev));
  cr_assert_null(vt->event_sync(server, ev));
  vt->event_release(server, ev);
  cpu_buf_free(server, src);
  cpu_buf_free(server, dst);
  cpu_stream_free(server, a);
  cpu_stream_free(server, b);
  cpu_server_free(server);
}

Test(cpu_launch, chained_waits_across_three_streams) {
  cubert_server *server = cpu_server_new();
  const cubert_server_vtable *vt = server->vtable;
  cpu_stream a = cpu_stream_new(server), b = cpu_stream_new(server), c = cpu_stream_new(server);
  cpu_buf *x = cpu_buf_new(server, 64), *y = cpu_buf_new(server, 64), *z = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(x), 0, 64);
  memset(cpu_buf_ptr(y), 0, 64);
  memset(cpu_buf_ptr(z), 0, 64);
  _Atomic int flag = 0;
  uint64_t info = (uint64_t)(uintptr_t)&flag;
  cpu_launch(server, a, &hold, 1, 1, &x, 1, &info, 1);
  cubert_event *ea = NULL, *eb = NULL;
  cr_assert_null(vt->event_record(server, a.stream, &ea));
  cr_assert_null(vt->event_wait(server, b.stream, ea));
  cpu_buf *xy[2] = {x, y}, *yz[2] = {y, z};
  cpu_launch(server, b, &copy_word, 1, 1, xy, 2, NULL, 0);
  cr_assert_null(vt->event_record(server, b.stream, &eb));
  cr_assert_null(vt->event_wait(server, c.stream, eb));
  cpu_launch(server, c, &copy_word, 1, 1, yz, 2, NULL, 0);
  /* The producer stream is destroyed while events still name it. */
  atomic_store(&flag, 1);
  cpu_stream_free(server, a);
  cpu_sync(server, c);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(z), 42);
  cr_assert_neq(vt->event_done(server, ea), 0);
  vt->event_release(server, ea);
  vt->event_release(server, eb);
  cpu_buf_free(server, x);
  cpu_buf_free(server, y);
  cpu_buf_free(server, z);
  cpu_stream_free(server, b);
  cpu_stream_free(server, c);
  cpu_server_free(server);
}

/* ---- failures -------------------------------------------------------------------------------- */

Test(cpu_launch, kernel_failure_is_reported_once_and_skips_later_work) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  const uint32_t units = 3000;
  cpu_buf *out = cpu_buf_new(server, units * 4);
  cpu_buf *later = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(out), 0, units * 4);
  memset(cpu_buf_ptr(later), 0, 64);
  cpu_launch(server, st, &failing, units / 10, 10, &out, 1, NULL, 0);
  cpu_launch(server, st, &set_flag, 1, 1, &later, 1, &(uint64_t){(uintptr_t)cpu_buf_ptr(later)}, 1);
  cpu_sync(server, st);
  /* The failing launch ran to the end; the launch behind it was skipped, bindings released. */
  for (uint32_t i = 0; i < units; ++i) cr_assert_eq(((uint32_t *)cpu_buf_ptr(out))[i], 1);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(later), 0);
  cubert_status s = cpu_take_errors(st);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY);
  cr_assert_eq(cubert_status_error_count(s), 1);
  cubert_status e = cubert_status_error_at(s, 0);
  cr_assert_eq(cubert_status_code(e), CUBERT_CODE_GENERIC);
  cr_assert_not_null(strstr(cubert_status_message(e), "failing"));
  cr_assert_not_null(strstr(cubert_status_message(e), "negative length"));
  cubert_status_free(s);
  /* Once the errors were taken, the stream runs work again. */
  cpu_launch(server, st, &set_flag, 1, 1, &later, 1, &(uint64_t){(uintptr_t)cpu_buf_ptr(later)}, 1);
  cpu_sync(server, st);
  cr_assert_eq(*(uint32_t *)cpu_buf_ptr(later), 1);
  cr_assert_null(cpu_take_errors(st));
  cpu_buf_free(server, out);
  cpu_buf_free(server, later);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

Test(cpu_launch, barrier_in_a_kernel_without_the_flag_is_reported) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  cpu_launch(server, st, &barrier_without_flag, 4, 8, NULL, 0, NULL, 0);
  cpu_sync(server, st);
  cubert_status s = cpu_take_errors(st);
  cr_assert_eq(cubert_status_error_count(s), 1);
  cr_assert_not_null(strstr(cubert_status_message(s), "CUBERT_KERNEL_SYNC_CUBE"));
  cubert_status_free(s);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* ---- dynamic cube counts --------------------------------------------------------------------- */

static void launch_dynamic(cubert_server *server, cpu_stream st, cpu_buf *units, cpu_buf *seen,
                           cpu_buf *count, uint32_t dim) {
  cubert_binding bindings[2] = {units->binding, seen->binding};
  cubert_launch launch = {
      .kernel = &count_units,
      .cube_count = {999, 999, 999}, /* ignored */
      .dynamic_count = &count->binding,
      .cube_dim = {dim, 1, 1},
      .bindings = bindings,
      .binding_count = 2,
  };
  cr_assert_null(server->vtable->launch(server, st.stream, &launch));
}

Test(cpu_launch, dynamic_cube_count_is_read_when_the_launch_starts) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  cpu_buf *units = cpu_buf_new(server, 64), *seen = cpu_buf_new(server, 64);
  cpu_buf *count = cpu_buf_new(server, 64);
  memset(cpu_buf_ptr(units), 0, 64);
  memset(cpu_buf_ptr(seen), 0, 64);
  uint32_t *xyz = cpu_buf_ptr(count);
  xyz[0] = 1, xyz[1] = 1, xyz[2] = 1;
  /* A kernel earlier on the stream writes the count; the launch must see (5, 3, 2). */
  const uint64_t want[3] = {5, 3, 2};
  cpu_launch(server, st, &write_count, 1, 1, &count, 1, want, 3);
  launch_dynamic(server, st, units, seen, count, 4);
  cpu_sync(server, st);
  cr_assert_eq(*(uint64_t *)cpu_buf_ptr(units), 5 * 3 * 2 * 4);
  const uint32_t *s = cpu_buf_ptr(seen);
  cr_assert(s[0] == 5 && s[1] == 3 && s[2] == 2, "saw (%u, %u, %u)", s[0], s[1], s[2]);
  /* A zero count runs nothing and completes. */
  const uint64_t zero[3] = {0, 7, 1};
  cpu_launch(server, st, &write_count, 1, 1, &count, 1, zero, 3);
  launch_dynamic(server, st, units, seen, count, 4);
  cpu_sync(server, st);
  cr_assert_eq(*(uint64_t *)cpu_buf_ptr(units), 5 * 3 * 2 * 4);
  /* A count too large for the server is reported, not run. */
  const uint64_t huge[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  cpu_launch(server, st, &write_count, 1, 1, &count, 1, huge, 3);
  launch_dynamic(server, st, units, seen, count, 4);
  cpu_sync(server, st);
  cubert_status err = cpu_take_errors(st);
  cr_assert_eq(cubert_status_error_count(err), 1);
  cr_assert_eq(cubert_status_code(cubert_status_error_at(err, 0)), CUBERT_CODE_UNITS);
  cubert_status_free(err);
  cr_assert_eq(*(uint64_t *)cpu_buf_ptr(units), 5 * 3 * 2 * 4);
  cpu_buf_free(server, units);
  cpu_buf_free(server, seen);
  cpu_buf_free(server, count);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* ---- thread counts -----------------------------------------------------------------------------
 */

static void run_chain_with_threads(const char *threads) {
  setenv("CUBERT_CPU_THREADS", threads, 1);
  cubert_config_reload_for_tests();
  cubert_server *server = cpu_server_new();
  cr_assert_eq(server->properties.hardware.num_compute_units, (uint32_t)atoi(threads));
  chain_arg arg = {server, 17, 0};
  chain_thread(&arg);
  cr_assert(arg.ok);
  cpu_server_free(server);
  unsetenv("CUBERT_CPU_THREADS");
  cubert_config_reload_for_tests();
}

Test(cpu_launch, one_kernel_thread) {
  run_chain_with_threads("1");
}
Test(cpu_launch, more_threads_than_cores) {
  run_chain_with_threads("7");
}
