/* Programs (cubert/program.h, issue 38): existing OpenCL C kernels launched unchanged, with
   arguments of every OpenCL kind in the kernel's own order, checked against the kernel's own
   arguments; several kernels of one program, a program from a file, build options, order with
   cubert's own kernels on streams, to_client and an all-reduce on their buffers, a tuned local
   size, and on the CPU server the kernels that bring a CPU function (the others are refused). */
#include <cubert/program.h>
#include <stdint.h>
#include <unistd.h>

#include "cts.h"
#include "cubert/comm.h"

TestSuite(program, .init = cts_setup, .fini = cts_teardown);

/* A struct passed by value: the same layout in C and OpenCL C (4 + 4 + 8 bytes). */
typedef struct triple {
  int32_t a;
  float b;
  int64_t c;
} triple;

static const char *kSource =
    "typedef struct { int a; float b; long c; } triple;\n"
    "__kernel void ints(__global long *out, char a, uchar b, short c, ushort d, int e, uint f,\n"
    "                   long g, ulong h) {\n"
    "  if (get_global_id(0) != 0) return;\n"
    "  out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; out[6] = g;\n"
    "  out[7] = (long)h;\n"
    "}\n"
    "__kernel void floats(__global float *out, float x, float4 v) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = x * (float)i + v.x + v.y * 10.0f + v.z * 100.0f + v.w * 1000.0f;\n"
    "}\n"
    "__kernel void by_struct(__global float *out, triple t) {\n"
    "  out[get_global_id(0)] = (float)t.a + t.b + (float)t.c;\n"
    "}\n"
    "__kernel void scaled(__global int *out, __global const int *in, int n) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  if (i < n) out[i] = in[i] * SCALE;\n"
    "}\n"
    "__kernel void reverse_local(__global int *data, __local int *tile) {\n"
    "  size_t l = get_local_id(0), size = get_local_size(0);\n"
    "  tile[l] = data[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  data[get_global_id(0)] = tile[size - 1 - l];\n"
    "}\n";

/* ---- CPU functions of three of the kernels -------------------------------------------- */

CUBERT_CPU_KERNEL(ints_cpu, ctx, id) {
  if (id != 0) return;
  int64_t *out = cubert_cpu_arg_buffer(ctx, 0);
  int8_t a;
  uint8_t b;
  int16_t c;
  uint16_t d;
  int32_t e;
  uint32_t f;
  int64_t g;
  uint64_t h;
  if (!cubert_cpu_arg_get(ctx, 1, &a, 1) || !cubert_cpu_arg_get(ctx, 2, &b, 1) ||
      !cubert_cpu_arg_get(ctx, 3, &c, 2) || !cubert_cpu_arg_get(ctx, 4, &d, 2) ||
      !cubert_cpu_arg_get(ctx, 5, &e, 4) || !cubert_cpu_arg_get(ctx, 6, &f, 4) ||
      !cubert_cpu_arg_get(ctx, 7, &g, 8) || !cubert_cpu_arg_get(ctx, 8, &h, 8)) {
    cubert_cpu_fail(ctx, "ints: an argument has the wrong size");
    return;
  }
  out[0] = a, out[1] = b, out[2] = c, out[3] = d, out[4] = e, out[5] = f, out[6] = g;
  out[7] = (int64_t)h;
}

CUBERT_CPU_KERNEL(scaled_cpu, ctx, id) {
  int32_t *out = cubert_cpu_arg_buffer(ctx, 0);
  const int32_t *in = cubert_cpu_arg_buffer(ctx, 1);
  const int32_t n = *(const int32_t *)cubert_cpu_arg_value(ctx, 2);
  if (id < (uint64_t)n) out[id] = in[id] * 3;
}

/* One call per unit (CUBERT_KERNEL_SYNC_CUBE): the __local argument in the cube's shared
   memory, a cube barrier between the loads and the stores. */
