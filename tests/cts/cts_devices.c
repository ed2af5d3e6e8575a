/* Conformance: one device instance per device (clients of one device share handles; "!private"
   instances are isolated) and cubert_client_to_client between the device under test and every
   device this machine has (the CPU server, each OpenCL device, the device under test itself and
   a private instance of it), both directions, odd sizes and offsets. */
#include <cubert/server.h>
#include <pthread.h>

#include "cts.h"
#include "cubert/backend.h"

TestSuite(devices, .init = cts_setup, .fini = cts_teardown);

/* ---- shared instances ---------------------------------------------------------------------- */

Test(devices, clients_of_one_device_share_handles_and_release_in_any_order) {
  for (int order = 0; order < 2; ++order) {
    cubert_client *a = NULL, *b = NULL;
    ASSERT_OK(cubert_client_create(cts_device(), &a));
    ASSERT_OK(cubert_client_create(cts_device(), &b));
    uint32_t v[5] = {1, 2, 3, 4, 5}, back[5] = {0};
    cubert_handle *h = NULL;
    ASSERT_OK(cubert_client_create_buffer(a, v, sizeof v, &h));
    ASSERT_OK(cubert_client_read(b, h, back, sizeof back));
    cr_assert_eq(back[4], 5);
    /* a launch on b over a's handle, read on a */
    uint64_t info[2] = {5, 42};
    cubert_kernel_args args = {&h, 1, info, 2};
    ASSERT_OK(cubert_client_launch(b, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(cts_dim() < 5 ? cts_dim() : 5, 1, 1),
                                   &args));
    ASSERT_OK(cubert_client_read(a, h, back, sizeof back));
    for (int i = 0; i < 5 && cts_dim() >= 5; ++i) cr_assert_eq(back[i], 42);
    cubert_memory_usage ua, ub;
    ASSERT_OK(cubert_client_memory_usage(a, &ua));
    ASSERT_OK(cubert_client_memory_usage(b, &ub));
    cr_assert_eq(ua.bytes_in_use, ub.bytes_in_use, "one instance, one count");
    if (order == 0) {
      cubert_client_release(a);
      ASSERT_OK(cubert_client_read(b, h, back, sizeof back));
      cubert_client_release(b);
      cubert_handle_release(h);
    } else {
      cubert_handle_release(h);
      cubert_client_release(b);
      ASSERT_OK(cubert_client_sync(a));
      cubert_client_release(a);
    }
  }
}

Test(devices, default_and_indexed_selectors_name_one_instance) {
  const char *other = cts_is_cpu() ? "cpu:0" : NULL;
  if (!other) {
    /* "opencl" is the first GPU, else the first device: find its index */
    const cubert_device_properties *p = cubert_client_properties(cts_client);
    const cubert_backend *const *b = cubert_backends();
    static char sel[64];
    for (size_t i = 0; b[i] && !other; ++i) {
      if (strcmp(b[i]->name, "opencl") != 0) continue;
      cubert_device_info infos[16];
      size_t n = 0;
      ASSERT_OK(b[i]->enumerate(infos, 16, &n));
      for (size_t k = 0; k < n && k < 16 && !other; ++k)
        if (infos[k].available && strcmp(infos[k].properties.name, p->name) == 0) {
          snprintf(sel, sizeof sel, "opencl:%zu", k);
          other = sel;
        }
    }
    cr_assert_not_null(other);
  }
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(other, &c));
  uint32_t v = 9, back = 0;
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(c, &v, 4, &h));
  ASSERT_OK(cubert_client_read(cts_client, h, &back, 4));
  cr_assert_eq(back, 9, "\"%s\" and \"%s\" are one device", other, cts_device());
  cubert_handle_release(h);
  cubert_client_release(c);
}

typedef struct thread_job {
  cubert_handle *h;
  uint32_t value;
  cubert_status status;
} thread_job;

/* Another thread makes its own client of the device, writes the shared handle with a launch
   and reads it back. */
