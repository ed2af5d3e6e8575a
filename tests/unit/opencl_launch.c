/* The OpenCL server's launches and transfers through its vtable: bindings at non-zero slice
   offsets (sub-buffers), info words, dynamic cube counts, execution modes, reads and writes
   (plain and staged), events between streams, profiling, pinning of bindings until their
   command completed, and asynchronous errors landing in the stream's error queue, including
   the failure of a command that has no event. */
#include <time.h>

#include "cubert/server/profiler.h"
#include "cubert/server/transfers.h"
#include "opencl/device.h"
#include "opencl/pinned.h"
#include "opencl/queue.h"
#include "opencl_test.h"

/* out[i] = a[i] + b[i] + info[1] for i < info[0]. */
static const char kAddSource[] =
    "__kernel void add(__global const float *a, __global const float *b, __global float *out,\n"
    "                  __global const ulong *info) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < info[0]) out[i] = a[i] + b[i] + (float)info[1];\n"
    "}\n";
static const cubert_kernel_def kAdd = {
    .name = "add", .opencl_source = kAddSource, .opencl_entry = "add"};

/* out[linear id] = linear id + 1 over a 3-D launch (no info). */
static const char kIotaSource[] =
    "__kernel void iota(__global uint *out) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  size_t i = x + get_global_size(0) * (y + get_global_size(1) * z);\n"
    "  out[i] = (uint)i + 1u;\n"
    "}\n";
static const cubert_kernel_def kIota = {
    .name = "iota", .opencl_source = kIotaSource, .opencl_entry = "iota"};

/* out[0] = 1 when built checked, 0 unchecked. */
static const char kModeSource[] =
    "__kernel void mode(__global int *out) {\n"
    "#if CUBERT_CHECKED\n  out[0] = 1;\n#else\n  out[0] = 0;\n#endif\n}\n";
static const cubert_kernel_def kMode = {
    .name = "mode", .opencl_source = kModeSource, .opencl_entry = "mode"};

static void write_floats(cubert_server *server, cubert_server_stream *stream, cubert_binding b,
                         float base, uint32_t n) {
  float *v = malloc(n * sizeof(float));
  for (uint32_t i = 0; i < n; ++i) v[i] = base + (float)i;
  OCL_OK(server->vtable->write(server, stream, &b, v, n * sizeof(float)));
  free(v);
}

/* Reads the first 64 words of the fixture's buffer: an iota launch left i + 1 in word i. */
static void expect_iota_64(ocl_test_fixture *f) {
  uint32_t values[64] = {0};
  OCL_OK(f->server->vtable->read(f->server, f->st.stream, &f->ob, values, sizeof(values)));
  for (uint32_t i = 0; i < 64; ++i) cr_expect_eq(values[i], i + 1, "out[%u] = %u", i, values[i]);
}

/* The fixture of the tests with a gate: iota over one cube of 64 units into a 256-byte buffer,
   the stream waiting on a user event (the gate, returned) before anything it runs. */
static cl_event gated_iota_fixture(ocl_test_fixture *f, cubert_server *server) {
  ocl_test_fixture_init(f, server, &kIota, 1, 64, 256);
  cl_event gate = ocl_test_user_event(server);
  OCL_OK(cubert_ocl_stream_wait_cl_event(server, f->st.stream, gate));
  return gate;
}

/* After a failure was reported: the failed commands released their pins (`pins_message`
   otherwise), and a new launch on the stream runs without a new error. */
static void expect_recovered(ocl_test_fixture *f, const char *pins_message) {
  cubert_server *server = f->server;
  cr_expect_eq(atomic_load(&f->out.slice.refcount), 1, "%s", pins_message);
  OCL_OK(server->vtable->launch(server, f->st.stream, &f->launch));
  OCL_OK(server->vtable->sync(server, f->st.stream));
  cr_expect_not(cubert_stream_errors_pending(f->st.errors), "a new error after recovery");
  expect_iota_64(f);
}