static void reverse_local_cpu(const cubert_cpu_ctx *ctx) {
  int32_t *data = cubert_cpu_arg_buffer(ctx, 0);
  int32_t *tile = cubert_cpu_arg_local(ctx, 1);
  const uint64_t id = ctx->unit_begin;
  const uint32_t l = cubert_cpu_unit_linear(ctx, id), size = ctx->cube_dim[0];
  tile[l] = data[id];
  cubert_cpu_sync_cube(ctx);
  data[id] = tile[size - 1 - l];
}

/* ---- fixture ----------------------------------------------------------------------------- */

typedef struct kernels {
  cubert_program *program;
  const cubert_kernel_def *ints, *floats, *by_struct, *scaled, *reverse_local;
} kernels;

static kernels make_kernels(void) {
  kernels k = {0};
  ASSERT_OK(cubert_program_create(kSource, "-DSCALE=3", &k.program));
  cubert_program_kernel_options ints = {.cpu = ints_cpu};
  cubert_program_kernel_options scaled = {.name = "cts_scaled", .cpu = scaled_cpu};
  cubert_program_kernel_options rev = {
      .cpu = reverse_local_cpu, .flags = CUBERT_KERNEL_SYNC_CUBE, .cpu_local_bytes = 256 * 4};
  ASSERT_OK(cubert_program_kernel(k.program, "ints", &ints, &k.ints));
  ASSERT_OK(cubert_program_kernel(k.program, "floats", NULL, &k.floats));
  ASSERT_OK(cubert_program_kernel(k.program, "by_struct", NULL, &k.by_struct));
  ASSERT_OK(cubert_program_kernel(k.program, "scaled", &scaled, &k.scaled));
  ASSERT_OK(cubert_program_kernel(k.program, "reverse_local", &rev, &k.reverse_local));
  return k;
}

static cubert_cube_count one_d(uint32_t cubes) {
  return cubert_cube_count_new_3d(cubes, 1, 1);
}
static cubert_cube_dim dim_x(uint32_t units) {
  return cubert_cube_dim_new_3d(units, 1, 1);
}

/* ---- every argument kind ------------------------------------------------------------------ */

Test(program, integer_scalars_of_every_width_in_the_kernels_order) {
  kernels k = make_kernels();
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 8 * 8, &out));
  int8_t a = -5;
  uint8_t b = 250;
  int16_t c = -30000;
  uint16_t d = 65000;
  int32_t e = -2000000000;
  uint32_t f = 4000000000u;
  int64_t g = -9000000000000000000ll;
  uint64_t h = 0x7fffffffffffff01ull;
  cubert_arg args[9] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(a), CUBERT_ARG_VALUE(b),
                        CUBERT_ARG_VALUE(c),    CUBERT_ARG_VALUE(d), CUBERT_ARG_VALUE(e),
                        CUBERT_ARG_VALUE(f),    CUBERT_ARG_VALUE(g), CUBERT_ARG_VALUE(h)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k.ints, one_d(1), dim_x(1), args, 9));
  int64_t got[8];
  cts_read(out, got, sizeof got);
  const int64_t want[8] = {-5, 250, -30000, 65000, -2000000000, 4000000000ll, g, (int64_t)h};
  for (int i = 0; i < 8; ++i) cr_assert_eq(got[i], want[i], "out[%d] = %lld", i, (long long)got[i]);
  cubert_handle_release(out);
  cubert_program_release(k.program);
}

Test(program, float_float4_and_a_struct_by_value) {
  if (!cts_is_opencl()) cr_skip_test("OpenCL only: these kernels have no CPU function");
  kernels k = make_kernels();
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 64 * 4, &out));
  float x = 0.5f, v[4] = {1, 2, 3, 4}; /* cl_float4's layout */
  cubert_arg args[3] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(x), CUBERT_ARG_VALUE(v)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k.floats, one_d(4), dim_x(16), args, 3));
  float got[64];
  cts_read(out, got, sizeof got);
  for (int i = 0; i < 64; ++i) cr_assert_float_eq(got[i], 0.5f * i + 4321.0f, 1e-3, "out[%d]", i);
  triple t = {7, 0.25f, 1000};
  cubert_arg sargs[2] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(t)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k.by_struct, one_d(4), dim_x(16), sargs, 2));
  cts_read(out, got, sizeof got);
  for (int i = 0; i < 64; ++i) cr_assert_float_eq(got[i], 1007.25f, 1e-3, "out[%d]", i);
  cubert_handle_release(out);
  cubert_program_release(k.program);
}

