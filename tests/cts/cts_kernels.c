/* Every library kernel against a scalar reference on the device under test; cube barriers at
   many cube dims; shared memory isolation between cubes running at the same time. */
#include <math.h>

#include "cts.h"

TestSuite(kernels, .init = cts_setup, .fini = cts_teardown);

static const uint64_t N = 1000003; /* odd, not a multiple of any cube dim */

static void launch_1d(const cubert_kernel_def *k, uint64_t n, cubert_handle **bufs, uint32_t nbufs,
                      const uint64_t *info, uint32_t ninfo) {
  uint32_t dim = cts_dim();
  cubert_kernel_args args = {bufs, nbufs, info, ninfo};
  ASSERT_OK(cubert_client_launch(cts_client, k, cts_cubes(n, dim),
                                 cubert_cube_dim_new_3d(dim, 1, 1), &args));
}

Test(kernels, fill_u32) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, (N + 5) * 4, &h));
  uint32_t sentinel[5] = {1, 2, 3, 4, 5};
  ASSERT_OK(cubert_client_write(cts_client, h, N * 4, sentinel, sizeof sentinel));
  uint64_t info[2] = {N, 0xA5A5F00Du};
  launch_1d(&cubert_kernel_fill_u32, N, &h, 1, info, 2);
  uint32_t *out = malloc((N + 5) * 4);
  cts_read(h, out, (N + 5) * 4);
  for (uint64_t i = 0; i < N; ++i)
    cr_assert_eq(out[i], 0xA5A5F00Du, "element %llu", (unsigned long long)i);
  cr_assert_arr_eq(out + N, sentinel, sizeof sentinel, "fill wrote past n");
  free(out);
  cubert_handle_release(h);
}

static void check_binary_f32(const cubert_kernel_def *k, int mul) {
  float *a = malloc(N * 4), *b = malloc(N * 4), *out = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    a[i] = (float)(i % 1013) * 0.5f - 100.0f;
    b[i] = (float)(i % 37) * 0.25f + 1.0f;
  }
  cubert_handle *bufs[3] = {cts_buffer(a, N * 4), cts_buffer(b, N * 4), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &bufs[2]));
  uint64_t info[1] = {N};
  launch_1d(k, N, bufs, 3, info, 1);
  cts_read(bufs[2], out, N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    float want = mul ? a[i] * b[i] : a[i] + b[i];
    cr_assert_eq(out[i], want, "%s element %llu: %g != %g", k->name, (unsigned long long)i, out[i],
                 want);
  }
  for (int i = 0; i < 3; ++i) cubert_handle_release(bufs[i]);
  free(a);
  free(b);
  free(out);
}

static void check_binary_i32(const cubert_kernel_def *k, int mul) {
  int32_t *a = malloc(N * 4), *b = malloc(N * 4), *out = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    a[i] = (int32_t)((uint32_t)(i * 7919u) - 5000000u); /* wraps: covers negatives and overflow */
    b[i] = (int32_t)(i % 1000) - 500;
  }
  cubert_handle *bufs[3] = {cts_buffer(a, N * 4), cts_buffer(b, N * 4), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &bufs[2]));
  uint64_t info[1] = {N};
  launch_1d(k, N, bufs, 3, info, 1);
  cts_read(bufs[2], out, N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    int32_t want =
        (int32_t)(mul ? (uint32_t)a[i] * (uint32_t)b[i] : (uint32_t)a[i] + (uint32_t)b[i]);
    cr_assert_eq(out[i], want, "%s element %llu", k->name, (unsigned long long)i);
  }
  for (int i = 0; i < 3; ++i) cubert_handle_release(bufs[i]);
  free(a);
  free(b);
  free(out);
}