Test(opencl_launch, add_with_bindings_at_slice_offsets) {
  cubert_server *server = ocl_test_server();
  uint64_t align = server->properties.memory.alignment;
  const uint32_t n = 100;
  const uint64_t bytes = n * sizeof(float);
  uint64_t stride = (bytes + align - 1) / align * align;
  /* Three slices of one page: a at offset 0, b and out at aligned offsets after it. */
  ocl_test_buffer page;
  ocl_test_buffer_init(server, &page, 3 * stride, 0, bytes);
  cubert_slice slice_b = page.slice, slice_out = page.slice;
  slice_b.offset = stride;
  slice_out.offset = 2 * stride;
  atomic_init(&slice_b.refcount, 1);
  atomic_init(&slice_out.refcount, 1);
  cubert_binding bindings[3] = {
      {&page.slice, 0, bytes}, {&slice_b, stride, bytes}, {&slice_out, 2 * stride, bytes}};
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  write_floats(server, st.stream, bindings[0], 1.0f, n);
  write_floats(server, st.stream, bindings[1], 1000.0f, n);
  const uint64_t info[2] = {n, 5};
  cubert_launch launch = {.kernel = &kAdd,
                          .cube_count = {(n + 31) / 32, 1, 1},
                          .cube_dim = {32, 1, 1},
                          .bindings = bindings,
                          .binding_count = 3,
                          .info = info,
                          .info_count = 2};
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  /* The slices at non-zero offsets reach the kernel as cached sub-buffers. */
  cr_expect_null(page.slice.backend_cache, "offset 0 uses the page itself");
  cr_expect_not_null(slice_b.backend_cache);
  cr_expect_eq(slice_b.backend_cache_offset, stride);
  cr_expect_geq(slice_b.backend_cache_size, bytes);
  void *cached = slice_out.backend_cache;
  cr_expect_not_null(cached);
  /* Queued launches pin their bindings. */
  cr_expect_geq(atomic_load(&slice_out.refcount), 1);
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  cr_expect_eq(slice_out.backend_cache, cached, "the second launch reuses the sub-buffer");
  float out[100];
  OCL_OK(server->vtable->sync(server, st.stream));
  cr_expect_eq(atomic_load(&slice_out.refcount), 1, "pins released once the launch completed");
  cr_expect_eq(atomic_load(&page.slice.refcount), 1);
  OCL_OK(server->vtable->read(server, st.stream, &bindings[2], out, bytes));
  for (uint32_t i = 0; i < n; ++i)
    cr_expect_eq(out[i], (1.0f + i) + (1000.0f + i) + 5.0f, "out[%u] = %f", i, out[i]);
  /* New info words: the cached info buffer is not reused for different values. */
  const uint64_t info2[2] = {n / 2, 7};
  launch.info = info2;
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->vtable->read(server, st.stream, &bindings[2], out, bytes));
  for (uint32_t i = 0; i < n; ++i) {
    float expected = (1.0f + i) + (1000.0f + i) + (i < n / 2 ? 7.0f : 5.0f);
    cr_expect_eq(out[i], expected, "out[%u] = %f, expected %f", i, out[i], expected);
  }
  cr_expect_not(cubert_stream_errors_pending(st.errors));
  ocl_test_stream_free(server, &st);
  server->vtable->slice_cache_release(server, &slice_b);
  server->vtable->slice_cache_release(server, &slice_out);
  cr_expect_null(slice_b.backend_cache);
  ocl_test_buffer_free(server, &page);
  ocl_test_server_destroy(server);
}

Test(opencl_launch, view_at_an_unaligned_offset_is_unsupported) {
  cubert_server *server = ocl_test_server();
  uint64_t align = server->properties.memory.alignment;
  if (align <= 4)
    cr_skip_test("the device aligns sub-buffers to %llu bytes", (unsigned long long)align);
  ocl_test_buffer buf;
  ocl_test_buffer_init(server, &buf, 4 * align, 0, 4 * align);
  cubert_binding b = {&buf.slice, 4, 16};
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  cubert_launch launch = {.kernel = &kIota,
                          .cube_count = {1, 1, 1},
                          .cube_dim = {4, 1, 1},
                          .bindings = &b,
                          .binding_count = 1};
  cubert_status s = server->vtable->launch(server, st.stream, &launch);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_UNSUPPORTED_IO_OPERATION);
  char offset_text[32], align_text[64];
  snprintf(offset_text, sizeof(offset_text), "offset 4 ");
  snprintf(align_text, sizeof(align_text), "(%llu bytes", (unsigned long long)align);
  cr_expect(
      strstr(cubert_status_message(s), offset_text) && strstr(cubert_status_message(s), align_text),
      "names offset and alignment: %s", cubert_status_message(s));
  cubert_status_free(s);
  /* Reads and writes use offsets directly. */
  uint32_t in[4] = {1, 2, 3, 4}, back[4] = {0};
  OCL_OK(server->vtable->write(server, st.stream, &b, in, sizeof(in)));
  OCL_OK(server->vtable->read(server, st.stream, &b, back, sizeof(back)));
  cr_expect_arr_eq(back, in, sizeof(in));
  ocl_test_stream_free(server, &st);
  ocl_test_buffer_free(server, &buf);
  ocl_test_server_destroy(server);
}

