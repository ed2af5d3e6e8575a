/* bench/reduce.c — the kernel library's reductions and softmax (issue 12) against the
   machine's bandwidth, in the same run.

   Measured (wall clock of one call + cubert_client_sync, after the tuner has chosen; every
   variant interleaved rep by rep so load changes hit all alike; medians with min–max):
   1. cubert_op_reduce sum f32 over the inner axis (axis 1: row sums) and the outer axis
      (axis 0: column sums) of an N x N row-major matrix (default 8192² = 256 MiB). Bytes:
      N² * 4 read + N * 4 written.
   2. cubert_op_softmax f32 of an M x M matrix (default 4096²) into another. Bytes: 2 passes
      over the data, read + write = 2 * M² * 4 (the minimum; the kernel's second and third
      passes over a row hit the cache).
   3. Full reduction sum f32 (CUBERT_AXIS_ALL) of N² floats (informative).
   Peers: the STREAM triad (bench_triad.h: OpenMP static, as many threads as the CPU server
   has workers, 2 MiB THP arrays of N² floats each; bytes 3 * n * 4), the target on the CPU
   server; and on an OpenCL device a raw clEnqueueCopyBuffer of N² floats (bytes 2 * n * 4),
   the target on a GPU. Targets (issue 12): reductions >= 80% of the triad on the CPU server
   and >= 80% of raw copy on a GPU; softmax >= 60% of the triad on the CPU server.

   Each rep times a batch of B calls (and B triads, B copies) and divides: steady-state
   throughput.

   Usage: bench_reduce [--device=SELECTOR] [--n=N] [--m=M] [--reps=R] [--batch=B]   (default
   cpu, 8192, 4096, 10, 4). The tuner's disk cache is a fresh folder, so the run tunes (its time is
   printed) and the winners are listed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_ocl.h"
#include "bench_triad.h"
#include "bench_util.h"
#include "cubert/cubert.h"
#include "cubert/ops.h"

static cubert_tensor matrix(cubert_handle *h, uint64_t rows, uint64_t cols) {
  cubert_tensor t;
  memset(&t, 0, sizeof t);
  t.handle = h;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.elem_size = 4;
  t.dtype = CUBERT_DTYPE_F32;
  return t;
}

static cubert_tensor vector(cubert_handle *h, uint64_t n) {
  cubert_tensor t = matrix(h, n, 1);
  t.rank = 1;
  t.strides[0] = 1;
  return t;
}

static void fill(cubert_client *client, cubert_handle *h, uint64_t n, float value) {
  uint64_t info[2] = {n, cubert_kernel_info_f32(value)};
  cubert_handle *bufs[1] = {h};
  cubert_kernel_args args = {bufs, 1, info, 2};
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)(n / 256 + 1), &sel));
  BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_fill_u32, sel.cube_count,
                                   cubert_cube_dim_new_3d(256, 1, 1), &args));
}

static void expect(cubert_client *client, cubert_handle *h, uint64_t count, float want,
                   const char *what) {
  float *v = malloc(count * 4);
  BENCH_CHECK(cubert_client_read(client, h, v, count * 4));
  for (uint64_t i = 0; i < count; ++i)
    if (!(fabsf(v[i] - want) <= 1e-3f * fabsf(want))) {
      fprintf(stderr, "%s: element %llu is %g, expected %g\n", what, (unsigned long long)i,
              (double)v[i], (double)want);
      exit(1);
    }
  free(v);
}

/* Each timing is a batch of `batch` calls and one sync, divided by the batch: steady-state
   throughput, so that what the previous measurement left behind (on the H200, the copy peer's
   dirty L2 lines written back during the next kernel: 15 µs on a 72 µs row sum) weighs on no
   single call. */
static double timed_reduce(cubert_client *client, const cubert_tensor *in, uint32_t axis,
                           const cubert_tensor *out, int batch) {
  uint64_t t0 = bench_now_ns();
  for (int b = 0; b < batch; ++b)
    BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, in, axis, 0, out));
  BENCH_CHECK(cubert_client_sync(client));
  return bench_seconds_since(t0) / batch;
}