Test(kernels, add_f32) {
  check_binary_f32(&cubert_kernel_add_f32, 0);
}
Test(kernels, mul_f32) {
  check_binary_f32(&cubert_kernel_mul_f32, 1);
}
Test(kernels, add_i32) {
  check_binary_i32(&cubert_kernel_add_i32, 0);
}
Test(kernels, mul_i32) {
  check_binary_i32(&cubert_kernel_mul_i32, 1);
}

Test(kernels, saxpy_f32) {
  float *x = malloc(N * 4), *y = malloc(N * 4), *out = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    x[i] = (float)(i % 101) * 0.125f;
    y[i] = (float)(i % 13);
  }
  cubert_handle *bufs[2] = {cts_buffer(x, N * 4), cts_buffer(y, N * 4)};
  const float a = -1.5f;
  uint64_t info[2] = {N, cubert_kernel_info_f32(a)};
  launch_1d(&cubert_kernel_saxpy_f32, N, bufs, 2, info, 2);
  cts_read(bufs[1], out, N * 4);
  for (uint64_t i = 0; i < N; ++i) {
    float want = a * x[i] + y[i];
    cr_assert(fabsf(out[i] - want) <= 1e-6f * fabsf(want) + 1e-6f, "element %llu: %g != %g",
              (unsigned long long)i, out[i], want);
  }
  cubert_handle_release(bufs[0]);
  cubert_handle_release(bufs[1]);
  free(x);
  free(y);
  free(out);
}

Test(kernels, in_place_add) {
  float v[1000];
  for (int i = 0; i < 1000; ++i) v[i] = (float)i;
  cubert_handle *h = cts_buffer(v, sizeof v);
  cubert_handle *bufs[3] = {h, h, h};
  uint64_t info[1] = {1000};
  launch_1d(&cubert_kernel_add_f32, 1000, bufs, 3, info, 1);
  float out[1000];
  cts_read(h, out, sizeof out);
  for (int i = 0; i < 1000; ++i) cr_assert_eq(out[i], 2.0f * i);
  cubert_handle_release(h);
}

/* Per-cube sums at a given cube dim, > 1000 cubes, integer data (exact in f32). Returns the
   status of the launch (NULL when it ran and every sum was right). */
static cubert_status try_reduce(uint32_t dim_x, uint32_t dim_y);
static void check_reduce(uint32_t dim_x, uint32_t dim_y) {
  ASSERT_OK(try_reduce(dim_x, dim_y));
}

static cubert_status try_reduce(uint32_t dim_x, uint32_t dim_y) {
  const uint64_t cubes = 1200, per_cube = 37 + dim_x * dim_y / 3;
  const uint64_t n = cubes * per_cube - 5; /* the last block is short */
  float *in = malloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) in[i] = (float)(i % 17);
  cubert_handle *bufs[2] = {cts_buffer(in, n * 4), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, cubes * 4, &bufs[1]));
  uint64_t info[2] = {n, per_cube};
  cubert_kernel_args args = {bufs, 2, info, 2};
  cubert_cube_count_selection sel;
  ASSERT_OK(cubert_cube_count_select(cts_client, (uint32_t)cubes, &sel));
  cubert_status s = cubert_client_launch(cts_client, &cubert_kernel_reduce_sum_f32, sel.cube_count,
                                         cubert_cube_dim_new_3d(dim_x, dim_y, 1), &args);
  if (s) {
    cubert_handle_release(bufs[0]);
    cubert_handle_release(bufs[1]);
    free(in);
    return s;
  }
  float *out = malloc(cubes * 4);
  cts_read(bufs[1], out, cubes * 4);
  for (uint64_t c = 0; c < cubes; ++c) {
    double want = 0;
    for (uint64_t i = c * per_cube; i < (c + 1) * per_cube && i < n; ++i) want += in[i];
    cr_assert_eq(out[c], (float)want, "dim (%u,%u) cube %llu: %g != %g", dim_x, dim_y,
                 (unsigned long long)c, out[c], want);
  }
  cubert_handle_release(bufs[0]);
  cubert_handle_release(bufs[1]);
  free(in);
  free(out);
  return NULL;
}

