/* Test harness for the CPU server's unit tests (tests/unit/cpu_*.c): drives the server through
   its vtable, as the core does, with hand-built slices and bindings and the core's real
   per-stream error queues. Header-only; every helper asserts with Criterion. */
#ifndef CUBERT_TESTS_CPU_HARNESS_H
#define CUBERT_TESTS_CPU_HARNESS_H

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cpu/api.h"
#include "cubert/server.h"
#include "stream/errors.h"

/* One storage page with one slice covering it and the binding of the whole slice. */
typedef struct cpu_buf {
  cubert_storage page;
  cubert_slice slice;
  cubert_binding binding;
} cpu_buf;

typedef struct cpu_stream {
  cubert_server_stream *stream;
  cubert_stream_errors *errors;
} cpu_stream;

static inline cubert_server *cpu_server_new(void) {
  cubert_server *server = NULL;
  cubert_status s = cubert_cpu_backend.create("", &server);
  cr_assert_null(s, "create: %s", cubert_status_message(s));
  cr_assert_not_null(server);
  return server;
}

static inline void cpu_server_free(cubert_server *server) {
  server->vtable->destroy(server);
}

static inline cpu_buf *cpu_buf_new(cubert_server *server, uint64_t bytes) {
  cpu_buf *b = calloc(1, sizeof *b);
  cr_assert_not_null(b);
  cubert_status s = server->vtable->storage_alloc(server, bytes, &b->page);
  cr_assert_null(s, "storage_alloc(%llu): %s", (unsigned long long)bytes, cubert_status_message(s));
  atomic_init(&b->slice.refcount, 1);
  b->slice.page = &b->page;
  b->slice.offset = 0;
  b->slice.size = bytes;
  b->binding = (cubert_binding){&b->slice, 0, bytes};
  return b;
}

static inline void *cpu_buf_ptr(const cpu_buf *b) {
  return b->page.host_ptr;
}

/* Frees the buffer after checking that every launch gave its reference back. */
static inline void cpu_buf_free(cubert_server *server, cpu_buf *b) {
  cr_assert_eq(atomic_load(&b->slice.refcount), 1, "slice still referenced by %u launches",
               atomic_load(&b->slice.refcount) - 1);
  server->vtable->storage_free(server, &b->page);
  free(b);
}

static inline cpu_stream cpu_stream_new(cubert_server *server) {
  cpu_stream st = {0};
  cubert_status s = cubert_stream_errors_create(&st.errors);
  cr_assert_null(s);
  s = server->vtable->stream_create(server, st.errors, &st.stream);
  cr_assert_null(s, "stream_create: %s", cubert_status_message(s));
  return st;
}

static inline void cpu_stream_free(cubert_server *server, cpu_stream st) {
  server->vtable->sync(server, st.stream);
  server->vtable->stream_destroy(server, st.stream);
  cubert_stream_errors_destroy(st.errors);
}

static inline void cpu_sync(cubert_server *server, cpu_stream st) {
  cubert_status s = server->vtable->sync(server, st.stream);
  cr_assert_null(s, "sync: %s", cubert_status_message(s));
}

/* Queues `kernel` over cube count (cx, cy, cz) and cube dim (dx, dy, dz). */
static inline void cpu_launch3(cubert_server *server, cpu_stream st,
                               const cubert_kernel_def *kernel, const uint32_t count[3],
                               const uint32_t dim[3], cpu_buf *const *bufs, uint32_t nbufs,
                               const uint64_t *info, uint32_t ninfo) {
  cubert_binding bindings[16];
  cr_assert_leq(nbufs, 16);
  for (uint32_t i = 0; i < nbufs; ++i) bindings[i] = bufs[i]->binding;
  cubert_launch launch = {
      .kernel = kernel,
      .cube_count = {count[0], count[1], count[2]},
      .cube_dim = {dim[0], dim[1], dim[2]},
      .bindings = bindings,
      .binding_count = nbufs,
      .info = info,
      .info_count = ninfo,
  };
  cubert_status s = server->vtable->launch(server, st.stream, &launch);
  cr_assert_null(s, "launch %s: %s", kernel->name, cubert_status_message(s));
}

/* 1-D form: `cubes` cubes of `dim` units. */
static inline void cpu_launch(cubert_server *server, cpu_stream st, const cubert_kernel_def *kernel,
                              uint32_t cubes, uint32_t dim, cpu_buf *const *bufs, uint32_t nbufs,
                              const uint64_t *info, uint32_t ninfo) {
  const uint32_t count[3] = {cubes, 1, 1}, d[3] = {dim, 1, 1};
  cpu_launch3(server, st, kernel, count, d, bufs, nbufs, info, ninfo);
}

/* Takes the stream's asynchronous errors (NULL when none), as the core's sync does. */
static inline cubert_status cpu_take_errors(cpu_stream st) {
  return cubert_stream_errors_take(st.errors);
}

/* Spins until *flag becomes nonzero or about `seconds` pass; returns the flag. A guard against
   hangs in tests that hold a kernel until the host releases it. */
static inline int cpu_wait_flag(_Atomic int *flag, double seconds) {
  uint64_t limit = cubert_now_ns() + (uint64_t)(seconds * 1e9);
  while (!atomic_load(flag))
    if (cubert_now_ns() > limit) return 0;
  return 1;
}

#endif /* CUBERT_TESTS_CPU_HARNESS_H */