Test(program, double_and_half_where_the_device_has_them) {
  if (!cts_is_opencl()) cr_skip_test("OpenCL only");
  const uint32_t features = cubert_client_properties(cts_client)->features;
  if (!(features & (CUBERT_FEATURE_FP64 | CUBERT_FEATURE_FP16)))
    cr_skip_test("the device has neither cl_khr_fp64 nor cl_khr_fp16");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 16 * 8, &out));
  if (features & CUBERT_FEATURE_FP64) {
    cubert_program *p = NULL;
    const cubert_kernel_def *def = NULL;
    ASSERT_OK(cubert_program_create(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "__kernel void dbl(__global double *out, double x) { out[get_global_id(0)] = x * 3.0; }\n",
        NULL, &p));
    cubert_program_kernel_options o = {.flags = CUBERT_KERNEL_NEEDS_FP64};
    ASSERT_OK(cubert_program_kernel(p, "dbl", &o, &def));
    double x = 1.0 / 3.0;
    cubert_arg args[2] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(x)};
    ASSERT_OK(cubert_client_launch_args(cts_client, def, one_d(1), dim_x(16), args, 2));
    double got[16];
    cts_read(out, got, sizeof got);
    for (int i = 0; i < 16; ++i) cr_assert_eq(got[i], x * 3.0, "out[%d] = %.17g", i, got[i]);
    cubert_program_release(p);
  }
  if (features & CUBERT_FEATURE_FP16) {
    cubert_program *p = NULL;
    const cubert_kernel_def *def = NULL;
    ASSERT_OK(cubert_program_create(
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        "__kernel void hlf(__global float *out, half h) { out[get_global_id(0)] = (float)h; }\n",
        NULL, &p));
    cubert_program_kernel_options o = {.flags = CUBERT_KERNEL_NEEDS_FP16};
    ASSERT_OK(cubert_program_kernel(p, "hlf", &o, &def));
    uint16_t h = 0x3e00; /* 1.5 */
    cubert_arg args[2] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(h)};
    ASSERT_OK(cubert_client_launch_args(cts_client, def, one_d(1), dim_x(16), args, 2));
    float got[16];
    cts_read(out, got, sizeof got);
    for (int i = 0; i < 16; ++i) cr_assert_eq(got[i], 1.5f, "out[%d] = %g", i, got[i]);
    cubert_program_release(p);
  }
  cubert_handle_release(out);
}

Test(program, a_local_size_argument_gives_each_cube_its_tile) {
  kernels k = make_kernels();
  enum { N = 256, DIM = 64 };
  int32_t data[N];
  for (int i = 0; i < N; ++i) data[i] = i;
  cubert_handle *h = cts_buffer(data, sizeof data);
  cubert_arg args[2] = {cubert_arg_buffer(h), cubert_arg_local(DIM * 4)};
  ASSERT_OK(
      cubert_client_launch_args(cts_client, k.reverse_local, one_d(N / DIM), dim_x(DIM), args, 2));
  cts_read(h, data, sizeof data);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(data[i], (i / DIM) * DIM + DIM - 1 - i % DIM, "data[%d] = %d", i, data[i]);
  cubert_handle_release(h);
  cubert_program_release(k.program);
}

/* A view binds its own bytes: one at an aligned offset is a sub-buffer on OpenCL (and a
   pointer on the CPU server); an unaligned one is refused on OpenCL, naming the argument. */