Test(kernels, reduce_dim_1) {
  check_reduce(1, 1);
}
Test(kernels, reduce_dim_2) {
  check_reduce(2, 1);
}
Test(kernels, reduce_dim_7) {
  check_reduce(7, 1);
}
Test(kernels, reduce_dim_64) {
  check_reduce(64, 1);
}
Test(kernels, reduce_dim_256) {
  check_reduce(256, 1);
}
Test(kernels, reduce_dim_2d_16x8) {
  check_reduce(16, 8);
}
Test(kernels, reduce_dim_max_units) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  uint32_t max = p->hardware.max_units_per_cube;
  uint32_t x = max < p->hardware.max_cube_dim[0] ? max : p->hardware.max_cube_dim[0];
  uint32_t y = max / x;
  if (y > p->hardware.max_cube_dim[1]) y = p->hardware.max_cube_dim[1];
  cr_assert_geq(x * y, 256u, "max_units_per_cube must be at least 256");
  cubert_status s = try_reduce(x, y);
  if (s && cubert_status_code(s) == CUBERT_CODE_UNITS) {
    /* A kernel's own limit (registers, local memory) may be below the device's: OpenCL
       reports it per kernel (NVIDIA: 256 for this one). The error names both numbers; the
       kernel's maximum must then work. */
    uint64_t kernel_max = cubert_status_max(s);
    cr_assert_eq(cubert_status_requested(s), (uint64_t)x * y);
    cr_assert_lt(kernel_max, (uint64_t)x * y, "%s", cubert_status_message(s));
    cr_assert_geq(kernel_max, 64, "%s", cubert_status_message(s));
    cubert_status_free(s);
    x = (uint32_t)kernel_max < p->hardware.max_cube_dim[0] ? (uint32_t)kernel_max
                                                           : p->hardware.max_cube_dim[0];
    y = (uint32_t)(kernel_max / x);
    s = try_reduce(x, y);
  }
  ASSERT_OK(s);
}

/* Shared memory isolation: every unit writes its cube's id into shared memory, the cube
   synchronises, and every unit reads a sibling's slot. Cubes run at the same time on every
   worker / compute unit; a shared block leaking between cubes shows up as a foreign id. */
static const char isolation_cl[] =
    "__kernel void isolation(__global uint *out, __global const ulong *info) {\n"
    "  __local uint tile[256];\n"
    "  uint units = get_local_size(0);\n"
    "  uint cube = get_group_id(0) + get_group_id(1) * get_num_groups(0);\n"
    "  uint unit = get_local_id(0);\n"
    "  tile[unit] = cube;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  uint got = tile[(unit + 1) % units];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  tile[unit] = cube * 3u + 1u;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (tile[(unit + units - 1) % units] != cube * 3u + 1u) got = 0xFFFFFFFFu;\n"
    "  out[cube * units + unit] = got;\n"
    "}\n";

static void isolation_cpu(const cubert_cpu_ctx *ctx) {
  uint32_t *tile = ctx->shared, *out = ctx->buffers[0];
  uint64_t id = ctx->unit_begin;
  uint32_t units = (uint32_t)cubert_cpu_units_per_cube(ctx);
  uint32_t cube = (uint32_t)cubert_cpu_cube_linear(ctx, id);
  uint32_t unit = cubert_cpu_unit_linear(ctx, id);
  tile[unit] = cube;
  cubert_cpu_sync_cube(ctx);
  uint32_t got = tile[(unit + 1) % units];
  cubert_cpu_sync_cube(ctx);
  tile[unit] = cube * 3u + 1u;
  cubert_cpu_sync_cube(ctx);
  if (tile[(unit + units - 1) % units] != cube * 3u + 1u) got = 0xFFFFFFFFu;
  out[(uint64_t)cube * units + unit] = got;
}