Test(opencl_launch, three_dimensional_and_dynamic_cube_counts) {
  cubert_server *server = ocl_test_server();
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  enum { N = 4 * 2 * 3 * 2 * 2 * 2 };
  ocl_test_buffer out, counts;
  ocl_test_buffer_init(server, &out, N * 4, 0, N * 4);
  ocl_test_buffer_init(server, &counts, 64, 0, 12);
  cubert_binding b = ocl_test_binding(&out), cb = ocl_test_binding(&counts);
  uint32_t zeros[N] = {0}, values[N];
  OCL_OK(server->vtable->write(server, st.stream, &b, zeros, sizeof(zeros)));
  cubert_launch launch = {.kernel = &kIota,
                          .cube_count = {2, 2, 2},
                          .cube_dim = {4, 2, 3},
                          .bindings = &b,
                          .binding_count = 1};
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->vtable->read(server, st.stream, &b, values, sizeof(values)));
  for (uint32_t i = 0; i < N; ++i)
    cr_expect_eq(values[i], i + 1, "3-D: out[%u] = %u", i, values[i]);

  /* Dynamic: the count comes from the buffer when the launch executes (in stream order, so
     the write before it is seen). */
  OCL_OK(server->vtable->write(server, st.stream, &b, zeros, sizeof(zeros)));
  uint32_t dyn[3] = {3, 1, 1};
  OCL_OK(server->vtable->write(server, st.stream, &cb, dyn, sizeof(dyn)));
  cubert_launch dynamic = {.kernel = &kIota,
                           .cube_count = {999, 999, 999},
                           .dynamic_count = &cb,
                           .cube_dim = {8, 1, 1},
                           .bindings = &b,
                           .binding_count = 1};
  OCL_OK(server->vtable->launch(server, st.stream, &dynamic));
  OCL_OK(server->vtable->read(server, st.stream, &b, values, sizeof(values)));
  for (uint32_t i = 0; i < N; ++i)
    cr_expect_eq(values[i], i < 24 ? i + 1 : 0, "dynamic: out[%u] = %u", i, values[i]);
  /* A zero dynamic count runs nothing. */
  OCL_OK(server->vtable->write(server, st.stream, &b, zeros, sizeof(zeros)));
  dyn[1] = 0;
  OCL_OK(server->vtable->write(server, st.stream, &cb, dyn, sizeof(dyn)));
  OCL_OK(server->vtable->launch(server, st.stream, &dynamic));
  OCL_OK(server->vtable->read(server, st.stream, &b, values, sizeof(values)));
  cr_expect_arr_eq(values, zeros, sizeof(zeros));
  cr_expect_not(cubert_stream_errors_pending(st.errors));
  ocl_test_stream_free(server, &st);
  ocl_test_buffer_free(server, &out);
  ocl_test_buffer_free(server, &counts);
  ocl_test_server_destroy(server);
}

Test(opencl_launch, execution_mode_defines_and_argument_count) {
  cubert_server *server = ocl_test_server();
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  ocl_test_buffer out;
  ocl_test_buffer_init(server, &out, 64, 0, 4);
  cubert_binding b = ocl_test_binding(&out);
  const cubert_execution_mode modes[3] = {CUBERT_EXECUTION_CHECKED, CUBERT_EXECUTION_VALIDATE,
                                          CUBERT_EXECUTION_UNCHECKED};
  const int expected[3] = {1, 1, 0};
  for (int i = 0; i < 3; ++i) {
    cubert_launch launch = {.kernel = &kMode,
                            .cube_count = {1, 1, 1},
                            .cube_dim = {1, 1, 1},
                            .bindings = &b,
                            .binding_count = 1,
                            .mode = modes[i]};
    OCL_OK(server->vtable->launch(server, st.stream, &launch));
    int v = -1;
    OCL_OK(server->vtable->read(server, st.stream, &b, &v, sizeof(v)));
    cr_expect_eq(v, expected[i], "mode %d: CUBERT_CHECKED gave %d", (int)modes[i], v);
  }
  /* One info word more than the kernel declares. */
  const uint64_t info[1] = {1};
  cubert_launch wrong = {.kernel = &kMode,
                         .cube_count = {1, 1, 1},
                         .cube_dim = {1, 1, 1},
                         .bindings = &b,
                         .binding_count = 1,
                         .info = info,
                         .info_count = 1};
  cubert_status s = server->vtable->launch(server, st.stream, &wrong);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT, "%s", cubert_status_message(s));
  cr_expect(strstr(cubert_status_message(s), "declares 1 arguments") != NULL, "%s",
            cubert_status_message(s));
  cubert_status_free(s);
  ocl_test_stream_free(server, &st);
  ocl_test_buffer_free(server, &out);
  ocl_test_server_destroy(server);
}