static void *thread_body(void *arg) {
  thread_job *job = arg;
  cubert_client *c = NULL;
  job->status = cubert_client_create(cts_device(), &c);
  if (job->status) return NULL;
  uint64_t info[2] = {256, job->value};
  cubert_kernel_args args = {&job->h, 1, info, 2};
  job->status = cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                     cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args);
  uint32_t back[256];
  if (!job->status) job->status = cubert_client_read(c, job->h, back, sizeof back);
  if (!job->status && back[cts_dim() - 1] != job->value)
    job->status = cubert_status_make(CUBERT_CODE_GENERIC, "read %u", back[cts_dim() - 1]);
  cubert_client_release(c);
  return NULL;
}

Test(devices, handles_shared_by_clients_on_other_threads) {
  enum { THREADS = 4 };
  pthread_t t[THREADS];
  thread_job jobs[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (thread_job){NULL, 100 + (uint32_t)i, NULL};
    ASSERT_OK(cubert_client_empty(cts_client, 256 * 4, &jobs[i].h));
    cr_assert_eq(pthread_create(&t[i], NULL, thread_body, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], NULL);
    ASSERT_OK(jobs[i].status);
    uint32_t back[256];
    ASSERT_OK(cubert_client_read(cts_client, jobs[i].h, back, sizeof back));
    cr_assert_eq(back[cts_dim() - 1], 100 + (uint32_t)i);
    cubert_handle_release(jobs[i].h);
  }
}

Test(devices, private_instance_is_isolated) {
  cubert_client *p = NULL, *q = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &p));
  ASSERT_OK(cubert_client_create(cts_private_device(), &q));
  cubert_memory_usage before, mine, after;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &before));
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(p, 1 << 20, &h));
  ASSERT_OK(cubert_client_memory_usage(p, &mine));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_geq(mine.bytes_in_use, 1 << 20);
  cr_assert_eq(after.bytes_in_use, before.bytes_in_use, "the shared instance counted it");
  uint32_t back = 0;
  ASSERT_CODE(cubert_client_read(cts_client, h, &back, 4), CUBERT_CODE_NOT_FOUND,
              "another device instance");
  ASSERT_CODE(cubert_client_read(q, h, &back, 4), CUBERT_CODE_NOT_FOUND, "another device instance");
  ASSERT_OK(cubert_client_read(p, h, &back, 4));
  cr_assert_str_eq(cubert_client_properties(p)->name, cubert_client_properties(cts_client)->name);
  cubert_handle_release(h);
  cubert_client_release(p);
  cubert_client_release(q);
}

Test(devices, selector_options_are_checked) {
  cubert_client *c = NULL;
  ASSERT_CODE(cubert_client_create("cpu!shared", &c), CUBERT_CODE_INVALID_ARGUMENT, "!private");
  cr_assert_null(c);
  ASSERT_CODE(cubert_client_create("cpu:3!private", &c), CUBERT_CODE_NOT_FOUND, NULL);
  ASSERT_OK(cubert_client_create("!private", &c)); /* the default device, privately */
  cubert_client_release(c);
}

/* ---- to_client ----------------------------------------------------------------------------- */

/* Every device of this machine, as selectors (the shared instance of each). */
static size_t all_devices(char out[][64], size_t capacity) {
  size_t count = 0;
  const cubert_backend *const *b = cubert_backends();
  for (size_t i = 0; b[i]; ++i) {
    cubert_device_info infos[16];
    size_t n = 0;
    cubert_status s = b[i]->enumerate(infos, 16, &n);
    if (s) {
      cubert_status_free(s);
      continue;
    }
    for (size_t k = 0; k < n && k < 16 && count < capacity; ++k)
      if (infos[k].available) snprintf(out[count++], 64, "%s:%zu", b[i]->name, k);
  }
  return count;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = (uint8_t)(x >> 24);
  }
}

