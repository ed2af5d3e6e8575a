/* Helpers shared by the OpenCL server's unit tests (tests/unit/opencl_*.c). They drive the
   server through its vtable, without a client: pages, slices and error queues are made here
   the way the core would make them. */
#ifndef CUBERT_TESTS_OPENCL_TEST_H
#define CUBERT_TESTS_OPENCL_TEST_H

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opencl/api.h"
#include "opencl/server.h"
#include "stream/errors.h"
#include "test_device.h"

/* PoCL compiles each new kernel for about a second; its own cache makes reruns fast. Keep it
   under the build folder (the working directory of ctest) unless the caller chose one. */
static inline void ocl_test_env(void) {
  char cwd[2048], path[2200];
  if (getenv("POCL_CACHE_DIR") || !getcwd(cwd, sizeof(cwd))) return;
  snprintf(path, sizeof(path), "%s/pocl-cache", cwd);
  mkdir(path, 0755);
  setenv("POCL_CACHE_DIR", path, 0);
}

/* A fresh folder for a disk cache under the working directory. */
static inline void ocl_test_temp_dir(char *out, size_t capacity) {
  char cwd[2048];
  cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
  snprintf(out, capacity, "%s/opencl-test-XXXXXX", cwd);
  cr_assert_not_null(mkdtemp(out), "mkdtemp(%s) failed", out);
}

/* The OpenCL device under test: CUBERT_TEST_DEVICE when it names an OpenCL device
   ("opencl:cpu", "opencl:1"), else "opencl" (the first one); a bad value fails the test. */
static inline const char *ocl_test_selector(int *from_env) {
  cubert_test_device_choice c = cubert_test_device("opencl", "opencl");
  cr_assert_not_null(c.selector, "%s", c.error);
  if (from_env) *from_env = c.from_env;
  return c.selector;
}

/* Opens the OpenCL device under test with a private disk cache folder, or skips the test when
   the default device is absent (one that CUBERT_TEST_DEVICE names must exist). */
static inline cubert_server *ocl_test_server(void) {
  ocl_test_env();
  int from_env = 0;
  const char *selector = ocl_test_selector(&from_env);
  cubert_server *server = NULL;
  cubert_status s = cubert_opencl_backend.create(cubert_test_device_spec(selector), &server);
  if (s) {
    char reason[1024];
    snprintf(reason, sizeof(reason), "%s", cubert_status_message(s));
    cubert_code code = cubert_status_code(s);
    cubert_status_free(s);
    if (!from_env && (code == CUBERT_CODE_UNAVAILABLE || code == CUBERT_CODE_NOT_FOUND))
      cr_skip_test("no OpenCL device to test the OpenCL server on: %s", reason);
    cr_assert_fail("creating the OpenCL server for \"%s\" failed: %s", selector, reason);
  }
  char dir[2200];
  ocl_test_temp_dir(dir, sizeof(dir));
  cr_assert_null(cubert_ocl_server_set_cache_dir(server, dir));
  return server;
}

static inline int ocl_test_remove_entry(const char *path, const struct stat *st, int flag,
                                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Destroys a server made by ocl_test_server() and removes its disk cache folder. */
static inline void ocl_test_server_destroy(cubert_server *server) {
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  char dir[4096] = "";
  if (s->cache_dir && strstr(s->cache_dir, "/opencl-test-"))
    snprintf(dir, sizeof(dir), "%.*s",
             (int)(strstr(s->cache_dir, "/opencl-test-") - s->cache_dir + 19), s->cache_dir);
  server->vtable->destroy(server);
  if (dir[0]) nftw(dir, ocl_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define OCL_OK(expr)                                                               \
  do {                                                                             \
    cubert_status ocl_s_ = (expr);                                                 \
    cr_assert_null(ocl_s_, "%s failed: %s", #expr, cubert_status_message(ocl_s_)); \
  } while (0)

/* A page and one slice covering [offset, offset + size) of it, as the core would make. */
typedef struct ocl_test_buffer {
  cubert_storage page;
  cubert_slice slice;
} ocl_test_buffer;

static inline void ocl_test_buffer_init(cubert_server *server, ocl_test_buffer *b,
                                        uint64_t page_size, uint64_t offset, uint64_t size) {
  memset(b, 0, sizeof(*b));
  OCL_OK(server->vtable->storage_alloc(server, page_size, &b->page));
  atomic_init(&b->slice.refcount, 1);
  b->slice.page = &b->page;
  b->slice.offset = offset;
  b->slice.size = size;
}

static inline void ocl_test_buffer_free(cubert_server *server, ocl_test_buffer *b) {
  if (b->slice.backend_cache) server->vtable->slice_cache_release(server, &b->slice);
  server->vtable->storage_free(server, &b->page);
}

static inline cubert_binding ocl_test_binding(ocl_test_buffer *b) {
  cubert_binding binding = {&b->slice, b->slice.offset, b->slice.size};
  return binding;
}

/* A stream with its own error queue. */
typedef struct ocl_test_stream {
  cubert_stream_errors *errors;
  cubert_server_stream *stream;
} ocl_test_stream;

static inline void ocl_test_stream_init(cubert_server *server, ocl_test_stream *s) {
  OCL_OK(cubert_stream_errors_create(&s->errors));
  OCL_OK(server->vtable->stream_create(server, s->errors, &s->stream));
}

static inline void ocl_test_stream_free(cubert_server *server, ocl_test_stream *s) {
  server->vtable->stream_destroy(server, s->stream);
  cubert_stream_errors_destroy(s->errors);
}

/* The setup most launch tests share: a stream, one buffer of `bytes` (page and slice) bound
   as the only argument, and a 1-D launch of `kernel` over `cubes` cubes of `dim` units on it.
   `launch.bindings` points at `ob` inside the fixture, so the fixture must not be moved. */
typedef struct ocl_test_fixture {
  cubert_server *server;
  ocl_test_stream st;
  ocl_test_buffer out;
  cubert_binding ob;
  cubert_launch launch;
} ocl_test_fixture;

static inline void ocl_test_fixture_init(ocl_test_fixture *f, cubert_server *server,
                                         const cubert_kernel_def *kernel, uint32_t cubes,
                                         uint32_t dim, uint64_t bytes) {
  memset(f, 0, sizeof(*f));
  f->server = server;
  ocl_test_stream_init(server, &f->st);
  ocl_test_buffer_init(server, &f->out, bytes, 0, bytes);
  f->ob = ocl_test_binding(&f->out);
  f->launch = (cubert_launch){.kernel = kernel,
                              .cube_count = {cubes, 1, 1},
                              .cube_dim = {dim, 1, 1},
                              .bindings = &f->ob,
                              .binding_count = 1};
}

/* Frees the stream and the buffer; the server stays. */
static inline void ocl_test_fixture_release(ocl_test_fixture *f) {
  ocl_test_stream_free(f->server, &f->st);
  ocl_test_buffer_free(f->server, &f->out);
}

/* ocl_test_fixture_release(), then destroys the server (ocl_test_server_destroy). */
static inline void ocl_test_fixture_free(ocl_test_fixture *f) {
  ocl_test_fixture_release(f);
  ocl_test_server_destroy(f->server);
}

/* A user event in the server's context (complete it with clSetUserEventStatus). */
static inline cl_event ocl_test_user_event(cubert_server *server) {
  cl_context context = NULL;
  OCL_OK(cubert_ocl_server_context(server, &context, NULL));
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(context, &err);
  cr_assert_eq(err, CL_SUCCESS);
  return gate;
}

#endif /* CUBERT_TESTS_OPENCL_TEST_H */