static void roundtrip(cubert_server *server, int staging, uint64_t size, uint64_t offset) {
  cubert_ocl_server_set_staging(server, staging);
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  ocl_test_buffer buf;
  ocl_test_buffer_init(server, &buf, size + offset, offset, size);
  cubert_binding b = ocl_test_binding(&buf);
  unsigned char *in = malloc(size), *expected = malloc(size), *back = malloc(size);
  for (uint64_t i = 0; i < size; ++i) in[i] = (unsigned char)(i * 7u + (i >> 12) + staging);
  memcpy(expected, in, size);
  memset(back, 0, size);
  OCL_OK(server->vtable->write(server, st.stream, &b, in, size));
  memset(in, 0xee, size); /* the source may be reused as soon as write returns */
  OCL_OK(server->vtable->read(server, st.stream, &b, back, size));
  cr_expect_eq(memcmp(expected, back, size), 0, "staging %d, %llu bytes at offset %llu differ",
               staging, (unsigned long long)size, (unsigned long long)offset);
  cr_expect_not(cubert_stream_errors_pending(st.errors));
  free(in);
  free(expected);
  free(back);
  ocl_test_stream_free(server, &st);
  ocl_test_buffer_free(server, &buf);
}

Test(opencl_launch, reads_and_writes_plain_and_staged) {
  cubert_server *server = ocl_test_server();
  uint64_t align = server->properties.memory.alignment;
  const uint64_t sizes[] = {4, 4096, (1u << 20) - 4, 1u << 20, (5u << 20) + 12, 40u << 20};
  for (int staging = 0; staging < 2; ++staging)
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
      roundtrip(server, staging, sizes[i], i % 2 ? align : 0);
  ocl_test_server_destroy(server);
}

Test(opencl_launch, async_reads_and_events_between_streams) {
  cubert_server *server = ocl_test_server();
  enum { N = 256 };
  ocl_test_fixture f; /* its stream is stream a */
  ocl_test_fixture_init(&f, server, &kIota, N / 64, 64, N * 4);
  ocl_test_stream b;
  ocl_test_stream_init(server, &b);
  ocl_test_stream *a = &f.st;
  cubert_binding ob = f.ob;
  OCL_OK(server->vtable->launch(server, a->stream, &f.launch));
  cubert_event *event = NULL;
  OCL_OK(server->vtable->event_record(server, a->stream, &event));
  OCL_OK(server->vtable->event_wait(server, b.stream, event));
  OCL_OK(server->vtable->event_sync(server, event));
  cr_expect(server->vtable->event_done(server, event));
  server->vtable->event_release(server, event);
  uint32_t values[N] = {0};
  cubert_event *read = NULL;
  OCL_OK(server->transfers->read_async(server, b.stream, &ob, values, sizeof(values), &read));
  cr_assert_not_null(read);
  OCL_OK(server->vtable->event_sync(server, read));
  cr_expect(server->vtable->event_done(server, read));
  server->vtable->event_release(server, read);
  for (uint32_t i = 0; i < N; ++i) cr_expect_eq(values[i], i + 1, "out[%u] = %u", i, values[i]);
  OCL_OK(server->vtable->sync(server, a->stream));
  OCL_OK(server->vtable->sync(server, b.stream));
  cr_expect_eq(atomic_load(&f.out.slice.refcount), 1,
               "the launch's and the read's pins were released");
  cubert_server_stream *streams[2] = {a->stream, b.stream};
  for (int i = 0; i < 2; ++i) {
    cl_command_queue queue = NULL;
    OCL_OK(cubert_ocl_stream_queue(server, streams[i], &queue));
    cr_expect_not_null(queue);
  }
  cl_mem mem = NULL;
  size_t offset = 99;
  OCL_OK(cubert_ocl_binding_mem(server, &ob, &mem, &offset));
  cr_expect_eq(mem, f.out.page.native);
  cr_expect_eq(offset, 0);
  ocl_test_stream_free(server, &b);
  ocl_test_fixture_free(&f);
}

Test(opencl_launch, interop_rejects_other_servers) {
  cubert_server_vtable other_vtable = {0};
  cubert_server fake = {.vtable = &other_vtable};
  snprintf(fake.properties.backend, sizeof(fake.properties.backend), "cpu");
  cl_context context = NULL;
  cubert_status s = cubert_ocl_server_context(&fake, &context, NULL);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cr_expect(strstr(cubert_status_message(s), "'cpu'") != NULL, "%s", cubert_status_message(s));
  cubert_status_free(s);
  s = cubert_ocl_server_context(NULL, &context, NULL);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
}