/* to_client of [offset, offset+size) of a `total`-byte buffer from src to dst, checked. */
static void check_copy(cubert_client *src, cubert_client *dst, size_t total, size_t offset,
                       size_t size, const char *what) {
  uint8_t *data = malloc(total ? total : 1), *back = malloc(size ? size : 1);
  pattern(data, total, (uint32_t)(total + offset));
  cubert_handle *h = NULL, *out = NULL;
  ASSERT_OK(cubert_client_create_buffer(src, data, total, &h));
  cubert_status s = cubert_client_to_client_range(src, h, offset, size, dst, &out);
  cr_assert_null(s, "%s: %zu bytes at %zu of %zu: %s", what, size, offset, total,
                 cubert_status_message(s));
  cr_assert_eq(cubert_handle_size(out), size);
  cubert_handle_release(h); /* the copy owns its bytes */
  ASSERT_OK(cubert_client_read(dst, out, back, size));
  cr_assert(memcmp(back, data + offset, size) == 0, "%s: %zu bytes at %zu of %zu differ", what,
            size, offset, total);
  cubert_handle_release(out);
  free(data);
  free(back);
}

/* Both directions between the device under test and `other`, for sizes and offsets. */
static void check_pair(const char *other_selector) {
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_create(other_selector, &other));
  static const size_t sizes[] = {0, 1, 3, 4099, 1000003, (37u << 20) + 5};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    size_t n = sizes[i];
    char what[160];
    snprintf(what, sizeof what, "%s -> %s", cts_device(), other_selector);
    check_copy(cts_client, other, n, 0, n, what);
    snprintf(what, sizeof what, "%s -> %s", other_selector, cts_device());
    check_copy(other, cts_client, n, 0, n, what);
    if (n > 8) {
      check_copy(other, cts_client, n, 7, n - 8, what); /* odd offset and size */
      snprintf(what, sizeof what, "%s -> %s", cts_device(), other_selector);
      check_copy(cts_client, other, n, 1, n - 1, what);
    }
  }
  cubert_client_release(other);
}

Test(devices, to_client_within_one_instance, .timeout = 300) {
  check_pair(cts_device());
}

Test(devices, to_client_to_a_private_instance_of_the_device, .timeout = 300) {
  check_pair(cts_private_device());
}

Test(devices, to_client_between_every_device_pair, .timeout = 600) {
  char devices[16][64];
  size_t n = all_devices(devices, 16);
  cr_assert_gt(n, 0);
  for (size_t i = 0; i < n; ++i) check_pair(devices[i]);
}

/* write (a queued launch) -> to_client -> read, no sync in between, both ways. */
Test(devices, to_client_is_stream_ordered) {
  char devices[16][64];
  size_t n = all_devices(devices, 16);
  enum { N = 3 << 20 };
  uint32_t *back = malloc(N * 4);
  for (size_t d = 0; d <= n; ++d) {
    const char *sel = d < n ? devices[d] : cts_private_device();
    cubert_client *other = NULL;
    ASSERT_OK(cubert_client_create(sel, &other));
    for (int dir = 0; dir < 2; ++dir) {
      cubert_client *src = dir ? other : cts_client, *dst = dir ? cts_client : other;
      cubert_handle *h = NULL, *out = NULL;
      ASSERT_OK(cubert_client_empty(src, N * 4, &h));
      uint64_t info[2] = {N, 1234 + (uint64_t)dir};
      cubert_kernel_args args = {&h, 1, info, 2};
      const cubert_device_properties *p = cubert_client_properties(src);
      uint32_t dim = p->hardware.max_units_per_cube < 256 ? p->hardware.max_units_per_cube : 256;
      cubert_cube_count_selection sel_count;
      ASSERT_OK(cubert_cube_count_select(src, (N + dim - 1) / dim, &sel_count));
      ASSERT_OK(cubert_client_launch(src, &cubert_kernel_fill_u32, sel_count.cube_count,
                                     cubert_cube_dim_new_3d(dim, 1, 1), &args));
      ASSERT_OK(cubert_client_to_client(src, h, dst, &out));
      /* a later write of the source does not reach the copy */
      info[1] = 7;
      ASSERT_OK(cubert_client_launch(src, &cubert_kernel_fill_u32, sel_count.cube_count,
                                     cubert_cube_dim_new_3d(dim, 1, 1), &args));
      ASSERT_OK(cubert_client_read(dst, out, back, N * 4));
      for (size_t i = 0; i < N; i += 4099)
        cr_assert_eq(back[i], 1234u + (uint32_t)dir, "%s dir %d element %zu: %u", sel, dir, i,
                     back[i]);
      cr_assert_eq(back[N - 1], 1234u + (uint32_t)dir);
      cubert_handle_release(h);
      cubert_handle_release(out);
    }
    cubert_client_release(other);
  }
  free(back);
}

