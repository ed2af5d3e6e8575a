/* bench_sanitizer: what the kernel sanitizer costs (docs/debugging.md). Times, on the CPU
   server, in checked mode and in validate mode (where the sanitizer runs):
     1. the tiled SGEMM example (examples/sgemm.cube.c: sgemm_tiled, PHASED_KERNEL), N^3;
     2. the row softmax example (examples/softmax.cube.c: softmax_rows, PHASED_KERNEL, 256 units);
     3. the library's axis reductions: cubert_op_reduce sum f32 over axis 1 and axis 0 of an
        M x M matrix;
     4. the Jacobi stencil example (examples/stencil.cube.c: jacobi_step, UNIT_KERNEL), M x M;
     5. the library's full reduction: cubert_op_reduce sum f32 over every axis of M x M.
   Each mode runs in a child process of its own (CUBERT_CHECK_MODE=enforce|validate, so the
   library's operations follow it too); each time is the median (with min and max) of --reps
   launches after a warm-up.
   With --oclgrind=VENDORS_DIR (the build's tests/oclgrind-vendors, holding Oclgrind's ICD) the
   same kernels' flattened OpenCL C also runs on Oclgrind's simulated device with its data-race
   and uninitialised-value checks on (as tests/oclgrind.sh runs it), at the --small-* sizes,
   and cubert's validate mode runs those sizes too, for a side-by-side factor.
   Usage: bench_sanitizer [--n=512] [--m=8192] [--rows=4096] [--cols=1024] [--reps=5]
                          [--oclgrind=DIR] [--small-n=64] [--small-m=256] [--small-rows=32]
   Child (internal): --child DEVICE N M ROWS COLS REPS. */
#include <cubert/cubert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

extern const cubert_kernel_def sgemm_tiled, softmax_rows, jacobi_step;

enum { KERNELS = 6 };

typedef struct sizes {
  uint32_t n, m, rows, cols;
  int reps;
} sizes;

/* A kernel's times over the repetitions, seconds. */
typedef struct timing {
  double median, min, max;
} timing;

static cubert_handle *filled(cubert_client *client, uint64_t count, float value) {
  float *host = malloc(count * sizeof *host);
  if (!host) exit(1);
  for (uint64_t i = 0; i < count; ++i) host[i] = value * (float)(1 + i % 7);
  cubert_handle *h = NULL;
  BENCH_CHECK(cubert_client_create_buffer(client, host, count * sizeof *host, &h));
  free(host);
  return h;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Prints "name median min max" for the child's parent. */
static void print_times(const char *name, double *t, int reps) {
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  double median = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
  printf("%s %.9f %.9f %.9f\n", name, median, t[0], t[reps - 1]);
  fflush(stdout);
}

static void time_kernel(const char *name, cubert_client *client, const cubert_kernel_def *k,
                        cubert_cube_count c, cubert_cube_dim d, const cubert_kernel_args *args,
                        int reps) {
  double t[16] = {0};
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(cubert_client_launch(client, k, c, d, args));
    BENCH_CHECK(cubert_client_sync(client));
    if (r >= 0) t[r] = bench_seconds_since(t0);
  }
  print_times(name, t, reps);
}

static cubert_tensor matrix(cubert_handle *h, uint32_t rows, uint32_t cols) {
  cubert_tensor t;
  memset(&t, 0, sizeof t);
  t.handle = h;
  t.dtype = CUBERT_DTYPE_F32;
  t.elem_size = 4;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

static void time_reduce(const char *name, cubert_client *client, const cubert_tensor *in,
                        uint32_t axis, const cubert_tensor *out, int reps) {
  /* The rank-1 output of the axis reductions; rank 0 for the full one. */
  cubert_tensor o = *out;
  if (axis == CUBERT_AXIS_ALL) o.rank = 0;
  double t[16] = {0};
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, in, axis, 0, &o));
    BENCH_CHECK(cubert_client_sync(client));
    if (r >= 0) t[r] = bench_seconds_since(t0);
  }
  print_times(name, t, reps);
}