Test(opencl_launch, profiling_nested_and_overlapping_tokens) {
  cubert_server *server = ocl_test_server();
  if (!(server->properties.features & CUBERT_FEATURE_PROFILING))
    cr_skip_test("device '%s' has no event profiling", server->properties.name);
  enum { N = 1 << 16 };
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &kIota, N / 64, 64, N * 4);
  ocl_test_stream st = f.st;
  cubert_launch launch = f.launch;
  OCL_OK(server->vtable->launch(server, st.stream, &launch)); /* builds outside the regions */
  OCL_OK(server->vtable->sync(server, st.stream));
  cubert_profile_duration outer, inner, empty = {.duration_ns = 99}, late;
  OCL_OK(server->profiler->begin(server, st.stream, 1));
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->profiler->begin(server, st.stream, 2));
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->profiler->end(server, st.stream, 2, &inner));
  cr_expect_eq(inner.method, CUBERT_TIMING_DEVICE);
  OCL_OK(server->profiler->begin(server, st.stream, 3)); /* overlaps 1, ends after it */
  OCL_OK(server->profiler->begin(server, st.stream, 4)); /* nothing inside */
  OCL_OK(server->profiler->end(server, st.stream, 4, &empty));
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->profiler->end(server, st.stream, 1, &outer));
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->profiler->end(server, st.stream, 3, &late));
  cr_expect_gt(inner.duration_ns, 0);
  cr_expect_geq(outer.duration_ns, inner.duration_ns, "outer %llu ns < inner %llu ns",
                (unsigned long long)outer.duration_ns, (unsigned long long)inner.duration_ns);
  cr_expect_eq(empty.duration_ns, 0, "a region without commands lasts 0 ns");
  cr_expect_gt(late.duration_ns, 0);
  /* The ticks: on the device's clock, the inner region inside the outer one, the late one
     ending after both. */
  cr_expect_eq(inner.end_ticks - inner.start_ticks, inner.duration_ns);
  cr_expect_leq(outer.start_ticks, inner.start_ticks);
  cr_expect_geq(outer.end_ticks, inner.end_ticks);
  cr_expect_gt(late.end_ticks, outer.end_ticks);
  cubert_status s = server->profiler->end(server, st.stream, 1, &outer);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_NOT_REGISTERED, "%s", cubert_status_message(s));
  cubert_status_free(s);
  s = server->profiler->end(server, st.stream, 77, &outer);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_NOT_REGISTERED);
  cubert_status_free(s);
  ocl_test_fixture_free(&f);
}

/* A launch waits on a user event; while it is blocked its binding stays pinned; once the
   event completes the pin is released at the next sync. */
Test(opencl_launch, bindings_stay_pinned_until_completion) {
  cubert_server *server = ocl_test_server();
  ocl_test_fixture f;
  cl_event gate = gated_iota_fixture(&f, server);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  OCL_OK(server->vtable->flush(server, f.st.stream));
  cr_expect_eq(atomic_load(&f.out.slice.refcount), 2, "the blocked launch pins its binding");
  cr_assert_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_expect_eq(atomic_load(&f.out.slice.refcount), 1);
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  clReleaseEvent(gate);
  ocl_test_fixture_free(&f);
}

/* Without any sync, pins of launches are still released: batches close with markers as they
   grow, and a later flush observes their completion. */
Test(opencl_launch, pins_are_released_without_sync) {
  cubert_server *server = ocl_test_server();
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &kIota, 1, 64, 256);
  for (int i = 0; i < 600; ++i) OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  cr_expect_leq(atomic_load(&f.out.slice.refcount), 601);
  cr_expect_gt(atomic_load(&f.out.slice.refcount), 1, "queued launches pin their binding");
  cubert_event *event = NULL;
  OCL_OK(server->vtable->event_record(server, f.st.stream, &event));
  OCL_OK(server->vtable->event_sync(server, event));
  server->vtable->event_release(server, event);
  /* The work completed, but the last pins are in the open batch (a recorded event does not
     close it): a flush closes it with a marker, and a flush after that marker completed
     releases them. */
  OCL_OK(server->vtable->flush(server, f.st.stream));
  for (int i = 0; i < 200 && atomic_load(&f.out.slice.refcount) > 1; ++i) {
    nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    OCL_OK(server->vtable->flush(server, f.st.stream));
  }
  cr_expect_eq(atomic_load(&f.out.slice.refcount), 1, "%u pins left after the work completed",
               (unsigned)atomic_load(&f.out.slice.refcount));
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  ocl_test_fixture_free(&f);
}

/* An OpenCL error raised after the launch was queued (a user event set to a negative status
   that the launch waits for) is pushed into the stream's error queue, and the pins of the
   failed commands are still released. */
