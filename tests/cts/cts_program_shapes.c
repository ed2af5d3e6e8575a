/* Program kernels of the shapes real OpenCL programs have (issue 38: the Rodinia benchmarks'
   hotspot, pathfinder, and a kernel of ten scalar arguments), written for these tests, launched
   unchanged through cubert/program.h and compared with the host's results. Pathfinder and the
   ten scalars bring CPU functions, so both servers compute them. */
#include <cubert/program.h>
#include <limits.h>
#include <stdint.h>

#include "cts.h"

TestSuite(program_shapes, .init = cts_setup, .fini = cts_teardown);

/* ---- hotspot: a 2-D stencil over a __local tile that a called function reads -------------- */

static const char *kHotspot =
    "#define TILE 16\n"
    "/* The temperature at (r, c), clamped to the grid: from the cube's tile where it lies in\n"
    "   it, else from global memory. */\n"
    "static float cell(__local float (*tile)[TILE], __global const float *temp, int rows,\n"
    "                  int cols, int r, int c, int r0, int c0) {\n"
    "  r = clamp(r, 0, rows - 1);\n"
    "  c = clamp(c, 0, cols - 1);\n"
    "  int lr = r - r0, lc = c - c0;\n"
    "  if (lr >= 0 && lr < TILE && lc >= 0 && lc < TILE) return tile[lr][lc];\n"
    "  return temp[r * cols + c];\n"
    "}\n"
    "__kernel void hotspot(__global const float *power, __global const float *temp,\n"
    "                      __global float *out, int rows, int cols, float k) {\n"
    "  __local float tile[TILE][TILE];\n"
    "  int lr = get_local_id(1), lc = get_local_id(0);\n"
    "  int r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;\n"
    "  int r = r0 + lr, c = c0 + lc;\n"
    "  int inside = r < rows && c < cols;\n"
    "  tile[lr][lc] = inside ? temp[r * cols + c] : 0.0f;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (!inside) return;\n"
    "  float t = tile[lr][lc];\n"
    "  float sum = cell(tile, temp, rows, cols, r - 1, c, r0, c0) +\n"
    "              cell(tile, temp, rows, cols, r + 1, c, r0, c0) +\n"
    "              cell(tile, temp, rows, cols, r, c - 1, r0, c0) +\n"
    "              cell(tile, temp, rows, cols, r, c + 1, r0, c0);\n"
    "  out[r * cols + c] = t + k * (sum - 4.0f * t) + power[r * cols + c];\n"
    "}\n";

static float clamped(const float *t, int rows, int cols, int r, int c) {
  r = r < 0 ? 0 : r >= rows ? rows - 1 : r;
  c = c < 0 ? 0 : c >= cols ? cols - 1 : c;
  return t[r * cols + c];
}

Test(program_shapes, hotspot_with_a_local_tile_read_by_a_called_function) {
  if (!cts_is_opencl()) cr_skip_test("OpenCL only (no CPU function)");
  enum { ROWS = 40, COLS = 24, STEPS = 3 };
  const float k = 0.125f;
  float power[ROWS * COLS], temp[ROWS * COLS], want[ROWS * COLS], got[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; ++i) {
    power[i] = (float)(i % 7) * 0.01f;
    temp[i] = 300.0f + (float)((i * 37) % 23);
  }
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  ASSERT_OK(cubert_program_create(kHotspot, NULL, &p));
  ASSERT_OK(cubert_program_kernel(p, "hotspot", NULL, &def));
  cubert_handle *hp = cts_buffer(power, sizeof power), *ht[2] = {cts_buffer(temp, sizeof temp)};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof temp, &ht[1]));
  int32_t rows = ROWS, cols = COLS;
  for (int s = 0; s < STEPS; ++s) {
    cubert_arg args[6] = {
        cubert_arg_buffer(hp),  cubert_arg_buffer(ht[s % 2]), cubert_arg_buffer(ht[1 - s % 2]),
        CUBERT_ARG_VALUE(rows), CUBERT_ARG_VALUE(cols),       CUBERT_ARG_VALUE(k)};
    ASSERT_OK(cubert_client_launch_args(cts_client, def, cubert_cube_count_new_3d(2, 3, 1),
                                        cubert_cube_dim_new_3d(16, 16, 1), args, 6));
    for (int r = 0; r < ROWS; ++r)
      for (int c = 0; c < COLS; ++c) {
        float t = temp[r * COLS + c];
        float sum = clamped(temp, ROWS, COLS, r - 1, c) + clamped(temp, ROWS, COLS, r + 1, c) +
                    clamped(temp, ROWS, COLS, r, c - 1) + clamped(temp, ROWS, COLS, r, c + 1);
        want[r * COLS + c] = t + k * (sum - 4.0f * t) + power[r * COLS + c];
      }
    memcpy(temp, want, sizeof temp);
  }
  cts_read(ht[STEPS % 2], got, sizeof got);
  for (int i = 0; i < ROWS * COLS; ++i)
    cr_assert_float_eq(got[i], want[i], 1e-3, "cell %d: %g, expected %g", i, got[i], want[i]);
  cubert_handle_release(hp);
  cubert_handle_release(ht[0]);
  cubert_handle_release(ht[1]);
  cubert_program_release(p);
}