Test(devices, to_client_errors_name_both_devices) {
  cubert_client *other = NULL, *gone = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &other));
  ASSERT_OK(cubert_client_create(cts_private_device(), &gone));
  cubert_client_release(gone);
  uint32_t v[4] = {1, 2, 3, 4};
  cubert_handle *h = NULL, *foreign = NULL, *out = NULL, *dead = NULL;
  ASSERT_OK(cubert_client_create_buffer(cts_client, v, sizeof v, &h));
  ASSERT_OK(cubert_client_create_buffer(other, v, sizeof v, &foreign));
  ASSERT_OK(cubert_client_create_buffer(cts_client, v, sizeof v, &dead));
  cubert_handle_release(dead);
  const char *name = cubert_client_properties(cts_client)->name;
  ASSERT_CODE(cubert_client_to_client(cts_client, h, other, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out");
  ASSERT_CODE(cubert_client_to_client(cts_client, NULL, other, &out), CUBERT_CODE_INVALID_ARGUMENT,
              "src is NULL");
  ASSERT_CODE(cubert_client_to_client(cts_client, NULL, other, &out), CUBERT_CODE_INVALID_ARGUMENT,
              "!private");
  ASSERT_CODE(cubert_client_to_client(cts_client, NULL, other, &out), CUBERT_CODE_INVALID_ARGUMENT,
              name);
  ASSERT_CODE(cubert_client_to_client(NULL, h, other, &out), CUBERT_CODE_INVALID_ARGUMENT,
              "src_client");
  ASSERT_CODE(cubert_client_to_client(cts_client, h, NULL, &out), CUBERT_CODE_INVALID_ARGUMENT,
              "dst_client");
  ASSERT_CODE(cubert_client_to_client(gone, h, other, &out), CUBERT_CODE_NOT_FOUND, "src_client");
  ASSERT_CODE(cubert_client_to_client(cts_client, h, gone, &out), CUBERT_CODE_NOT_FOUND,
              "dst_client");
  ASSERT_CODE(cubert_client_to_client(cts_client, dead, other, &out), CUBERT_CODE_NOT_FOUND,
              "src was released");
  ASSERT_CODE(cubert_client_to_client(cts_client, foreign, other, &out), CUBERT_CODE_NOT_FOUND,
              "src belongs to device instance");
  ASSERT_CODE(cubert_client_to_client_range(cts_client, h, 12, 5, other, &out),
              CUBERT_CODE_INVALID_ARGUMENT, "go past the end of src (16 bytes)");
  ASSERT_CODE(cubert_client_to_client_range(cts_client, h, 17, 0, other, &out),
              CUBERT_CODE_INVALID_ARGUMENT, "to_client from");
  cr_assert_null(out);
  /* the edge of the range is fine */
  ASSERT_OK(cubert_client_to_client_range(cts_client, h, 16, 0, other, &out));
  cr_assert_eq(cubert_handle_size(out), 0);
  cubert_handle_release(out);
  ASSERT_OK(cubert_client_to_client_range(cts_client, h, 15, 1, other, &out));
  uint8_t last = 0;
  ASSERT_OK(cubert_client_read(other, out, &last, 1));
  cr_assert_eq(last, 0); /* the high byte of v[3] = 4, little-endian */
  cubert_handle_release(out);
  cubert_handle_release(h);
  cubert_handle_release(foreign);
  cubert_client_release(other);
}

/* The source written on another stream (a pinned view), copied from the calling thread's stream:
   the copy waits for that stream's write, on one instance and between instances. */
Test(devices, to_client_waits_for_a_write_on_another_stream) {
  cubert_client *view = NULL, *other = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 77, &view));
  ASSERT_OK(cubert_client_create(cts_private_device(), &other));
  enum { N = 1 << 20 };
  uint32_t *back = malloc(N * 4);
  cubert_client *dsts[2] = {cts_client, other};
  for (int d = 0; d < 2; ++d) {
    cubert_handle *h = NULL, *out = NULL;
    ASSERT_OK(cubert_client_empty(view, N * 4, &h));
    uint64_t info[2] = {N, 555 + (uint64_t)d};
    cubert_kernel_args args = {&h, 1, info, 2};
    ASSERT_OK(cubert_client_launch(view, &cubert_kernel_fill_u32, cts_cubes(N, cts_dim()),
                                   cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args));
    ASSERT_OK(cubert_client_to_client(cts_client, h, dsts[d], &out));
    ASSERT_OK(cubert_client_read(dsts[d], out, back, N * 4));
    cr_assert_eq(back[0], 555u + (uint32_t)d);
    cr_assert_eq(back[N - 1], 555u + (uint32_t)d);
    cubert_handle_release(out);
    cubert_handle_release(h);
  }
  free(back);
  cubert_client_release(other);
  cubert_client_release(view);
}