static const cubert_kernel_def isolation_kernel = {
    .name = "isolation",
    .opencl_source = isolation_cl,
    .opencl_entry = "isolation",
    .cpu = isolation_cpu,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = 256 * 4,
};

Test(kernels, shared_memory_is_private_to_each_cube) {
  const uint32_t cubes = 2000, units = 64;
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, (size_t)cubes * units * 4, &out));
  uint64_t info[1] = {0};
  cubert_kernel_args args = {&out, 1, info, 1};
  ASSERT_OK(cubert_client_launch(cts_client, &isolation_kernel,
                                 cubert_cube_count_new_3d(cubes, 1, 1),
                                 cubert_cube_dim_new_3d(units, 1, 1), &args));
  uint32_t *v = malloc((size_t)cubes * units * 4);
  cts_read(out, v, (size_t)cubes * units * 4);
  for (uint32_t c = 0; c < cubes; ++c)
    for (uint32_t u = 0; u < units; ++u)
      cr_assert_eq(v[c * units + u], c, "cube %u unit %u saw %u", c, u, v[c * units + u]);
  free(v);
  cubert_handle_release(out);
}

/* One calling convention on OpenCL: a hand-written OpenCL C kernel that comes with a signature
   takes the kernel language's arguments, (info, record, buffers...), with the buffers' sizes in
   bytes in info[2..] and the user's words after them (docs/kernels.md, "Calling convention"),
   so raw OpenCL C gets the same checks and layout as the language's kernels. The C side is a
   plain codelet function. y[i] = a * x[i] over min(n, LEN(x), LEN(y)) units' elements. */
static const char scale_raw_cl[] =
    "__kernel void scale_raw(__global const ulong *info, __global uint *record,\n"
    "                        __global const float *x, __global float *y) {\n"
    "  const uint first = (uint)(info[0] >> 32), words = (uint)info[0];\n"
    "  const ulong lx = info[2] / sizeof(float), ly = info[3] / sizeof(float);\n"
    "  const ulong n = words > 0 ? info[first] : 0;\n"
    "  const float a = words > 1 ? as_float((uint)info[first + 1]) : 0.0f;\n"
    "  const size_t i = get_global_id(0);\n"
    "  if (i < n && i < lx && i < ly) y[i] = a * x[i];\n"
    "}\n";

static void scale_raw_cpu(const cubert_cpu_ctx *ctx) {
  const float *x = ctx->buffers[0];
  float *y = ctx->buffers[1];
  const uint64_t lx = ctx->buffer_bytes[0] / 4, ly = ctx->buffer_bytes[1] / 4;
  const uint64_t n = ctx->info_count > 0 ? ctx->info[0] : 0;
  float a = 0.0f;
  if (ctx->info_count > 1) {
    uint32_t bits = (uint32_t)ctx->info[1];
    memcpy(&a, &bits, sizeof a);
  }
  for (uint64_t i = ctx->unit_begin; i < ctx->unit_end; ++i)
    if (i < n && i < lx && i < ly) y[i] = a * x[i];
}

static const cubert_kernel_buffer_decl scale_raw_buffers[] = {{"x", "const float", 4},
                                                              {"y", "float", 4}};
static const cubert_kernel_signature scale_raw_signature = {
    .buffer_count = 2, .buffers = scale_raw_buffers, .file = __FILE__, .line = __LINE__};
static const cubert_kernel_def scale_raw_kernel = {
    .name = "scale_raw",
    .opencl_source = scale_raw_cl,
    .opencl_entry = "scale_raw",
    .cpu = scale_raw_cpu,
    .signature = &scale_raw_signature,
};