/* ---- pathfinder: a row-by-row minimum path with a host-sized __local argument --------------- */

static const char *kPathfinder =
    "__kernel void pathfinder(__global const int *wall, __global const int *src,\n"
    "                         __global int *dst, int cols, int row, __local int *prev) {\n"
    "  int c = get_global_id(0), l = get_local_id(0), size = get_local_size(0);\n"
    "  prev[l] = c < cols ? src[c] : 0;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (c >= cols) return;\n"
    "  int left = c == 0 ? INT_MAX : l > 0 ? prev[l - 1] : src[c - 1];\n"
    "  int right = c == cols - 1 ? INT_MAX : l < size - 1 ? prev[l + 1] : src[c + 1];\n"
    "  dst[c] = wall[row * cols + c] + min(prev[l], min(left, right));\n"
    "}\n";

static int min_int(int a, int b) {
  return a < b ? a : b;
}

/* The same kernel for the CPU server: one call per unit, a cube barrier after the loads. */
static void pathfinder_cpu(const cubert_cpu_ctx *ctx) {
  const int32_t *wall = cubert_cpu_arg_buffer(ctx, 0), *src = cubert_cpu_arg_buffer(ctx, 1);
  int32_t *dst = cubert_cpu_arg_buffer(ctx, 2), *prev = cubert_cpu_arg_local(ctx, 5);
  int32_t cols = 0, row = 0;
  cubert_cpu_arg_get(ctx, 3, &cols, 4);
  cubert_cpu_arg_get(ctx, 4, &row, 4);
  const int c = (int)ctx->unit_begin, l = (int)cubert_cpu_unit_linear(ctx, ctx->unit_begin);
  const int size = (int)ctx->cube_dim[0];
  prev[l] = c < cols ? src[c] : 0;
  cubert_cpu_sync_cube(ctx);
  if (c >= cols) return;
  int left = c == 0 ? INT_MAX : l > 0 ? prev[l - 1] : src[c - 1];
  int right = c == cols - 1 ? INT_MAX : l < size - 1 ? prev[l + 1] : src[c + 1];
  dst[c] = wall[row * cols + c] + min_int(prev[l], min_int(left, right));
}

Test(program_shapes, pathfinder_with_a_host_sized_local_argument) {
  enum { ROWS = 12, COLS = 200, DIM = 64 };
  int32_t wall[ROWS * COLS], want[COLS], next[COLS], got[COLS];
  for (int i = 0; i < ROWS * COLS; ++i) wall[i] = (i * 7919) % 10;
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  ASSERT_OK(cubert_program_create(kPathfinder, NULL, &p));
  cubert_program_kernel_options o = {
      .cpu = pathfinder_cpu, .flags = CUBERT_KERNEL_SYNC_CUBE, .cpu_local_bytes = DIM * 4};
  ASSERT_OK(cubert_program_kernel(p, "pathfinder", &o, &def));
  cubert_handle *hw = cts_buffer(wall, sizeof wall), *rowbuf[2] = {cts_buffer(wall, COLS * 4)};
  ASSERT_OK(cubert_client_empty(cts_client, COLS * 4, &rowbuf[1]));
  memcpy(want, wall, sizeof want);
  int32_t cols = COLS;
  for (int32_t r = 1; r < ROWS; ++r) {
    cubert_arg args[6] = {cubert_arg_buffer(hw),
                          cubert_arg_buffer(rowbuf[(r - 1) % 2]),
                          cubert_arg_buffer(rowbuf[r % 2]),
                          CUBERT_ARG_VALUE(cols),
                          CUBERT_ARG_VALUE(r),
                          cubert_arg_local(DIM * 4)};
    ASSERT_OK(cubert_client_launch_args(cts_client, def,
                                        cubert_cube_count_new_3d((COLS + DIM - 1) / DIM, 1, 1),
                                        cubert_cube_dim_new_3d(DIM, 1, 1), args, 6));
    for (int c = 0; c < COLS; ++c) {
      int best = want[c];
      if (c > 0) best = min_int(best, want[c - 1]);
      if (c < COLS - 1) best = min_int(best, want[c + 1]);
      next[c] = wall[r * COLS + c] + best;
    }
    memcpy(want, next, sizeof want);
  }
  cts_read(rowbuf[(ROWS - 1) % 2], got, sizeof got);
  for (int c = 0; c < COLS; ++c) cr_assert_eq(got[c], want[c], "column %d", c);
  cubert_handle_release(hw);
  cubert_handle_release(rowbuf[0]);
  cubert_handle_release(rowbuf[1]);
  cubert_program_release(p);
}