static int child(const char *device, const sizes *z) {
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create(device, &client));
  /* 1. SGEMM */
  {
    const uint32_t n = z->n;
    cubert_handle *a = filled(client, (uint64_t)n * n, 0.01f);
    cubert_handle *b = filled(client, (uint64_t)n * n, 0.02f);
    cubert_handle *c = filled(client, (uint64_t)n * n, 0.0f);
    cubert_handle *bufs[3] = {a, b, c};
    const uint64_t info[3] = {n, n, n};
    const cubert_kernel_args args = {bufs, 3, info, 3};
    time_kernel("sgemm", client, &sgemm_tiled,
                cubert_cube_count_new_3d((n + 15) / 16, (n + 15) / 16, 1),
                cubert_cube_dim_new_3d(16, 16, 1), &args, z->reps);
    cubert_handle_release(a);
    cubert_handle_release(b);
    cubert_handle_release(c);
  }
  /* 2. softmax */
  {
    cubert_handle *x = filled(client, (uint64_t)z->rows * z->cols, 0.001f);
    cubert_handle *y = filled(client, (uint64_t)z->rows * z->cols, 0.0f);
    cubert_handle *bufs[2] = {x, y};
    const uint64_t info[2] = {z->rows, z->cols};
    const cubert_kernel_args args = {bufs, 2, info, 2};
    cubert_cube_count_selection sel;
    BENCH_CHECK(cubert_cube_count_select(client, z->rows, &sel));
    time_kernel("softmax", client, &softmax_rows, sel.cube_count, cubert_cube_dim_new_3d(256, 1, 1),
                &args, z->reps);
    cubert_handle_release(x);
    cubert_handle_release(y);
  }
  /* 3. axis reductions */
  {
    const uint32_t m = z->m;
    cubert_handle *in = filled(client, (uint64_t)m * m, 1.0f);
    cubert_handle *out = filled(client, m, 0.0f);
    const cubert_tensor tin = matrix(in, m, m);
    cubert_tensor tout = matrix(out, 1, m);
    tout.rank = 1;
    tout.shape[0] = m;
    tout.strides[0] = 1;
    time_reduce("reduce_rows", client, &tin, 1, &tout, z->reps);
    time_reduce("reduce_cols", client, &tin, 0, &tout, z->reps);
    /* 4. stencil, on the same grid */
    cubert_handle *next = filled(client, (uint64_t)m * m, 0.0f);
    cubert_handle *bufs[2] = {in, next};
    const uint64_t info[2] = {m, m};
    const cubert_kernel_args args = {bufs, 2, info, 2};
    time_kernel("stencil", client, &jacobi_step,
                cubert_cube_count_new_3d((m + 15) / 16, (m + 15) / 16, 1),
                cubert_cube_dim_new_3d(16, 16, 1), &args, z->reps);
    /* 5. full reduction */
    time_reduce("reduce_all", client, &tin, CUBERT_AXIS_ALL, &tout, z->reps);
    cubert_handle_release(next);
    cubert_handle_release(in);
    cubert_handle_release(out);
  }
  cubert_client_release(client);
  return 0;
}

/* Runs the child on `device` in `mode` with `env` (extra variables); fills t[KERNELS]. */
static void run_child(const char *self, const char *env, const char *device, const char *mode,
                      const sizes *z, timing t[KERNELS]) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s CUBERT_CHECK_MODE=%s %s --child %s %u %u %u %u %d", env, mode, self,
           device, z->n, z->m, z->rows, z->cols, z->reps);
  FILE *p = popen(cmd, "r");
  if (!p) exit(1);
  char name[64];
  int i = 0;
  while (i < KERNELS &&
         fscanf(p, "%63s %lf %lf %lf", name, &t[i].median, &t[i].min, &t[i].max) == 4)
    ++i;
  if (pclose(p) != 0 || i != KERNELS) {
    fprintf(stderr, "bench_sanitizer: the %s child on %s failed\n", mode, device);
    exit(1);
  }
}

static const char *const names[KERNELS] = {"sgemm_tiled",       "softmax_rows",
                                           "reduce sum axis 1", "reduce sum axis 0",
                                           "jacobi_step",       "reduce sum, all axes"};

static void shapes(const sizes *z, char shape[KERNELS][48]) {
  snprintf(shape[0], 48, "%u^3", z->n);
  snprintf(shape[1], 48, "%ux%u", z->rows, z->cols);
  for (int i = 2; i < KERNELS; ++i) snprintf(shape[i], 48, "%ux%u", z->m, z->m);
}