/* ---- device description (issue 25, item 3) ------------------------------------------------- */

/* The vector register bytes the CPU server's kernels run with on this machine: the test's own
   reading of the ISA (the baseline this test was compiled for, raised by what the CPU runs of
   the x86-64-v3/v4 kernel variants, where the library holds them: CUBERT_TEST_CPU_VARIANTS,
   tests/CMakeLists.txt; the sanitizer builds leave them out). */
static uint32_t cpu_isa_vector_bytes(void) {
#if defined(__AVX512F__)
  uint32_t bytes = 64;
#elif defined(__AVX__)
  uint32_t bytes = 32;
#else
  uint32_t bytes = 16;
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && CUBERT_TEST_CPU_VARIANTS
  __builtin_cpu_init();
  int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi2");
  int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512cd");
  if (v3 && bytes < 32) bytes = 32;
  if (v4 && bytes < 64) bytes = 64;
#endif
  return bytes;
}

/* seed-client.rs.txt, `features()` (the reference's Features: plane, atomics, dot products) and
   the vector sizes behind `io_optimized_vector_sizes`: the CPU server's values follow its ISA;
   an OpenCL device's are consistent with what the driver reports (OpenCL: a preferred double
   width is 0 without fp64, plane sizes span plane_size_min..max). */
Test(devices, description_features_vector_widths_and_planes_are_truthful) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  const cubert_vector_widths *w = &p->vector_widths;
  cr_assert(p->plane_size_count >= 1 && p->plane_size_count <= CUBERT_MAX_PLANE_SIZES,
            "plane_size_count %u", p->plane_size_count);
  for (uint32_t i = 1; i < p->plane_size_count; ++i)
    cr_assert_lt(p->plane_sizes[i - 1], p->plane_sizes[i], "plane sizes ascend");
  cr_assert_eq(p->plane_sizes[0], p->hardware.plane_size_min);
  cr_assert_eq(p->plane_sizes[p->plane_size_count - 1], p->hardware.plane_size_max);
  cr_assert(w->f32 >= 1 && w->i32 >= 1 && w->i8 >= 1, "f32 %u i32 %u i8 %u", w->f32, w->i32, w->i8);
  if (w->f64) cr_assert(p->features & CUBERT_FEATURE_FP64, "a double width without fp64");
  if (p->type == CUBERT_DEVICE_TYPE_CPU_SERVER) {
    uint32_t bytes = cpu_isa_vector_bytes();
    cr_assert_eq(w->f32 * 4, bytes, "f32 width %u lanes; the ISA's vectors are %u bytes", w->f32,
                 bytes);
    cr_assert_eq(w->i8, bytes);
    cr_assert_eq(w->i16 * 2, bytes);
    cr_assert_eq(w->i32 * 4, bytes);
    cr_assert_eq(w->i64 * 8, bytes);
    cr_assert_eq(w->f64 * 8, bytes);
    cr_assert_eq(w->f16, 0, "no fp16 on the CPU server");
    cr_assert_eq(p->plane_size_count, 1);
    cr_assert_eq(p->plane_sizes[0], 1);
    cr_assert_eq(p->features & (CUBERT_FEATURE_PLANE | CUBERT_FEATURE_ATOMIC_F32_ADD |
                                CUBERT_FEATURE_ATOMIC_F64_ADD),
                 0, "features 0x%x", p->features);
    cr_assert(p->features & CUBERT_FEATURE_ATOMIC64);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int vnni = __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
    cr_assert_eq(!!(p->features & CUBERT_FEATURE_DOT_PRODUCT_I8), vnni);
#endif
  } else {
    if (!(p->features & CUBERT_FEATURE_FP64)) cr_assert_eq(w->f64, 0);
    if (p->features & CUBERT_FEATURE_PLANE) cr_assert_geq(p->plane_sizes[0], 1);
  }
}

