/* ops_elementwise — bandwidth of the elementwise and copy operations of cubert/ops.h against
   the STREAM triad measured in the same process (informative, issue 12):
     - binary add f32: dense, a row broadcast (4096 x 4096 + 4096), a scalar broadcast;
     - copy: dense; a 4096 x 4096 transpose (the tiled kernel); the same bytes as two 2048 x
       4096 transposes of a batch (a rank-3 permute, so the plain strided kernel); a sliced copy
       (every second element of each row);
     - cubert_client_read_tensor of a transposed view (the device-side gather plus the read).
   Bandwidth counts the bytes an op must move (each input element read once, each output
   element written once; a broadcast operand that stays in cache counts once).

     bench_ops_elementwise [both|SELECTOR] [n_side]   (default: both = cpu then opencl; 4096)
   SELECTOR is any device selector (cpu, opencl, opencl:gpu, opencl:1, ...).

   Medians of 9 timed runs (min–max) after two warm-up runs (which also tune the copy's cube
   dim, cubert/tune.h). Each run is the op and a cubert_client_sync. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cubert/geometry.h"
#include "cubert/kernels.h"
#include "cubert/ops.h"

#ifdef _OPENMP
#include <omp.h>
#define BENCH_OMP(text) _Pragma(text)
#else
#define BENCH_OMP(text)
#endif

#define REPS 9

/* STREAM triad a = b + s*c over floats; seconds. */
static double triad(float *restrict a, const float *restrict b, const float *restrict c,
                    uint64_t n) {
  uint64_t t0 = bench_now_ns();
  BENCH_OMP("omp parallel for schedule(static)")
  for (uint64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
  return bench_seconds_since(t0);
}

typedef enum { OP_ADD, OP_COPY, OP_READ, OP_LIB_ADD } op_kind;

typedef struct job {
  const char *what;
  op_kind kind;
  cubert_tensor a, b, out;
  double bytes;
} job;

static double run_once(cubert_client *client, const job *j, void *host, size_t host_size) {
  const uint64_t t0 = bench_now_ns();
  if (j->kind == OP_ADD)
    BENCH_CHECK(cubert_op_binary(client, CUBERT_BINARY_ADD, &j->a, &j->b, &j->out));
  else if (j->kind == OP_LIB_ADD) {
    cubert_handle *buffers[3] = {j->a.handle, j->b.handle, j->out.handle};
    uint64_t info[1] = {j->a.shape[0]};
    cubert_kernel_args args = {buffers, 3, info, 1};
    const uint64_t cubes = (info[0] + 255) / 256;
    cubert_cube_count_selection sel;
    BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_add_f32, sel.cube_count,
                                     cubert_cube_dim_new_3d(256, 1, 1), &args));
  } else if (j->kind == OP_COPY)
    BENCH_CHECK(cubert_op_copy(client, &j->a, &j->out));
  else {
    cubert_copy_desc d;
    BENCH_CHECK(cubert_copy_desc_from_tensor(&j->a, &d));
    BENCH_CHECK(cubert_client_read_tensor(client, &d, host, host_size));
  }
  BENCH_CHECK(cubert_client_sync(client));
  return bench_seconds_since(t0);
}

static cubert_tensor view(cubert_handle *h, uint32_t rank, const uint64_t *shape,
                          const uint64_t *strides) {
  cubert_tensor t;
  memset(&t, 0, sizeof t);
  t.handle = h;
  t.rank = rank;
  t.elem_size = 4;
  t.dtype = CUBERT_DTYPE_F32;
  for (uint32_t d = 0; d < rank; ++d) {
    t.shape[d] = shape[d];
    t.strides[d] = strides[d];
  }
  return t;
}