Test(program, a_view_with_an_offset_and_build_options) {
  kernels k = make_kernels();
  const uint64_t align = cubert_client_properties(cts_client)->memory.alignment;
  const uint32_t skip = (uint32_t)(align / 4 > 0 ? align / 4 : 1), n = 64;
  int32_t *data = malloc((skip + n) * 4);
  for (uint32_t i = 0; i < skip + n; ++i) data[i] = (int32_t)i;
  cubert_handle *in = cts_buffer(data, (skip + n) * 4), *view = NULL, *out = NULL;
  ASSERT_OK(cubert_handle_view(in, (uint64_t)skip * 4, n * 4, &view));
  ASSERT_OK(cubert_client_empty(cts_client, n * 4, &out));
  int32_t count = (int32_t)n;
  cubert_arg args[3] = {cubert_arg_buffer(out), cubert_arg_buffer(view), CUBERT_ARG_VALUE(count)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k.scaled, one_d(n / 16), dim_x(16), args, 3));
  int32_t got[64];
  cts_read(out, got, sizeof got);
  for (uint32_t i = 0; i < n; ++i)
    cr_assert_eq(got[i], 3 * (int32_t)(skip + i), "out[%u] = %d (SCALE=3 from the options)", i,
                 got[i]);
  if (cts_is_opencl() && align > 4) {
    cubert_handle *odd = NULL;
    ASSERT_OK(cubert_handle_view(in, 4, n * 4, &odd));
    args[1] = cubert_arg_buffer(odd);
    ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(n / 16), dim_x(16), args, 3),
                CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                "argument 1 ('in') is a view starting at byte");
    cubert_handle_release(odd);
  }
  free(data);
  cubert_handle_release(view);
  cubert_handle_release(in);
  cubert_handle_release(out);
  cubert_program_release(k.program);
}

/* ---- checks against the kernel's own arguments ------------------------------------------- */

Test(program, wrong_count_kind_and_size_name_the_argument) {
  if (!cts_is_opencl()) cr_skip_test("the kernel's own arguments are known on OpenCL");
  kernels k = make_kernels();
  cubert_handle *a = NULL, *b = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 64 * 4, &a));
  ASSERT_OK(cubert_client_empty(cts_client, 64 * 4, &b));
  int32_t n = 64;
  int64_t wide = 64;
  cubert_arg args[3] = {cubert_arg_buffer(a), cubert_arg_buffer(b), CUBERT_ARG_VALUE(n)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), args, 2),
              CUBERT_CODE_INVALID_ARGUMENT,
              "kernel 'cts_scaled' declares 3 arguments; the launch passes 2");
  cubert_arg kind[3] = {cubert_arg_buffer(a), CUBERT_ARG_VALUE(n), CUBERT_ARG_VALUE(n)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), kind, 3),
              CUBERT_CODE_INVALID_ARGUMENT, "argument 1 ('in') is declared as a __global pointer");
  cubert_arg local[3] = {cubert_arg_buffer(a), cubert_arg_buffer(b), cubert_arg_local(64)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), local, 3),
              CUBERT_CODE_INVALID_ARGUMENT, "argument 2 ('n') is declared as a value");
  cubert_arg size[3] = {cubert_arg_buffer(a), cubert_arg_buffer(b), CUBERT_ARG_VALUE(wide)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), size, 3),
              CUBERT_CODE_INVALID_ARGUMENT,
              "argument 2 ('n') has type int, 4 bytes; the launch passes 8 bytes");
  /* Checks of the list itself, on every server. */
  cubert_arg null_value[3] = {cubert_arg_buffer(a), cubert_arg_buffer(b),
                              cubert_arg_scalar(NULL, 4)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), null_value, 3),
              CUBERT_CODE_INVALID_ARGUMENT, "argument 2 is a scalar with a NULL value");
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_program_release(k.program);
}