/* seed-client.rs.txt, `io_optimized_vector_sizes`: powers of two from min(load_width / bits,
   max_vector_size) down to 1. */
Test(devices, io_vector_sizes_follow_the_reference) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  const size_t elems[] = {1, 2, 4, 8};
  for (size_t e = 0; e < 4; ++e) {
    uint32_t sizes[16];
    size_t n = 0;
    ASSERT_OK(cubert_device_io_vector_sizes(p, elems[e], sizes, 16, &n));
    uint64_t max = p->hardware.load_width / (8 * elems[e]);
    if (max > p->hardware.max_vector_size) max = p->hardware.max_vector_size;
    if (max < 1) max = 1;
    cr_assert_geq(n, 1);
    cr_assert_eq(sizes[n - 1], 1);
    for (size_t i = 1; i < n; ++i) cr_assert_eq(sizes[i - 1], 2 * sizes[i]);
    if ((max & (max - 1)) == 0) cr_assert_eq(sizes[0], max, "elem %zu bytes", elems[e]);
  }
  if (p->type == CUBERT_DEVICE_TYPE_CPU_SERVER) { /* 512-bit loads, at most 16 lanes */
    uint32_t sizes[8];
    size_t n = 0;
    ASSERT_OK(cubert_device_io_vector_sizes(p, 8, sizes, 8, &n));
    cr_assert_eq(n, 4);
    cr_assert_eq(sizes[0], 8);
    ASSERT_OK(cubert_device_io_vector_sizes(p, 4, NULL, 0, &n)); /* count only */
    cr_assert_eq(n, 5);
  }
  size_t n = 0;
  ASSERT_CODE(cubert_device_io_vector_sizes(p, 0, NULL, 0, &n), CUBERT_CODE_INVALID_ARGUMENT,
              "elem_bytes is 0");
  ASSERT_CODE(cubert_device_io_vector_sizes(NULL, 4, NULL, 0, &n), CUBERT_CODE_INVALID_ARGUMENT,
              "properties is NULL");
  ASSERT_CODE(cubert_device_io_vector_sizes(p, 4, NULL, 3, &n), CUBERT_CODE_INVALID_ARGUMENT,
              "out is NULL but capacity");
}

/* seed-server-base.rs.txt, ServerUtilities::properties_hash ("stable hash of the device
   properties", properties.checksum()): equal for two clients of one device, for a private
   instance of it and for the listing (the listing opens nothing: an independent filling, as
   another process would make), stable within the process, blind to bytes past a string's end,
   and different when any property differs. The cross-process check is tests/info_json.sh. */