static void run_device(const char *selector, uint64_t side) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    printf("\n(%s: no device: %s)\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return;
  }
  const uint64_t n = side * side;
  const size_t bytes = n * sizeof(float);
  float *host = bench_huge_alloc(bytes), *hb = bench_huge_alloc(bytes),
        *hc = bench_huge_alloc(bytes);
  for (uint64_t i = 0; i < n; ++i) host[i] = hb[i] = hc[i] = (float)(i % 1000);
  cubert_handle *x = NULL, *y = NULL, *z = NULL, *row = NULL, *scalar = NULL;
  BENCH_CHECK(cubert_client_create_buffer(client, host, bytes, &x));
  BENCH_CHECK(cubert_client_create_buffer(client, host, bytes, &y));
  BENCH_CHECK(cubert_client_create_buffer(client, host, bytes, &z));
  BENCH_CHECK(cubert_client_create_buffer(client, host, side * sizeof(float), &row));
  BENCH_CHECK(cubert_client_create_buffer(client, host, sizeof(float), &scalar));

  const uint64_t flat[1] = {n}, unit[1] = {1}, sq[2] = {side, side}, rm[2] = {side, 1},
                 tr[2] = {1, side}, half_sq[2] = {side, side / 2}, slice[2] = {side, 2},
                 b3[3] = {2, side, side / 2}, b3_in[3] = {n / 2, 1, side};
  const uint64_t b3_out[3] = {n / 2, side / 2, 1}, vec[1] = {side};
  job jobs[] = {
      {"add f32 dense", OP_ADD, view(x, 1, flat, unit), view(y, 1, flat, unit),
       view(z, 1, flat, unit), 12.0 * n},
      {"peer: library add_f32 kernel, dense", OP_LIB_ADD, view(x, 1, flat, unit),
       view(y, 1, flat, unit), view(z, 1, flat, unit), 12.0 * n},
      {"add f32 row broadcast", OP_ADD, view(x, 2, sq, rm), view(row, 1, vec, unit),
       view(z, 2, sq, rm), 8.0 * n},
      {"add f32 scalar broadcast", OP_ADD, view(x, 1, flat, unit), view(scalar, 0, flat, unit),
       view(z, 1, flat, unit), 8.0 * n},
      {"copy dense", OP_COPY, view(x, 1, flat, unit), {0}, view(z, 1, flat, unit), 8.0 * n},
      {"copy 2-D transpose (tiled)", OP_COPY, view(x, 2, sq, tr), {0}, view(z, 2, sq, rm), 8.0 * n},
      {"copy 2 x transpose, rank 3 (strided)",
       OP_COPY,
       view(x, 3, b3, b3_in),
       {0},
       view(z, 3, b3, b3_out),
       8.0 * n},
      {"copy sliced rows (stride 2)",
       OP_COPY,
       view(x, 2, half_sq, slice),
       {0},
       view(z, 2, half_sq, (const uint64_t[2]){side / 2, 1}),
       4.0 * n},
      {"read_tensor of a transpose", OP_READ, view(x, 2, sq, tr), {0}, {0}, 8.0 * n},
  };
  const size_t count = sizeof jobs / sizeof jobs[0];

  const cubert_device_properties *p = cubert_client_properties(client);
  printf("\n## %s: %s, %llu x %llu f32 (%.0f MiB per array)\n\n", selector, p->name,
         (unsigned long long)side, (unsigned long long)side, bytes / 1048576.0);
  const char *titles[] = {"operation", "GB/s median (min–max)", "÷ triad"};
  double tt[REPS];
  triad(host, hb, hc, n);
  for (int r = 0; r < REPS; ++r) tt[r] = triad(host, hb, hc, n);
  const bench_stats triad_bw = bench_stats_rate(bench_stats_of(tt, REPS), 12.0 * n * 1e-9);
  bench_table_header(stdout, titles, 3);
  bench_text tb = bench_textf("%s (%s)", bench_fmt_median(triad_bw).s, bench_fmt_range(triad_bw).s);
  const char *triad_row[] = {"STREAM triad (host, OpenMP)", tb.s, "1"};
  bench_table_row(stdout, triad_row, 3);
  for (size_t j = 0; j < count; ++j) {
    double t[REPS];
    run_once(client, &jobs[j], host, bytes);
    run_once(client, &jobs[j], host, bytes);
    for (int r = 0; r < REPS; ++r) t[r] = run_once(client, &jobs[j], host, bytes);
    const bench_stats bw = bench_stats_rate(bench_stats_of(t, REPS), jobs[j].bytes * 1e-9);
    bench_text cell = bench_textf("%s (%s)", bench_fmt_median(bw).s, bench_fmt_range(bw).s),
               ratio = bench_fmt(bw.median / triad_bw.median);
    const char *cells[] = {jobs[j].what, cell.s, ratio.s};
    bench_table_row(stdout, cells, 3);
  }
  cubert_handle *all[5] = {x, y, z, row, scalar};
  for (int i = 0; i < 5; ++i) cubert_handle_release(all[i]);
  bench_huge_free(host, bytes);
  bench_huge_free(hb, bytes);
  bench_huge_free(hc, bytes);
  cubert_client_release(client);
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "both";
  const uint64_t side = argc > 2 ? strtoull(argv[2], NULL, 10) : 4096;
  if (side < 2 || side % 2) {
    fprintf(stderr, "n_side must be even and at least 2\n");
    return 2;
  }
  bench_print_env(stdout);
  if (!strcmp(which, "both")) {
    run_device("cpu", side);
    run_device("opencl", side);
  } else {
    run_device(which, side); /* any device selector: cpu, opencl, opencl:gpu, opencl:1, ... */
  }
  return 0;
}