Test(program, list_checks_and_the_wrong_launch_call_on_every_server) {
  kernels k = make_kernels();
  cubert_handle *a = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 64 * 4, &a));
  cubert_arg bad_kind[1] = {{.kind = (cubert_arg_kind)9}};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.scaled, one_d(4), dim_x(16), bad_kind, 1),
              CUBERT_CODE_INVALID_ARGUMENT, "argument 0 has kind 9; expected CUBERT_ARG_BUFFER");
  cubert_arg zero_local[2] = {cubert_arg_buffer(a), cubert_arg_local(0)};
  ASSERT_CODE(
      cubert_client_launch_args(cts_client, k.reverse_local, one_d(4), dim_x(16), zero_local, 2),
      CUBERT_CODE_INVALID_ARGUMENT, "argument 1 is a local of 0 bytes; expected 1 to");
  cubert_kernel_args plain = {&a, 1, NULL, 0};
  ASSERT_CODE(cubert_client_launch(cts_client, k.scaled, one_d(4), dim_x(16), &plain),
              CUBERT_CODE_INVALID_ARGUMENT, "launch it with cubert_client_launch_args");
  ASSERT_CODE(
      cubert_client_launch_args(cts_client, &cubert_kernel_fill_u32, one_d(4), dim_x(16), NULL, 0),
      CUBERT_CODE_INVALID_ARGUMENT, "is not a program kernel");
  cubert_handle_release(a);
  cubert_program_release(k.program);
}

/* A __local argument sized by the launch beside the kernel's own __local array: within the
   limit it runs on both servers; beyond it the launch is refused with SHARED_MEMORY before
   anything is queued, on OpenCL against CL_DEVICE_LOCAL_MEM_SIZE less the kernel's own local
   memory, on the CPU server against the definition's cpu_local_bytes. */
static const char *kOwnLocal =
    "__kernel void own_and_arg(__global int *data, __local int *tile) {\n"
    "  __local int own[64];\n"
    "  int l = get_local_id(0), id = get_global_id(0);\n"
    "  own[l] = 2 * data[id];\n"
    "  tile[l] = data[id];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  data[id] = tile[get_local_size(0) - 1 - l] + own[l];\n"
    "}\n";

/* own[l] is only its unit's: a variable of the call. */
static void own_and_arg_cpu(const cubert_cpu_ctx *ctx) {
  int32_t *data = cubert_cpu_arg_buffer(ctx, 0), *tile = cubert_cpu_arg_local(ctx, 1);
  const uint64_t id = ctx->unit_begin;
  const uint32_t l = cubert_cpu_unit_linear(ctx, id), size = ctx->cube_dim[0];
  const int32_t own = 2 * data[id];
  tile[l] = data[id];
  cubert_cpu_sync_cube(ctx);
  data[id] = tile[size - 1 - l] + own;
}

Test(program, a_local_size_beyond_the_limit_is_refused_on_every_server) {
  cubert_program *p = NULL;
  const cubert_kernel_def *k = NULL;
  ASSERT_OK(cubert_program_create(kOwnLocal, NULL, &p));
  const cubert_program_kernel_options o = {
      .cpu = own_and_arg_cpu, .flags = CUBERT_KERNEL_SYNC_CUBE, .cpu_local_bytes = 64 * 4};
  ASSERT_OK(cubert_program_kernel(p, "own_and_arg", &o, &k));
  int32_t data[32];
  for (int i = 0; i < 32; ++i) data[i] = i;
  cubert_handle *h = cts_buffer(data, sizeof data);
  cubert_arg args[2] = {cubert_arg_buffer(h), cubert_arg_local(16 * 4)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k, one_d(2), dim_x(16), args, 2));
  int32_t got[32];
  cts_read(h, got, sizeof got);
  for (int i = 0; i < 32; ++i)
    cr_assert_eq(got[i], (i / 16) * 16 + 15 - i % 16 + 2 * i, "data[%d] = %d", i, got[i]);
  /* Bytes the device has, but not beside the kernel's own 256 (OpenCL); over the definition's
     256 (CPU). */
  const uint64_t max = cubert_client_properties(cts_client)->hardware.max_shared_memory_size;
  args[1] = cubert_arg_local(cts_is_cpu() ? 64 * 4 + 16 : max - 128);
  cubert_status s = cubert_client_launch_args(cts_client, k, one_d(2), dim_x(16), args, 2);
  cr_assert_not_null(s, "a launch over the limit ran");
  const char *m = cubert_status_message(s);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SHARED_MEMORY, "%s", m);
  char want[160];
  if (cts_is_cpu()) {
    cr_assert(strstr(m, "raise cubert_program_kernel_options.cpu_local_bytes"), "%s", m);
  } else {
    snprintf(want, sizeof want, "its __local arguments take %llu bytes",
             (unsigned long long)(max - 128));
    cr_assert(strstr(m, want), "no \"%s\" in: %s", want, m);
    snprintf(want, sizeof want, "over the %llu bytes of CL_DEVICE_LOCAL_MEM_SIZE",
             (unsigned long long)max);
    cr_assert(strstr(m, want), "no \"%s\" in: %s", want, m);
    cr_assert(strstr(m, "; pass at most "), "%s", m);
  }
  cubert_status_free(s);
  cts_read(h, got, sizeof got);
  cr_assert_eq(got[0], 15, "the refused launch left the buffer");
  cubert_handle_release(h);
  cubert_program_release(p);
}