Test(opencl_launch, asynchronous_error_lands_in_the_stream_errors) {
  cubert_server *server = ocl_test_server();
  ocl_test_fixture f;
  cl_event gate = gated_iota_fixture(&f, server);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  cr_assert_eq(clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES), CL_SUCCESS);
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_assert(cubert_stream_errors_pending(f.st.errors), "the failure reached the stream's errors");
  cubert_status errors = cubert_stream_errors_take(f.st.errors);
  cr_expect_eq(cubert_status_code(errors), CUBERT_CODE_SERVER_UNHEALTHY);
  /* The cause only: the launch behind the failed wait fails as a consequence. */
  cr_expect_eq(cubert_status_error_count(errors), 1);
  cubert_status cause = cubert_status_error_at(errors, 0);
  cr_expect(cubert_status_code(cause) == CUBERT_CODE_EXECUTION ||
                cubert_status_code(cause) == CUBERT_CODE_OUT_OF_MEMORY,
            "%s", cubert_status_message(cause));
  const char *m = cubert_status_message(errors);
  cr_expect(strstr(m, "execution status") != NULL && strstr(m, "external OpenCL event") != NULL,
            "the error names the failed command and its status: %s", m);
  cr_log_info("asynchronous error as reported: %s", m);
  cubert_status_free(errors);
  /* Later work on the stream runs again once the failure was reported. */
  expect_recovered(&f, "failed commands release their pins");
  clReleaseEvent(gate);
  ocl_test_fixture_free(&f);
}

static void fail_gate(void *user) {
  cr_assert_eq(clSetUserEventStatus((cl_event)user, CL_OUT_OF_RESOURCES), CL_SUCCESS);
}

/* A command enqueued without an event that fails while the sync waits is reported by the sync.
   Here the launch fails because the caller's own command just before it on the stream's queue
   (interop) fails: cubert holds no event of either, and PoCL's clFinish returns CL_SUCCESS
   after such a failure, so only the marker that sync waits on sees it. The test hook fails the
   caller's command right after the sync enqueued its marker. */
Test(opencl_launch, failure_of_a_command_without_event_is_reported_at_sync, .timeout = 60) {
  if (!CUBERT_OCL_SYNC_MARKER)
    cr_skip_test("built with CUBERT_OCL_SYNC_MARKER=0: sync is a plain clFinish");
  cubert_server *server = ocl_test_server();
  if (!cubert_ocl_server_of(server)->sync_marker) {
    ocl_test_server_destroy(server);
    cr_skip_test(
        "sync uses a marker only on PoCL, whose clFinish hides failures; this driver's "
        "clFinish reports them");
  }
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &kIota, 1, 64, 256);
  cl_command_queue queue = NULL;
  OCL_OK(cubert_ocl_stream_queue(server, f.st.stream, &queue));
  /* Compiled first, so that the failing run below holds only the barrier and the launch. */
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cl_event gate = ocl_test_user_event(server);
  cl_event own = NULL; /* the caller's event; cubert never sees it */
  cr_assert_eq(clEnqueueBarrierWithWaitList(queue, 1, &gate, &own), CL_SUCCESS);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  s->sync_marker_hook = fail_gate;
  s->sync_marker_user = gate;
  OCL_OK(server->vtable->sync(server, f.st.stream));
  s->sync_marker_hook = NULL;
  cr_assert(cubert_stream_errors_pending(f.st.errors), "the failed launch was not reported");
  cubert_status errors = cubert_stream_errors_take(f.st.errors);
  cr_expect_eq(cubert_status_code(errors), CUBERT_CODE_SERVER_UNHEALTHY);
  cr_expect_eq(cubert_status_error_count(errors), 1);
  const char *m = cubert_status_message(errors);
  cr_expect(strstr(m, "kernel 'iota'") != NULL && strstr(m, "execution status") != NULL,
            "the error names the last command without an event and its status: %s", m);
  cr_log_info("failure without an event as reported: %s", m);
  cubert_status_free(errors);
  /* The stream works again, and a clean run reports nothing. */
  expect_recovered(&f, "the failed launch released its pin");
  clReleaseEvent(own);
  clReleaseEvent(gate);
  ocl_test_fixture_free(&f);
}

static void count_marker(void *user) {
  ++*(int *)user;
}

/* The sync marker is only for a stream whose queue the caller got (cubert_opencl_queue): on
   any other stream only cubert's commands run, whose failures events see, and a sync is a plain
   clFinish (the marker cost 16-17 us per sync on a 16-core host's PoCL). */
Test(opencl_launch, sync_marker_only_on_a_shared_queue) {
  if (!CUBERT_OCL_SYNC_MARKER)
    cr_skip_test("built with CUBERT_OCL_SYNC_MARKER=0: sync is a plain clFinish");
  cubert_server *server = ocl_test_server();
  if (!cubert_ocl_server_of(server)->sync_marker) {
    ocl_test_server_destroy(server);
    cr_skip_test("sync uses a marker only on PoCL");
  }
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &kIota, 1, 64, 256);
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  int markers = 0;
  s->sync_marker_hook = count_marker;
  s->sync_marker_user = &markers;
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_expect_eq(markers, 0, "a stream cubert alone uses synced through a marker");
  cl_command_queue queue = NULL;
  OCL_OK(cubert_ocl_stream_queue(server, f.st.stream, &queue));
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_expect_eq(markers, 1, "the shared queue's unobserved launch was not checked by a marker");
  s->sync_marker_hook = NULL;
  expect_recovered(&f, "the launches released their pins");
  ocl_test_fixture_free(&f);
}