Test(devices, properties_hash_is_stable_and_tracks_the_properties) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  cr_assert_neq(p->properties_hash, 0);
  cr_assert_eq(p->properties_hash, cubert_device_properties_hash(p));
  cr_assert_eq(cubert_device_properties_hash(p), cubert_device_properties_hash(p));
  cubert_client *other = NULL, *priv = NULL;
  ASSERT_OK(cubert_client_create(cts_device(), &other));
  ASSERT_OK(cubert_client_create(cts_private_device(), &priv));
  cr_assert_eq(cubert_client_properties(other)->properties_hash, p->properties_hash);
  cr_assert_eq(cubert_client_properties(priv)->properties_hash, p->properties_hash,
               "a second instance of one device hashes the same");
  cubert_client_release(other);
  cubert_client_release(priv);

  size_t count = 0;
  ASSERT_OK(cubert_devices_count(p->backend, &count));
  cubert_device_info *infos = calloc(count, sizeof *infos);
  cr_assert_not_null(infos);
  ASSERT_OK(cubert_devices_list(p->backend, infos, count, &count));
  int found = 0;
  for (size_t i = 0; i < count; ++i)
    if (infos[i].available && strcmp(infos[i].properties.name, p->name) == 0 &&
        infos[i].properties.properties_hash == p->properties_hash)
      found = 1;
  cr_assert(found, "the listing has '%s' with hash %016llx", p->name,
            (unsigned long long)p->properties_hash);
  free(infos);

  cubert_device_properties q;
  memcpy(&q, p, sizeof q);
  size_t len = strlen(q.name); /* garbage after the NUL and a stale stored hash: no change */
  if (len + 2 < sizeof q.name) q.name[len + 1] = 'x';
  q.properties_hash ^= 1;
  cr_assert_eq(cubert_device_properties_hash(&q), p->properties_hash);
  memcpy(&q, p, sizeof q);
  q.features ^= CUBERT_FEATURE_DOT_PRODUCT_I8;
  cr_assert_neq(cubert_device_properties_hash(&q), p->properties_hash, "features");
  memcpy(&q, p, sizeof q);
  q.vector_widths.f32 += 1;
  cr_assert_neq(cubert_device_properties_hash(&q), p->properties_hash, "vector widths");
  memcpy(&q, p, sizeof q);
  q.hardware.num_compute_units += 1;
  cr_assert_neq(cubert_device_properties_hash(&q), p->properties_hash, "compute units");
  memcpy(&q, p, sizeof q);
  q.name[0] ^= 1;
  cr_assert_neq(cubert_device_properties_hash(&q), p->properties_hash, "name");
  cr_assert_eq(cubert_device_properties_hash(NULL), 0);
}

/* seed-client.rs.txt, `enumerate_devices` / `enumerate_all_devices` / `device_count` /
   `device_count_total`: per backend and in total, counts equal the listings, the total is the
   sum, a short array still reports the total, and the device under test is listed. */
Test(devices, listing_and_counts_agree) {
  size_t total = 0, sum = 0;
  ASSERT_OK(cubert_devices_count(NULL, &total));
  const cubert_backend *const *b = cubert_backends();
  for (size_t i = 0; b[i]; ++i) {
    size_t n = 0, listed = 0, direct = 0;
    ASSERT_OK(cubert_devices_count(b[i]->name, &n));
    ASSERT_OK(b[i]->enumerate(NULL, 0, &direct));
    cr_assert_eq(n, direct, "%s: count %zu, the backend enumerates %zu", b[i]->name, n, direct);
    cubert_device_info *infos = calloc(n + 1, sizeof *infos);
    ASSERT_OK(cubert_devices_list(b[i]->name, infos, n + 1, &listed));
    cr_assert_eq(listed, n);
    for (size_t k = 0; k < listed; ++k)
      cr_assert(strncmp(infos[k].selector, b[i]->name, strlen(b[i]->name)) == 0, "%s",
                infos[k].selector);
    free(infos);
    sum += n;
  }
  cr_assert_eq(total, sum, "the total is the sum over the backends");
  cr_assert_geq(total, 1);
  cubert_device_info one;
  size_t n = 0;
  ASSERT_OK(cubert_devices_list(NULL, &one, 1, &n));
  cr_assert_eq(n, total, "a short array still reports the total");
  size_t cpu = 0;
  ASSERT_OK(cubert_devices_count("cpu", &cpu));
  cr_assert_eq(cpu, 1, "one CPU server");
  ASSERT_CODE(cubert_devices_count("cuda", &n), CUBERT_CODE_NOT_FOUND,
              "backend is \"cuda\"; the backends of this library are cpu");
  ASSERT_CODE(cubert_devices_count(NULL, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "cubert_devices_count: out_count is NULL");
  ASSERT_CODE(cubert_devices_list(NULL, NULL, 2, &n), CUBERT_CODE_INVALID_ARGUMENT,
              "out is NULL but capacity is 2");
}