/* ---- the CPU server ------------------------------------------------------------------------ */

Test(program, the_cpu_server_refuses_a_kernel_without_a_cpu_function) {
  if (!cts_is_cpu()) cr_skip_test("CPU server only");
  kernels k = make_kernels();
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 64 * 4, &out));
  float x = 1;
  cubert_arg args[2] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(x)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.floats, one_d(4), dim_x(16), args, 2),
              CUBERT_CODE_UNAVAILABLE,
              "kernel \"floats\" is OpenCL C without a CPU function: it is not supported on the "
              "CPU server; run it on an \"opencl\" device");
  /* __local arguments beyond the definition's cpu_local_bytes */
  cubert_arg big[2] = {cubert_arg_buffer(out), cubert_arg_local(4096)};
  ASSERT_CODE(cubert_client_launch_args(cts_client, k.reverse_local, one_d(1), dim_x(16), big, 2),
              CUBERT_CODE_SHARED_MEMORY, "raise cubert_program_kernel_options.cpu_local_bytes");
  cubert_handle_release(out);
  cubert_program_release(k.program);
}

/* ---- a file, streams, autotune --------------------------------------------------------------- */

Test(program, a_program_from_a_file) {
  char path[] = "/tmp/cubert-cts-program-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const char text[] =
      "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }\n"
      "__kernel void plus(__global int *x, int v) { x[get_global_id(0)] += v; }\n";
  cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create_from_file(path, NULL, &p));
  unlink(path);
  const cubert_kernel_def *twice = NULL, *plus = NULL;
  ASSERT_OK(cubert_program_kernel(p, "twice", NULL, &twice));
  ASSERT_OK(cubert_program_kernel(p, "plus", NULL, &plus));
  if (cts_is_opencl()) {
    int32_t data[32];
    for (int i = 0; i < 32; ++i) data[i] = i;
    cubert_handle *h = cts_buffer(data, sizeof data);
    int32_t v = 5;
    cubert_arg a1[1] = {cubert_arg_buffer(h)}, a2[2] = {cubert_arg_buffer(h), CUBERT_ARG_VALUE(v)};
    ASSERT_OK(cubert_client_launch_args(cts_client, twice, one_d(2), dim_x(16), a1, 1));
    ASSERT_OK(cubert_client_launch_args(cts_client, plus, one_d(2), dim_x(16), a2, 2));
    cts_read(h, data, sizeof data);
    for (int i = 0; i < 32; ++i) cr_assert_eq(data[i], 2 * i + 5, "data[%d]", i);
    cubert_handle_release(h);
  }
  cubert_program_release(p);
  cubert_program *missing = NULL;
  ASSERT_CODE(cubert_program_create_from_file("/nonexistent/k.cl", NULL, &missing),
              CUBERT_CODE_NOT_FOUND, "cannot open the OpenCL C file \"/nonexistent/k.cl\"");
  cr_assert_null(missing);
}

/* cubert's fill on one stream, the program kernel on another (ordered after it through the
   buffer), cubert's add after it on the first: each sees the one before. */