/* ---- ten scalar arguments of six types ------------------------------------------------------ */

static const char *kTen =
    "__kernel void ten(__global float *out, int n, float a, float b, float c, float d, int e,\n"
    "                  uint f, long g, float h, short i) {\n"
    "  int x = get_global_id(0);\n"
    "  if (x >= n) return;\n"
    "  out[x] = a * x + b - c + 2.0f * d + (float)e + (float)f + (float)g + h * x + (float)i;\n"
    "}\n";

typedef struct ten_args {
  int32_t n;
  float a, b, c, d;
  int32_t e;
  uint32_t f;
  int64_t g;
  float h;
  int16_t i;
} ten_args;

static float ten_value(const ten_args *t, int x) {
  return t->a * (float)x + t->b - t->c + 2.0f * t->d + (float)t->e + (float)t->f + (float)t->g +
         t->h * (float)x + (float)t->i;
}

CUBERT_CPU_KERNEL(ten_cpu, ctx, id) {
  ten_args t = {0};
  float *out = cubert_cpu_arg_buffer(ctx, 0);
  cubert_cpu_arg_get(ctx, 1, &t.n, 4);
  cubert_cpu_arg_get(ctx, 2, &t.a, 4);
  cubert_cpu_arg_get(ctx, 3, &t.b, 4);
  cubert_cpu_arg_get(ctx, 4, &t.c, 4);
  cubert_cpu_arg_get(ctx, 5, &t.d, 4);
  cubert_cpu_arg_get(ctx, 6, &t.e, 4);
  cubert_cpu_arg_get(ctx, 7, &t.f, 4);
  cubert_cpu_arg_get(ctx, 8, &t.g, 8);
  cubert_cpu_arg_get(ctx, 9, &t.h, 4);
  cubert_cpu_arg_get(ctx, 10, &t.i, 2);
  if (id < (uint64_t)t.n) out[id] = ten_value(&t, (int)id);
}

Test(program_shapes, ten_scalar_arguments_in_order) {
  enum { N = 100 };
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  ASSERT_OK(cubert_program_create(kTen, NULL, &p));
  cubert_program_kernel_options o = {.cpu = ten_cpu};
  ASSERT_OK(cubert_program_kernel(p, "ten", &o, &def));
  ten_args t = {N, 0.5f, 2.0f, 1.0f, 3.0f, -7, 11u, 100000, 0.25f, -3};
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &out));
  cubert_arg args[11] = {cubert_arg_buffer(out), CUBERT_ARG_VALUE(t.n), CUBERT_ARG_VALUE(t.a),
                         CUBERT_ARG_VALUE(t.b),  CUBERT_ARG_VALUE(t.c), CUBERT_ARG_VALUE(t.d),
                         CUBERT_ARG_VALUE(t.e),  CUBERT_ARG_VALUE(t.f), CUBERT_ARG_VALUE(t.g),
                         CUBERT_ARG_VALUE(t.h),  CUBERT_ARG_VALUE(t.i)};
  ASSERT_OK(cubert_client_launch_args(cts_client, def, cubert_cube_count_new_3d(4, 1, 1),
                                      cubert_cube_dim_new_3d(32, 1, 1), args, 11));
  float got[N];
  cts_read(out, got, sizeof got);
  for (int x = 0; x < N; ++x)
    cr_assert_float_eq(got[x], ten_value(&t, x), 1e-2, "out[%d] = %g", x, got[x]);
  cubert_handle_release(out);
  cubert_program_release(p);
}
