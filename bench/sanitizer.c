/* bench_sanitizer: what the kernel sanitizer costs (docs/debugging.md). Times, on the CPU
   server, in checked mode and in validate mode (where the sanitizer runs):
     1. the tiled SGEMM example (examples/sgemm.cube.c: sgemm_tiled, PHASED_KERNEL), N^3;
     2. the row softmax example (examples/softmax.cube.c: softmax_rows, PHASED_KERNEL, 256 units);
     3. the library's axis reductions: cubert_op_reduce sum f32 over axis 1 and axis 0 of an
        M x M matrix.
   Each mode runs in a child process of its own (CUBERT_CHECK_MODE=checked|validate, so the
   library's operations follow it too); times are the best of --reps launches after a warm-up.
   Usage: bench_sanitizer [--n=512] [--m=8192] [--rows=4096] [--cols=1024] [--reps=3]
   Child (internal): --child N M ROWS COLS REPS. */
#include <cubert/cubert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

extern const cubert_kernel_def sgemm_tiled, softmax_rows;

typedef struct sizes {
  uint32_t n, m, rows, cols;
  int reps;
} sizes;

static cubert_handle *filled(cubert_client *client, uint64_t count, float value) {
  float *host = malloc(count * sizeof *host);
  if (!host) exit(1);
  for (uint64_t i = 0; i < count; ++i) host[i] = value * (float)(1 + i % 7);
  cubert_handle *h = NULL;
  BENCH_CHECK(cubert_client_create_buffer(client, host, count * sizeof *host, &h));
  free(host);
  return h;
}

static double best_of(double *t, int reps) {
  double best = t[0];
  for (int i = 1; i < reps; ++i)
    if (t[i] < best) best = t[i];
  return best;
}

static double time_kernel(cubert_client *client, const cubert_kernel_def *k, cubert_cube_count c,
                          cubert_cube_dim d, const cubert_kernel_args *args, int reps) {
  double t[16] = {0};
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(cubert_client_launch(client, k, c, d, args));
    BENCH_CHECK(cubert_client_sync(client));
    if (r >= 0) t[r] = bench_seconds_since(t0);
  }
  return best_of(t, reps);
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

static double time_reduce(cubert_client *client, const cubert_tensor *in, uint32_t axis,
                          const cubert_tensor *out, int reps) {
  double t[16] = {0};
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, in, axis, 0, out));
    BENCH_CHECK(cubert_client_sync(client));
    if (r >= 0) t[r] = bench_seconds_since(t0);
  }
  return best_of(t, reps);
}

static int child(const sizes *z) {
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create("cpu", &client));
  /* 1. SGEMM */
  {
    const uint32_t n = z->n;
    cubert_handle *a = filled(client, (uint64_t)n * n, 0.01f);
    cubert_handle *b = filled(client, (uint64_t)n * n, 0.02f);
    cubert_handle *c = filled(client, (uint64_t)n * n, 0.0f);
    cubert_handle *bufs[3] = {a, b, c};
    const uint64_t info[3] = {n, n, n};
    const cubert_kernel_args args = {bufs, 3, info, 3};
    double s =
        time_kernel(client, &sgemm_tiled, cubert_cube_count_new_3d((n + 15) / 16, (n + 15) / 16, 1),
                    cubert_cube_dim_new_3d(16, 16, 1), &args, z->reps);
    printf("sgemm %.6f\n", s);
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
    double s = time_kernel(client, &softmax_rows, sel.cube_count, cubert_cube_dim_new_3d(256, 1, 1),
                           &args, z->reps);
    printf("softmax %.6f\n", s);
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
    printf("reduce_rows %.6f\n", time_reduce(client, &tin, 1, &tout, z->reps));
    printf("reduce_cols %.6f\n", time_reduce(client, &tin, 0, &tout, z->reps));
    cubert_handle_release(in);
    cubert_handle_release(out);
  }
  cubert_client_release(client);
  return 0;
}

/* Runs the child in `mode`; fills t[4] (seconds). */
static void run_child(const char *self, const char *mode, const sizes *z, double t[4]) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "CUBERT_CHECK_MODE=%s %s --child %u %u %u %u %d", mode, self, z->n,
           z->m, z->rows, z->cols, z->reps);
  FILE *p = popen(cmd, "r");
  if (!p) exit(1);
  char name[64];
  double s;
  int i = 0;
  while (i < 4 && fscanf(p, "%63s %lf", name, &s) == 2) t[i++] = s;
  if (pclose(p) != 0 || i != 4) {
    fprintf(stderr, "bench_sanitizer: the %s child failed\n", mode);
    exit(1);
  }
}

int main(int argc, char **argv) {
  sizes z = {512, 8192, 4096, 1024, 3};
  if (argc == 7 && !strcmp(argv[1], "--child")) {
    z.n = (uint32_t)atoi(argv[2]);
    z.m = (uint32_t)atoi(argv[3]);
    z.rows = (uint32_t)atoi(argv[4]);
    z.cols = (uint32_t)atoi(argv[5]);
    z.reps = atoi(argv[6]);
    return child(&z);
  }
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "--n=", 4))
      z.n = (uint32_t)atoi(argv[i] + 4);
    else if (!strncmp(argv[i], "--m=", 4))
      z.m = (uint32_t)atoi(argv[i] + 4);
    else if (!strncmp(argv[i], "--rows=", 7))
      z.rows = (uint32_t)atoi(argv[i] + 7);
    else if (!strncmp(argv[i], "--cols=", 7))
      z.cols = (uint32_t)atoi(argv[i] + 7);
    else if (!strncmp(argv[i], "--reps=", 7))
      z.reps = atoi(argv[i] + 7);
    else {
      fprintf(stderr, "usage: %s [--n=N] [--m=M] [--rows=R] [--cols=C] [--reps=R]\n", argv[0]);
      return 2;
    }
  }
  if (z.reps < 1 || z.reps > 16) z.reps = 3;
  /* The children are this program (in the shell, /proc/self/exe would be the shell). */
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  double checked[4], validate[4];
  run_child(self, "enforce", &z, checked);
  run_child(self, "validate", &z, validate);
  const char *names[4] = {"sgemm_tiled", "softmax_rows", "reduce sum axis 1", "reduce sum axis 0"};
  char shape[4][48];
  snprintf(shape[0], sizeof shape[0], "%u^3", z.n);
  snprintf(shape[1], sizeof shape[1], "%ux%u", z.rows, z.cols);
  snprintf(shape[2], sizeof shape[2], "%ux%u", z.m, z.m);
  snprintf(shape[3], sizeof shape[3], "%ux%u", z.m, z.m);
  printf("| kernel | shape | checked (ms) | validate + sanitizer (ms) | factor |\n");
  printf("| --- | --- | --- | --- | --- |\n");
  for (int i = 0; i < 4; ++i)
    printf("| %s | %s | %.2f | %.2f | %.1fx |\n", names[i], shape[i], checked[i] * 1e3,
           validate[i] * 1e3, validate[i] / checked[i]);
  return 0;
}