/* A failed wait followed by several launches: the failure reaches every launch queued behind
   the wait. PoCL 3.1 aborts the process when a failure propagates from one command without an
   event into another, so on PoCL commands queued behind an unresolved wait carry events; on
   any driver the cause is reported once and the stream recovers. */
Test(opencl_launch, failed_wait_followed_by_many_launches) {
  cubert_server *server = ocl_test_server();
  ocl_test_fixture f;
  cl_event gate = gated_iota_fixture(&f, server);
  for (int i = 0; i < 4; ++i) OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  cr_assert_eq(clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES), CL_SUCCESS);
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_assert(cubert_stream_errors_pending(f.st.errors));
  cubert_status errors = cubert_stream_errors_take(f.st.errors);
  cr_expect_eq(cubert_status_error_count(errors), 1, "the cause only: %s",
               cubert_status_message(errors));
  cr_expect(strstr(cubert_status_message(errors), "external OpenCL event") != NULL, "%s",
            cubert_status_message(errors));
  cubert_status_free(errors);
  cr_expect_eq(atomic_load(&f.out.slice.refcount), 1, "failed commands release their pins");
  /* Once the wait resolved, launches are back to the path without events, and run. */
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  cr_expect_not_null(f.st.stream->unobserved_what,
                     "a launch after the resolved wait carries no event");
  OCL_OK(server->vtable->sync(server, f.st.stream));
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  expect_iota_64(&f);
  clReleaseEvent(gate);
  ocl_test_fixture_free(&f);
}

static cl_uint event_refcount(cl_event event) {
  cl_uint count = 0;
  cr_assert_eq(clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof(count), &count, NULL),
               CL_SUCCESS);
  return count;
}

/* A wait's barrier carries an event only on PoCL (whose 3.1 aborts when a failure propagates
   through commands without events); on every other driver the stream holds the awaited event
   itself, which costs no new event and reports a failed dependency the same way (the tests
   above; they run on Oclgrind as unit_oclgrind_waits). Either way the stream lets go of every
   event once the wait completed, and the launch behind it ran. */
Test(opencl_launch, a_wait_holds_the_awaited_event_or_its_barriers_event) {
  cubert_server *server = ocl_test_server();
  const int barrier_event = cubert_ocl_server_of(server)->events_behind_waits;
  ocl_test_fixture f;
  cl_event gate = gated_iota_fixture(&f, server);
  cubert_server_stream *st = f.st.stream;
  cr_assert_eq(st->count, 1, "the wait is in the stream's FIFO");
  const cubert_ocl_pending *wait = &st->pending[(st->head + st->count - 1) % st->capacity];
  if (barrier_event) {
    cr_expect_neq(wait->event, gate, "PoCL: the barrier's own event");
    cr_expect(wait->fallible, "PoCL: launches behind the unresolved wait carry events");
  } else {
    cr_expect_eq(wait->event, gate, "the awaited event itself, no barrier event");
    cr_expect_not(wait->fallible);
    cr_expect_eq(wait->pins.slice_count, 0, "the awaited event releases no pins");
    /* The caller's, the stream's, and any the driver's barrier keeps (Oclgrind: one). */
    cr_expect_geq(event_refcount(gate), 2, "the stream holds a reference");
  }
  OCL_OK(server->vtable->launch(server, st, &f.launch));
  cr_assert_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  OCL_OK(server->vtable->sync(server, st));
  cr_expect_eq(st->count, 0, "nothing left in flight after sync");
  cr_expect_eq(event_refcount(gate), 1, "the stream released the awaited event");
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  expect_iota_64(&f);
  clReleaseEvent(gate);
  ocl_test_fixture_free(&f);
}

/* Launches `count` cubes of one unit of iota (static, or dynamic through `counts` when given)
   and expects TOO_MANY_RESOURCES naming `requested` against `max`, before anything was
   queued: the stream stays clean and a valid launch still runs. */