static double timed_softmax(cubert_client *client, const cubert_tensor *in,
                            const cubert_tensor *out, int batch) {
  uint64_t t0 = bench_now_ns();
  for (int b = 0; b < batch; ++b) BENCH_CHECK(cubert_op_softmax(client, in, out));
  BENCH_CHECK(cubert_client_sync(client));
  return bench_seconds_since(t0) / batch;
}

static void print_entry(const cubert_tune_entry *e, void *user) {
  (void)user;
  if (strncmp(e->set_name, "ops.", 4) != 0) return;
  printf("- %s key (", e->set_name);
  for (uint32_t i = 0; i < e->key.count; ++i)
    printf("%s%llu", i ? ", " : "", (unsigned long long)e->key.fields[i]);
  printf("): %s, %.3f ms\n", e->winner_name, (double)e->winner_ns / 1e6);
}

int main(int argc, char **argv) {
  const char *selector = "cpu";
  uint64_t n = 8192, m = 4096;
  int reps = 10, batch = 4;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--device=", 9) == 0)
      selector = argv[i] + 9;
    else if (strncmp(argv[i], "--n=", 4) == 0)
      n = strtoull(argv[i] + 4, NULL, 10);
    else if (strncmp(argv[i], "--m=", 4) == 0)
      m = strtoull(argv[i] + 4, NULL, 10);
    else if (strncmp(argv[i], "--reps=", 7) == 0)
      reps = atoi(argv[i] + 7);
    else if (strncmp(argv[i], "--batch=", 8) == 0)
      batch = atoi(argv[i] + 8);
    else {
      fprintf(stderr, "usage: %s [--device=SELECTOR] [--n=N] [--m=M] [--reps=R] [--batch=B]\n",
              argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (batch < 1) batch = 1;
  {
    const char *names[] = {"OMP_WAIT_POLICY"};
    const char *values[] = {"passive"};
    bench_reexec_with_env(argv, "BENCH_REDUCE_RESTARTED", names, values, 1);
  }
  char dir[512];
  if (bench_temp_dir("cubert-bench-reduce-", dir, sizeof dir) != 0) return 1;
  setenv("CUBERT_CACHE_DIR", dir, 1);

  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create(selector, &client));
  const cubert_device_properties *p = cubert_client_properties(client);
  /* The triad runs on the host: as many threads as the CPU server has workers (or the CPU
     device's compute units), and the host's processors beside a GPU, not its compute units. */
  const long host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads =
      (int)(p->hardware.num_cpu_cores ? p->hardware.num_cpu_cores
            : p->type == CUBERT_DEVICE_TYPE_OPENCL_CPU && p->hardware.num_compute_units
                ? p->hardware.num_compute_units
            : host_cpus > 0 ? host_cpus
                            : 1);
  printf("# bench_reduce --device=%s --n=%llu --m=%llu --reps=%d --batch=%d\n\n", selector,
         (unsigned long long)n, (unsigned long long)m, reps, batch);
  bench_print_env(stdout);
  bench_print_device(stdout, p);

  const uint64_t nn = n * n, mm = m * m;
  cubert_handle *a = NULL, *rows = NULL, *cols = NULL, *all = NULL, *sx = NULL, *sy = NULL;
  BENCH_CHECK(cubert_client_empty(client, nn * 4, &a));
  BENCH_CHECK(cubert_client_empty(client, n * 4, &rows));
  BENCH_CHECK(cubert_client_empty(client, n * 4, &cols));
  BENCH_CHECK(cubert_client_empty(client, 4, &all));
  BENCH_CHECK(cubert_client_empty(client, mm * 4, &sx));
  BENCH_CHECK(cubert_client_empty(client, mm * 4, &sy));
  fill(client, a, nn, 1.0f);
  fill(client, sx, mm, 0.5f);
  const cubert_tensor ta = matrix(a, n, n), trows = vector(rows, n), tcols = vector(cols, n);
  cubert_tensor tall = vector(all, 1);
  tall.rank = 0;
  const cubert_tensor tsx = matrix(sx, m, m), tsy = matrix(sy, m, m);

  /* Tuning (first calls), then a check of the results. */
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, &ta, 1, 0, &trows));
  BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, &ta, 0, 0, &tcols));
  BENCH_CHECK(cubert_op_reduce(client, CUBERT_REDUCE_SUM, &ta, CUBERT_AXIS_ALL, 0, &tall));
  BENCH_CHECK(cubert_op_softmax(client, &tsx, &tsy));
  BENCH_CHECK(cubert_client_sync(client));
  const double tuning_s = bench_seconds_since(t0);
  expect(client, rows, n, (float)n, "row sums");
  expect(client, cols, n, (float)n, "column sums");
  expect(client, all, 1, (float)nn, "full sum");
  expect(client, sy, m, 1.0f / (float)m, "softmax");

  /* Peers. */
  float *x = bench_huge_alloc(nn * 4), *y = bench_huge_alloc(nn * 4), *z = bench_huge_alloc(nn * 4);
  if (!x || !y || !z) {
    fprintf(stderr, "host allocation of 3 x %llu floats failed\n", (unsigned long long)nn);
    return 1;
  }
  triad_init(x, y, z, nn, threads);
  triad(x, y, z, 3.0f, nn, threads);