Test(program, ordered_with_cubert_kernels_across_streams) {
  kernels k = make_kernels();
  enum { N = 1024 };
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 7, &other));
  cubert_handle *in = NULL, *out = NULL, *sum = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &in));
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &out));
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &sum));
  for (int round = 1; round <= 3; ++round) {
    uint64_t info[2] = {N, (uint64_t)round};
    cubert_kernel_args fill = {&in, 1, info, 2};
    ASSERT_OK(
        cubert_client_launch(cts_client, &cubert_kernel_fill_u32, one_d(N / 64), dim_x(64), &fill));
    int32_t n = N;
    cubert_arg args[3] = {cubert_arg_buffer(out), cubert_arg_buffer(in), CUBERT_ARG_VALUE(n)};
    ASSERT_OK(cubert_client_launch_args(other, k.scaled, one_d(N / 64), dim_x(64), args, 3));
    cubert_handle *bufs[3] = {out, in, sum};
    uint64_t n_info[1] = {N};
    cubert_kernel_args add = {bufs, 3, n_info, 1};
    ASSERT_OK(
        cubert_client_launch(cts_client, &cubert_kernel_add_i32, one_d(N / 64), dim_x(64), &add));
    int32_t got[N];
    cts_read(sum, got, sizeof got);
    for (int i = 0; i < N; ++i) cr_assert_eq(got[i], 4 * round, "round %d: sum[%d]", round, i);
  }
  cubert_handle_release(in);
  cubert_handle_release(out);
  cubert_handle_release(sum);
  cubert_client_release(other);
  cubert_program_release(k.program);
}

/* to_client and a collective (cubert/comm.h) on buffers a program kernel wrote, without a sync
   between the launches, the copy and the all-reduce: the device under test and a CPU client,
   each member's buffer written by `scaled` on its own client (the CPU one by its CPU function). */
Test(program, to_client_and_all_reduce_on_buffers_a_program_kernel_wrote) {
  kernels k = make_kernels();
  enum { N = 256 };
  cubert_client *clients[2] = {cts_client, NULL};
  ASSERT_OK(cubert_client_create("cpu", &clients[1]));
  cubert_handle *in[2] = {NULL}, *out[2] = {NULL}, *copy = NULL;
  int32_t host[2][N], got[N], n = N;
  for (int m = 0; m < 2; ++m) {
    for (int i = 0; i < N; ++i) host[m][i] = (m + 1) * 1000 + i;
    ASSERT_OK(cubert_client_create_buffer(clients[m], host[m], sizeof host[m], &in[m]));
    ASSERT_OK(cubert_client_empty(clients[m], sizeof host[m], &out[m]));
    cubert_arg args[3] = {cubert_arg_buffer(out[m]), cubert_arg_buffer(in[m]), CUBERT_ARG_VALUE(n)};
    ASSERT_OK(cubert_client_launch_args(clients[m], k.scaled, one_d(N / 64), dim_x(64), args, 3));
  }
  ASSERT_OK(cubert_client_to_client(cts_client, out[0], clients[1], &copy));
  ASSERT_OK(cubert_client_read(clients[1], copy, got, sizeof got));
  for (int i = 0; i < N; ++i) cr_assert_eq(got[i], 3 * host[0][i], "to_client: element %d", i);
  cubert_comm *comm = NULL;
  ASSERT_OK(cubert_comm_create(clients, 2, &comm));
  ASSERT_OK(cubert_comm_all_reduce(comm, out, out, N, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM));
  for (int m = 0; m < 2; ++m) {
    ASSERT_OK(cubert_client_read(clients[m], out[m], got, sizeof got));
    for (int i = 0; i < N; ++i)
      cr_assert_eq(got[i], 3 * (host[0][i] + host[1][i]), "all_reduce: member %d element %d", m, i);
  }
  cubert_comm_release(comm);
  for (int m = 0; m < 2; ++m) {
    cubert_handle_release(in[m]);
    cubert_handle_release(out[m]);
  }
  cubert_handle_release(copy);
  cubert_client_release(clients[1]);
  cubert_program_release(k.program);
}

/* The local size left to a tune set: one candidate per cube dim, each a launch of the same
   program kernel. */