static void expect_count_refused(ocl_test_fixture *f, const uint32_t count[3], uint64_t requested,
                                 uint64_t max, ocl_test_buffer *counts) {
  cubert_server *server = f->server;
  cubert_launch launch = f->launch;
  memcpy(launch.cube_count, count, sizeof(launch.cube_count));
  launch.cube_dim = (cubert_cube_dim){1, 1, 1};
  cubert_binding cb;
  if (counts) {
    cb = ocl_test_binding(counts);
    OCL_OK(server->vtable->write(server, f->st.stream, &cb, count, 12));
    launch.dynamic_count = &cb;
    launch.cube_count[0] = launch.cube_count[1] = launch.cube_count[2] = 1;
  }
  cubert_status s = server->vtable->launch(server, f->st.stream, &launch);
  cr_assert_not_null(s, "(%u, %u, %u) cubes were accepted", count[0], count[1], count[2]);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES, "%s",
               cubert_status_message(s));
  cr_expect_eq(cubert_status_requested(s), requested, "%s", cubert_status_message(s));
  cr_expect_eq(cubert_status_max(s), max, "%s", cubert_status_message(s));
  cubert_status_free(s);
  OCL_OK(server->vtable->sync(server, f->st.stream));
  cr_expect_not(cubert_stream_errors_pending(f->st.errors));
  expect_recovered(f, "pins after a refused launch");
}

/* Issue 10 #3: PoCL's CPU driver counts work-groups in 32 bits (its pthread scheduler asserts
   `max_wgs > 0` or crashes from 2^32 groups on), so a launch of more cubes in total than the
   device advertises is refused before it is queued, for static and dynamic counts. */
Test(opencl_launch, cube_counts_beyond_the_device_limits_are_refused) {
  cubert_server *server = ocl_test_server();
  const cubert_hardware_properties *hw = &server->properties.hardware;
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  char *platform = cubert_ocl_platform_string(s->platform, CL_PLATFORM_NAME);
  int pocl = strstr(platform, "Portable Computing Language") != NULL;
  free(platform);
  if (pocl) cr_expect_eq(hw->max_total_cubes, UINT32_MAX);
  uint64_t total = hw->max_total_cubes;
  if (!total) cr_skip_test("this device advertises no limit on the cubes of a launch");
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &kIota, 1, 64, 256);
  ocl_test_buffer counts;
  ocl_test_buffer_init(server, &counts, 64, 0, 12);
  const uint32_t huge[3] = {UINT32_MAX, UINT32_MAX, 1}; /* what PoCL asserted on */
  const uint32_t just_over[3] = {65536, 65536, 1};      /* 2^32 groups: PoCL crashed */
  expect_count_refused(&f, huge, (uint64_t)UINT32_MAX * UINT32_MAX, total, NULL);
  expect_count_refused(&f, just_over, 1ull << 32, total, NULL);
  expect_count_refused(&f, just_over, 1ull << 32, total, &counts);
  const uint32_t three[3] = {2048, 2048, 1025}; /* the product overflows no check */
  expect_count_refused(&f, three, 2048ull * 2048 * 1025, total, &counts);
  ocl_test_buffer_free(server, &counts);
  ocl_test_fixture_free(&f);
}

/* Pinned memory from host_alloc (with staging on: a mapped CL_MEM_ALLOC_HOST_PTR buffer) is
   known to every OpenCL server of the process, and large reads and writes from it go straight
   to the driver (no staging copy); the data must arrive either way, and a freed buffer's range
   is forgotten. */
Test(opencl_launch, transfers_from_pinned_memory_skip_the_staging_copy) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server_set_staging(server, 1);
  const uint64_t size = 12u << 20; /* above both staging thresholds */
  void *pinned = NULL;
  OCL_OK(cubert_ocl_host_alloc(server, size, &pinned));
  cr_assert_not_null(pinned);
  cr_expect(cubert_ocl_is_pinned(pinned, size));
  cr_expect(cubert_ocl_is_pinned((char *)pinned + 4096, size - 4096));
  cr_expect_not(cubert_ocl_is_pinned((char *)pinned + 4096, size), "a range past the end");
  unsigned char stack_bytes[64];
  cr_expect_not(cubert_ocl_is_pinned(stack_bytes, sizeof stack_bytes));

  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  ocl_test_buffer buf;
  ocl_test_buffer_init(server, &buf, size, 0, size);
  cubert_binding b = ocl_test_binding(&buf);
  unsigned char *p = pinned;
  for (uint64_t i = 0; i < size; ++i) p[i] = (unsigned char)(i * 13u + (i >> 16));
  OCL_OK(server->vtable->write(server, st.stream, &b, pinned, size));
  memset(pinned, 0, size);
  OCL_OK(server->vtable->read(server, st.stream, &b, pinned, size));
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < size; ++i) wrong += p[i] != (unsigned char)(i * 13u + (i >> 16));
  cr_expect_eq(wrong, 0,
               "%llu of %llu bytes differ after a write and a read through pinned "
               "memory",
               (unsigned long long)wrong, (unsigned long long)size);
  cr_expect_not(cubert_stream_errors_pending(st.errors));
  ocl_test_stream_free(server, &st);
  ocl_test_buffer_free(server, &buf);
  cubert_ocl_host_free(server, pinned);
  cr_expect_not(cubert_ocl_is_pinned(pinned, 4096), "freed pinned memory is still listed");
  ocl_test_server_destroy(server);
}