Test(kernels, hand_written_kernel_with_a_signature_takes_the_language_layout) {
  enum { N = 1000 };
  float x[N], zeros[N] = {0};
  for (int i = 0; i < N; ++i) x[i] = (float)i - 300.0f;
  cubert_handle *hx = cts_buffer(x, sizeof x), *hy = cts_buffer(zeros, sizeof zeros);
  /* n = 900 of the 1000 elements, a = -2.5 */
  uint64_t info[2] = {900, cubert_kernel_info_f32(-2.5f)};
  cubert_handle *bufs[2] = {hx, hy};
  cubert_kernel_args args = {bufs, 2, info, 2};
  ASSERT_OK(cubert_client_launch(cts_client, &scale_raw_kernel, cubert_cube_count_new_3d(8, 1, 1),
                                 cubert_cube_dim_new_3d(128, 1, 1), &args));
  float y[N];
  cts_read(hy, y, sizeof y);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(y[i], i < 900 ? -2.5f * x[i] : 0.0f, "y[%d] = %g", i, (double)y[i]);
  /* The signature is checked on every server, as for the language's kernels: one buffer too
     few, or a buffer that is not a whole number of floats, is refused before it runs. */
  cubert_kernel_args one = {bufs, 1, info, 2};
  ASSERT_CODE(cubert_client_launch(cts_client, &scale_raw_kernel, cubert_cube_count_new_3d(8, 1, 1),
                                   cubert_cube_dim_new_3d(128, 1, 1), &one),
              CUBERT_CODE_INVALID_ARGUMENT, "scale_raw");
  cubert_handle *odd = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 10, &odd));
  cubert_handle *bad[2] = {hx, odd};
  cubert_kernel_args ragged = {bad, 2, info, 2};
  ASSERT_CODE(cubert_client_launch(cts_client, &scale_raw_kernel, cubert_cube_count_new_3d(8, 1, 1),
                                   cubert_cube_dim_new_3d(128, 1, 1), &ragged),
              CUBERT_CODE_INVALID_ARGUMENT, "(y: float)");
  cubert_handle_release(odd);
  cubert_handle_release(hx);
  cubert_handle_release(hy);
}

Test(kernels, strided_read_tensor_transposes) {
  /* a 3x4 matrix read through transposed strides: a 4x3 view */
  float m[12];
  for (int i = 0; i < 12; ++i) m[i] = (float)i;
  cubert_handle *h = cts_buffer(m, sizeof m);
  cubert_copy_desc d = {.handle = h, .rank = 2, .shape = {4, 3}, .strides = {1, 4}, .elem_size = 4};
  float t[12];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, t, sizeof t));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) cr_assert_eq(t[r * 3 + c], m[c * 4 + r]);
  /* a strided slice of every other column, 8-byte elements */
  uint64_t big[6 * 10];
  for (int i = 0; i < 60; ++i) big[i] = 1000 + i;
  cubert_handle *hb = cts_buffer(big, sizeof big);
  cubert_copy_desc d2 = {
      .handle = hb, .rank = 2, .shape = {6, 5}, .strides = {10, 2}, .elem_size = 8};
  uint64_t s[30];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d2, s, sizeof s));
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 5; ++c) cr_assert_eq(s[r * 5 + c], big[r * 10 + c * 2]);
  /* bad sizes */
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &d2, s, sizeof s - 8),
              CUBERT_CODE_INVALID_ARGUMENT, "240");
  cubert_copy_desc far = d2;
  far.strides[0] = 12;
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &far, s, sizeof s),
              CUBERT_CODE_INVALID_ARGUMENT, "past the end");
  cubert_handle_release(h);
  cubert_handle_release(hb);
}

Test(kernels, every_library_kernel_has_both_implementations) {
  for (size_t i = 0; cubert_kernel_library[i]; ++i) {
    const cubert_kernel_def *k = cubert_kernel_library[i];
    cr_assert_not_null(k->cpu, "%s lacks a CPU implementation", k->name);
    cr_assert_not_null(k->opencl_source, "%s lacks an OpenCL implementation", k->name);
    cr_assert_eq(cubert_kernel_find(k->name), k);
  }
}