#if BENCH_HAVE_OPENCL
  bench_ocl ocl;
  const int have_ocl = bench_ocl_of(client, &ocl);
  cl_command_queue queue = NULL;
  cl_mem src = NULL, dst = NULL;
  if (have_ocl) {
    queue = bench_ocl_queue(&ocl, 0);
    src = bench_ocl_buffer(&ocl, nn * 4);
    dst = bench_ocl_buffer(&ocl, nn * 4);
    BENCH_CL(clEnqueueCopyBuffer(queue, src, dst, 0, 0, nn * 4, 0, NULL, NULL));
    BENCH_CL(clFinish(queue));
  }
#else
  const int have_ocl = 0;
#endif

  double *t_triad = calloc(reps, 8), *t_inner = calloc(reps, 8), *t_outer = calloc(reps, 8),
         *t_all = calloc(reps, 8), *t_soft = calloc(reps, 8), *t_copy = calloc(reps, 8);
  /* Beside a GPU the triad is not run in the loop: the device idles through it, and the call
     timed next was late (row sums measured 134 µs of wall clock for a 72 µs
     kernel); it is the peer only on CPU devices. */
  const int triad_in_loop = p->type != CUBERT_DEVICE_TYPE_OPENCL_GPU;
  for (int r = 0; r < reps; ++r) {
    /* The CPU server's workers spin a while after their last cube before they sleep: let them
       sleep, so the triad has the cores to itself (without this pause the triad varied 2x). */
    if (triad_in_loop) usleep(20000);
    t_triad[r] = 0;
    for (int b = 0; b < batch && triad_in_loop; ++b)
      t_triad[r] += triad(x, y, z, 3.0f, nn, threads) / batch;
    t_inner[r] = timed_reduce(client, &ta, 1, &trows, batch);
    t_outer[r] = timed_reduce(client, &ta, 0, &tcols, batch);
    t_all[r] = timed_reduce(client, &ta, CUBERT_AXIS_ALL, &tall, batch);
    t_soft[r] = timed_softmax(client, &tsx, &tsy, batch);
#if BENCH_HAVE_OPENCL
    if (have_ocl) {
      uint64_t c0 = bench_now_ns();
      for (int b = 0; b < batch; ++b)
        BENCH_CL(clEnqueueCopyBuffer(queue, src, dst, 0, 0, nn * 4, 0, NULL, NULL));
      BENCH_CL(clFinish(queue));
      t_copy[r] = bench_seconds_since(c0) / batch;
    }
#endif
  }
  expect(client, rows, n, (float)n, "row sums (timed)");
  expect(client, cols, n, (float)n, "column sums (timed)");

  const double gb_red = (double)(nn + n) * 4e-9, gb_soft = 2.0 * (double)mm * 4e-9;
  const bench_stats triad_bw = bench_stats_rate(bench_stats_of(t_triad, reps), 3.0 * nn * 4e-9);
  const bench_stats copy_bw = bench_stats_rate(bench_stats_of(t_copy, reps), 2.0 * nn * 4e-9);
  const bench_stats inner = bench_stats_rate(bench_stats_of(t_inner, reps), gb_red);
  const bench_stats outer = bench_stats_rate(bench_stats_of(t_outer, reps), gb_red);
  const bench_stats full = bench_stats_rate(bench_stats_of(t_all, reps), gb_red);
  const bench_stats soft = bench_stats_rate(bench_stats_of(t_soft, reps), gb_soft);

  printf(
      "\n## Reductions and softmax, GB/s, median (min–max) of %d interleaved reps of %d calls\n\n",
      reps, batch);
  bench_compare_header(stdout);
  /* The target's peer: the triad on the CPU server (and PoCL, informative), raw copy on other
     OpenCL devices (a GPU). */
  const int copy_peer = have_ocl && p->type == CUBERT_DEVICE_TYPE_OPENCL_GPU;
  const bench_stats peer = copy_peer ? copy_bw : triad_bw;
  const char *peer_name = copy_peer ? "raw clEnqueueCopyBuffer" : "STREAM triad";
  char ratio[64], what[160], target[64];
  const struct {
    const char *what;
    bench_stats s;
    double goal;
  } rows_[] = {
      {"reduce sum f32, inner axis (row sums)", inner, 0.8},
      {"reduce sum f32, outer axis (column sums)", outer, 0.8},
      {"reduce sum f32, every axis (full)", full, 0},
      {"softmax f32 (2 passes counted)", soft, copy_peer ? 0 : 0.6},
  };
  for (size_t i = 0; i < sizeof rows_ / sizeof rows_[0]; ++i) {
    const double r = rows_[i].s.median / peer.median;
    snprintf(ratio, sizeof ratio, "%.0f%%", 100 * r);
    snprintf(what, sizeof what, "%s, %llu²", rows_[i].what, (unsigned long long)(i == 3 ? m : n));
    if (rows_[i].goal > 0)
      snprintf(target, sizeof target, "≥ %.0f%% of %s", 100 * rows_[i].goal,
               copy_peer ? "copy" : "triad");
    else
      snprintf(target, sizeof target, "informative");
    bench_row(what, "GB/s", rows_[i].s, peer_name, peer, ratio, target,
              rows_[i].goal > 0 ? bench_verdict(r >= rows_[i].goal) : "");
  }
  if (triad_in_loop) {
    snprintf(what, sizeof what, "peer: STREAM triad, OpenMP %d threads, %llu floats x 3", threads,
             (unsigned long long)nn);
    bench_row(what, "GB/s", triad_bw, "", (bench_stats){0}, "", copy_peer ? "informative" : "peer",
              "");
  }
  if (have_ocl) {
    snprintf(what, sizeof what, "peer: raw clEnqueueCopyBuffer, %llu floats (read + write)",
             (unsigned long long)nn);
    bench_row(what, "GB/s", copy_bw, "", (bench_stats){0}, "", copy_peer ? "peer" : "informative",
              "");
  }
  printf("\nTuning (first calls of the four problems): %.2f s. Winners:\n\n", tuning_s);
  BENCH_CHECK(cubert_tune_cache_foreach(client, print_entry, NULL, NULL));
  printf("\n- load average (1/5/15 min) at the end: %s\n", bench_load_avg().s);

#if BENCH_HAVE_OPENCL
  if (have_ocl) {
    clReleaseMemObject(src);
    clReleaseMemObject(dst);
    clReleaseCommandQueue(queue);
  }
#endif
  bench_huge_free(x, nn * 4);
  bench_huge_free(y, nn * 4);
  bench_huge_free(z, nn * 4);
  cubert_handle_release(a);
  cubert_handle_release(rows);
  cubert_handle_release(cols);
  cubert_handle_release(all);
  cubert_handle_release(sx);
  cubert_handle_release(sy);
  cubert_client_release(client);
  bench_remove_tree(dir);
  return 0;
}