static void ms(const timing *t, char *out, size_t size) {
  snprintf(out, size, "%.2f (%.2f-%.2f)", t->median * 1e3, t->min * 1e3, t->max * 1e3);
}

static uint32_t arg_u32(const char *arg, const char *key, uint32_t *out) {
  size_t n = strlen(key);
  if (strncmp(arg, key, n)) return 0;
  *out = (uint32_t)atoi(arg + n);
  return 1;
}

int main(int argc, char **argv) {
  sizes z = {512, 8192, 4096, 1024, 5};
  sizes small = {64, 256, 32, 1024, 3};
  if (argc == 8 && !strcmp(argv[1], "--child")) {
    z.n = (uint32_t)atoi(argv[3]);
    z.m = (uint32_t)atoi(argv[4]);
    z.rows = (uint32_t)atoi(argv[5]);
    z.cols = (uint32_t)atoi(argv[6]);
    z.reps = atoi(argv[7]);
    return child(argv[2], &z);
  }
  const char *oclgrind = NULL;
  uint32_t reps = 5;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strncmp(a, "--oclgrind=", 11)) {
      oclgrind = a + 11;
    } else if (!(arg_u32(a, "--n=", &z.n) || arg_u32(a, "--m=", &z.m) ||
                 arg_u32(a, "--rows=", &z.rows) || arg_u32(a, "--cols=", &z.cols) ||
                 arg_u32(a, "--reps=", &reps) || arg_u32(a, "--small-n=", &small.n) ||
                 arg_u32(a, "--small-m=", &small.m) || arg_u32(a, "--small-rows=", &small.rows))) {
      fprintf(stderr,
              "usage: %s [--n=N] [--m=M] [--rows=R] [--cols=C] [--reps=R] [--oclgrind=DIR] "
              "[--small-n=N] [--small-m=M] [--small-rows=R]\n",
              argv[0]);
      return 2;
    }
  }
  z.reps = reps >= 1 && reps <= 16 ? (int)reps : 5;
  small.cols = z.cols;
  /* The children are this program (in the shell, /proc/self/exe would be the shell). */
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  timing checked[KERNELS], validate[KERNELS];
  run_child(self, "", "cpu", "enforce", &z, checked);
  run_child(self, "", "cpu", "validate", &z, validate);
  char shape[KERNELS][48], a[64], b[64];
  shapes(&z, shape);
  printf("CPU server, median (min-max) of %d launches:\n\n", z.reps);
  printf("| kernel | shape | checked (ms) | validate + sanitizer (ms) | factor |\n");
  printf("| --- | --- | --- | --- | --- |\n");
  for (int i = 0; i < KERNELS; ++i) {
    ms(&checked[i], a, sizeof a);
    ms(&validate[i], b, sizeof b);
    printf("| %s | %s | %s | %s | %.1fx |\n", names[i], shape[i], a, b,
           validate[i].median / checked[i].median);
  }
  if (!oclgrind) return 0;
  /* Oclgrind interprets every work-item: the small sizes, cubert's validate mode beside it. The
     autotuner is off there (it would time every candidate on the simulator). */
  timing mine[KERNELS], peer[KERNELS];
  run_child(self, "", "cpu", "validate", &small, mine);
  char env[1400];
  snprintf(env, sizeof env,
           "OCL_ICD_VENDORS=%s OCLGRIND_DATA_RACES=1 OCLGRIND_UNINITIALIZED=1 "
           "OCLGRIND_BUILD_OPTIONS=-cl-opt-disable CUBERT_POOLS_EXCLUSIVE=1 CUBERT_AUTOTUNE=off",
           oclgrind);
  run_child(self, env, "opencl:0", "validate", &small, peer);
  shapes(&small, shape);
  printf(
      "\nSide by side with Oclgrind (data-race and uninitialised checks), median (min-max) of "
      "%d launches:\n\n",
      small.reps);
  printf(
      "| kernel | shape | cubert validate + sanitizer (ms) | Oclgrind (ms) | cubert faster by |\n");
  printf("| --- | --- | --- | --- | --- |\n");
  for (int i = 0; i < KERNELS; ++i) {
    ms(&mine[i], a, sizeof a);
    ms(&peer[i], b, sizeof b);
    printf("| %s | %s | %s | %s | %.0fx |\n", names[i], shape[i], a, b,
           peer[i].median / mine[i].median);
  }
  return 0;
}