typedef struct tune_call {
  const cubert_kernel_def *kernel;
  cubert_handle *out, *in;
  int32_t n;
} tune_call;

static cubert_status tune_at(cubert_client *c, const void *p, uint32_t dim) {
  const tune_call *t = p;
  cubert_arg args[3] = {cubert_arg_buffer(t->out), cubert_arg_buffer(t->in),
                        cubert_arg_scalar(&t->n, sizeof t->n)};
  return cubert_client_launch_args(c, t->kernel, one_d(((uint32_t)t->n + dim - 1) / dim),
                                   dim_x(dim), args, 3);
}
static cubert_status tune_16(cubert_client *c, const void *p) {
  return tune_at(c, p, 16);
}
static cubert_status tune_64(cubert_client *c, const void *p) {
  return tune_at(c, p, 64);
}
static cubert_status tune_256(cubert_client *c, const void *p) {
  return tune_at(c, p, 256);
}
static const cubert_tune_candidate kLocalSizes[] = {
    {"local16", tune_16, NULL, 0}, {"local64", tune_64, NULL, 0}, {"local256", tune_256, NULL, 0}};
static const cubert_tune_set kLocalSizeSet = {"cts.program.scaled", kLocalSizes, 3, 0, NULL};

Test(program, the_local_size_is_left_to_a_tune_set) {
  kernels k = make_kernels();
  enum { N = 1000 };
  int32_t data[N];
  for (int i = 0; i < N; ++i) data[i] = i - 500;
  tune_call call = {k.scaled, NULL, cts_buffer(data, sizeof data), N};
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &call.out));
  cubert_tune_key key = {0};
  /* A key of its own per run, so the set is tuned here rather than found on disk. */
  ASSERT_OK(cubert_tune_key_add(&key, (uint64_t)getpid()));
  ASSERT_OK(cubert_tune_key_add_anchored(&key, N));
  cubert_tune_stats before, after;
  ASSERT_OK(cubert_tune_stats_get(cts_client, &before));
  ASSERT_OK(cubert_tune_execute_reading(cts_client, &kLocalSizeSet, &key, &call, &call.in, 1));
  ASSERT_OK(cubert_tune_stats_get(cts_client, &after));
  cr_assert_eq(after.tunings, before.tunings + 1);
  cr_assert_eq(after.candidates_measured, before.candidates_measured + 3);
  int32_t got[N];
  cts_read(call.out, got, sizeof got);
  for (int i = 0; i < N; ++i) cr_assert_eq(got[i], 3 * (i - 500), "out[%d]", i);
  cubert_handle_release(call.in);
  cubert_handle_release(call.out);
  cubert_program_release(k.program);
}

/* CUBERT_OCLGRIND=1 (the CTest entry cts_program_oclgrind sets it): the device is Oclgrind's,
   and a program kernel with a scalar and a __local argument runs there with its checks on. */
Test(program, runs_under_the_oclgrind_switch) {
  const char *on = getenv("CUBERT_OCLGRIND");
  if (!on || strcmp(on, "1") != 0)
    cr_skip_test("set CUBERT_OCLGRIND=1 (ctest: cts_program_oclgrind)");
  cr_assert(cts_is_opencl());
  const char *name = cubert_client_properties(cts_client)->name;
  cr_assert(strstr(name, "Oclgrind"), "the device is '%s', not Oclgrind's", name);
  kernels k = make_kernels();
  int32_t data[16];
  for (int i = 0; i < 16; ++i) data[i] = i;
  cubert_handle *h = cts_buffer(data, sizeof data);
  cubert_arg args[2] = {cubert_arg_buffer(h), cubert_arg_local(8 * 4)};
  ASSERT_OK(cubert_client_launch_args(cts_client, k.reverse_local, one_d(2), dim_x(8), args, 2));
  cts_read(h, data, sizeof data);
  for (int i = 0; i < 16; ++i) cr_assert_eq(data[i], (i / 8) * 8 + 7 - i % 8, "data[%d]", i);
  cubert_handle_release(h);
  cubert_program_release(k.program);
}
