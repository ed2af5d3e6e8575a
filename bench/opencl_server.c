/* bench_opencl_server — the OpenCL server against raw OpenCL on the same device (issue 4).

   Every raw peer runs on the very context and device cubert uses (taken through the interop
   of backends/opencl/api.h), with the same kernel source built with the same options, the
   same NDRange, and is measured in the same run, interleaved with cubert block by block.
   Prints a markdown report: environment, one table (median, min–max, the peer, the ratio,
   pass/miss per target), notes.

   1. launch + sync of cubert_kernel_noop (1 cube of 1 unit) against clEnqueueNDRangeKernel
      (global 1, local 1) + clFinish of the same kernel on a raw queue: alternating blocks of
      250 ops, 40 blocks each after 3 warm-up blocks. Target: cubert median <= raw median + 1 us.
   2. first launch of a kernel in a new process: this binary re-runs itself as a child that
      times cubert_client_create and the first launch + sync of add_f32 whose source carries
      a random comment (no cache anywhere knows it). Cold: fresh CUBERT_CACHE_DIR,
      POCL_CACHE_DIR and CUDA_CACHE_PATH. Warm: the same CUBERT_CACHE_DIR, fresh driver caches
      (what cubert's own disk cache is worth). Warm-all: every cache warm (informative).
      Target: warm <= 5% of cold. 5 trials, each with its own nonce and folders.
   3. add_f32 c = a + b on 64M floats, cube dim 256, against the same kernel through raw
      OpenCL (same global and local sizes), 20 interleaved blocks of launch + sync (as many
      per block as take ~20 ms, at most 100); GB/s counted as 12 bytes per element.
      Target: >= 95% of raw.
   4. host -> device write of 256 MiB from one malloc'd buffer: cubert_client_write + sync
      (pinned staging on devices with their own memory) against a blocking pageable
      clEnqueueWriteBuffer + clFinish, 10 interleaved repetitions. Target on devices with
      their own memory: >= 1.5x the raw rate; informative on host-unified devices (PoCL),
      where cubert does not stage.
   5. pinned host memory (cubert/pinned.h): writes from and reads into a block of
      cubert_client_reserve_pinned against the same through raw OpenCL and against malloc'd
      memory (through cubert, and raw: the driver's own pageable path, no staging threads),
      --transfer-mib MiB, 8 transfers interleaved. Target on devices with their own memory:
      cubert from the block >= 0.90x raw from the block; the rest informative.

   Usage: bench_opencl_server [--device=SELECTOR] [--quick] [--only=12345]
                              [--n=ELEMENTS] [--transfer-mib=MIB]
     --device=SEL     cubert selector of an OpenCL device (default "opencl"; "opencl:gpu")
     --quick          a smoke test: few repetitions, small arrays (not for the record)
     --only=DIGITS    run only the listed sections
     --n=ELEMENTS     elements per array in section 3 (default 64M = 67108864)
     --transfer-mib   MiB moved in sections 4 and 5 (default 256)
   Child mode (internal): bench_opencl_server --first-launch SELECTOR NONCE */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_ocl.h"
#include "bench_util.h"

#define CHILD_EXIT_UNAVAILABLE 77

#if BENCH_HAVE_OPENCL

/* ---- run configuration ----------------------------------------------------------------- */

typedef struct config {
  int latency_warmup, latency_blocks, latency_ops; /* section 1 */
  int first_trials;                                /* section 2 */
  uint64_t elements;                               /* section 3 */
  int bandwidth_reps;
  uint64_t transfer_bytes; /* section 4 */
  int transfer_reps;
} config;

static config config_default(void) {
  config c = {
      .latency_warmup = 3,
      .latency_blocks = 40,
      .latency_ops = 250,
      .first_trials = 5,
      .elements = 64ull << 20,
      .bandwidth_reps = 20,
      .transfer_bytes = 256ull << 20,
      .transfer_reps = 10,
  };
  return c;
}

typedef struct bench_run {
  config cfg;
  const char *selector;
  cubert_client *client;
  const cubert_device_properties *props;
  bench_ocl ocl;
  int host_unified;
  bench_notes notes;
} bench_run;

static void progress(const char *what) {
  fprintf(stderr, "bench_opencl_server: %s\n", what);
}

/* ---- 1. launch + sync ------------------------------------------------------------------ */

typedef struct raw_noop {
  cl_command_queue queue;
  cl_kernel kernel;
} raw_noop;

static double block_raw_noop(void *user, int ops) {
  raw_noop *r = user;
  const size_t one = 1;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    if (clEnqueueNDRangeKernel(r->queue, r->kernel, 1, NULL, &one, &one, 0, NULL, NULL) !=
            CL_SUCCESS ||
        clFinish(r->queue) != CL_SUCCESS) {
      fprintf(stderr, "raw noop launch failed\n");
      return -1;
    }
  }
  return bench_seconds_since(t0);
}

static void section_latency(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("1/5 launch + sync");
  raw_noop raw;
  cl_program program;
  raw.queue = bench_ocl_queue(&run->ocl, 0);
  raw.kernel = bench_ocl_build_raw(&run->ocl, "raw_noop", &program);
  /* cubert's noop gets its info words and validate record once; the peer the same, once. */
  const uint64_t noop_info[2] = {2ull << 32, 0};
  cl_mem noop_args[2] = {bench_ocl_info(&run->ocl, noop_info, 2), bench_ocl_buffer(&run->ocl, 64)};
  bench_ocl_args(raw.kernel, noop_args, 2);
  size_t blocks = (size_t)cfg->latency_blocks;
  double *cub = calloc(blocks, sizeof(double)), *rawt = calloc(blocks, sizeof(double));
  double *diff = calloc(blocks, sizeof(double));
  bench_block_fn fns[2] = {bench_block_noop, block_raw_noop};
  void *users[2] = {run->client, &raw};
  double *samples[2] = {cub, rawt};
  if (bench_interleave(fns, users, 2, cfg->latency_warmup, cfg->latency_blocks, cfg->latency_ops,
                       samples) != 0)
    exit(1);
  for (size_t b = 0; b < blocks; ++b) diff[b] = cub[b] - rawt[b];
  bench_stats c = bench_stats_scaled(cub, blocks, 1e6), r = bench_stats_scaled(rawt, blocks, 1e6);
  bench_stats d = bench_stats_scaled(diff, blocks, 1e6);

  bench_text ratio =
      bench_textf("%+.2f \u00b5s (%.3f\u00d7)", c.median - r.median, c.median / r.median);
  bench_row("1. launch + sync, `noop`, 1 cube \u00d7 1 unit", "\u00b5s/op", c,
            "raw clEnqueueNDRangeKernel (global 1, local 1) + clFinish", r, ratio.s,
            "\u2264 raw + 1 \u00b5s", bench_verdict(c.median <= r.median + 1.0));
  bench_row("1. cubert \u2212 raw, paired per block", "\u00b5s/op", d, "",
            (bench_stats){0, 0, 0, 0}, "informative", "", "");
  bench_note(
      &run->notes,
      "1: %d blocks of %d ops per variant after %d warm-up blocks, alternating (order reversed "
      "every other block); the raw queue is a second in-order queue in cubert's own context.",
      cfg->latency_blocks, cfg->latency_ops, cfg->latency_warmup);
  free(cub);
  free(rawt);
  free(diff);
  for (int i = 0; i < 2; ++i) clReleaseMemObject(noop_args[i]);
  clReleaseKernel(raw.kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(raw.queue);
}

/* ---- 2. first launch in a new process --------------------------------------------------- */

/* The child: cubert_client_create, then the first launch + sync of add_f32 with a source no
   cache knows (a comment with `nonce`). Prints "create_seconds launch_seconds". */
static int child_first_launch(const char *selector, const char *nonce) {
  const char *base = cubert_kernel_add_f32.opencl_source;
  size_t len = strlen(base) + strlen(nonce) + 96;
  char *source = malloc(len);
  if (!source) return 1;
  snprintf(source, len, "%s\n/* bench_opencl_server first-launch nonce %s */\n", base, nonce);
  cubert_kernel_def def = cubert_kernel_add_f32;
  def.name = "add_f32 (first-launch nonce)";
  def.opencl_source = source;

  uint64_t t0 = bench_now_ns();
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create(selector, &client));
  double create_s = bench_seconds_since(t0);

  /* Buffers are not timed: their pages are the memory pools' business, not the compiler's. */
  enum { N = 1024 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }
  cubert_handle *ha, *hb, *hc;
  BENCH_CHECK(cubert_client_create_buffer(client, a, sizeof(a), &ha));
  BENCH_CHECK(cubert_client_create_buffer(client, b, sizeof(b), &hb));
  BENCH_CHECK(cubert_client_empty(client, sizeof(c), &hc));
  BENCH_CHECK(cubert_client_sync(client));

  cubert_handle *buffers[3] = {ha, hb, hc};
  uint64_t info[1] = {N};
  cubert_kernel_args args = {buffers, 3, info, 1};
  uint64_t t1 = bench_now_ns();
  BENCH_CHECK(cubert_client_launch(client, &def, cubert_cube_count_new_1d(N / 256),
                                   cubert_cube_dim_new_3d(256, 1, 1), &args));
  BENCH_CHECK(cubert_client_sync(client));
  double launch_s = bench_seconds_since(t1);

  BENCH_CHECK(cubert_client_read(client, hc, c, sizeof(c)));
  for (int i = 0; i < N; ++i) {
    if (c[i] != 3.0f * (float)i) {
      fprintf(stderr, "first launch: c[%d] = %g, expected %g\n", i, (double)c[i], 3.0 * i);
      return 1;
    }
  }
  printf("# %s\n", cubert_client_properties(client)->name);
  printf("%.9g %.9g\n", create_s, launch_s);
  fflush(stdout);
  cubert_handle_release(ha);
  cubert_handle_release(hb);
  cubert_handle_release(hc);
  cubert_client_release(client);
  free(source);
  return 0;
}

/* Number of files named *.clbin in `dir` (0 when it does not exist). */
static int count_clbin(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 6 && strcmp(e->d_name + len - 6, ".clbin") == 0) ++n;
  }
  closedir(d);
  return n;
}

/* Runs one child with the three cache folders; stores create and launch seconds. 0 on
   success. */
static int run_first_launch_child(const char *selector, const char *nonce, const char *cubert_dir,
                                  const char *pocl_dir, const char *cuda_dir, double *create_s,
                                  double *launch_s) {
  char e1[1200], e2[1200], e3[1200];
  snprintf(e1, sizeof(e1), "CUBERT_CACHE_DIR=%s", cubert_dir);
  snprintf(e2, sizeof(e2), "POCL_CACHE_DIR=%s", pocl_dir);
  snprintf(e3, sizeof(e3), "CUDA_CACHE_PATH=%s", cuda_dir);
  const char *env[] = {e1, e2, e3, NULL};
  const char *args[] = {"bench_opencl_server", "--first-launch", selector, nonce, NULL};
  double got[4];
  size_t count = 0;
  int rc = bench_run_self(args, env, got, 4, &count, NULL, 0);
  if (rc != 0 || count < 2) {
    fprintf(stderr, "bench_opencl_server: first-launch child exited with %d (%zu numbers)\n", rc,
            count);
    return -1;
  }
  *create_s = got[0];
  *launch_s = got[1];
  return 0;
}

static void make_dir(const char *path) {
  if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

static void section_first_launch(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("2/5 first launch in a new process (child processes)");
  const size_t trials = (size_t)cfg->first_trials;
  /* [0] cold, [1] warm cubert cache + fresh driver caches, [2] every cache warm */
  double *create[3], *launch[3], *total[3];
  for (int k = 0; k < 3; ++k) {
    create[k] = calloc(trials, sizeof(double));
    launch[k] = calloc(trials, sizeof(double));
    total[k] = calloc(trials, sizeof(double));
  }
  double *ratio_launch = calloc(trials, sizeof(double)),
         *ratio_total = calloc(trials, sizeof(double));
  int cached_files = -1;
  for (size_t t = 0; t < trials; ++t) {
    char root[512], cubert_dir[600], pocl[2][600], cuda[2][600], nonce[40];
    if (bench_temp_dir("bench-first-launch-", root, sizeof(root)) != 0) {
      fprintf(stderr, "bench_opencl_server: cannot make a temporary folder: %s\n", strerror(errno));
      exit(1);
    }
    snprintf(cubert_dir, sizeof(cubert_dir), "%s/cubert", root);
    for (int k = 0; k < 2; ++k) {
      snprintf(pocl[k], sizeof(pocl[k]), "%s/pocl%d", root, k);
      snprintf(cuda[k], sizeof(cuda[k]), "%s/cuda%d", root, k);
      make_dir(pocl[k]);
      make_dir(cuda[k]);
    }
    uint64_t seed = bench_now_ns() ^ ((uint64_t)getpid() << 32) ^ (t * 0x9e3779b97f4a7c15ull);
    seed ^= seed >> 29;
    seed *= 0xbf58476d1ce4e5b9ull;
    seed ^= seed >> 32;
    snprintf(nonce, sizeof(nonce), "%016llx", (unsigned long long)seed);
    /* cold: every cache empty; warm: cubert's cache from the cold run, driver caches empty
       (pocl1/cuda1 are fresh); warm-all: every cache as the cold run left it. */
    const char *pocl_dir[3] = {pocl[0], pocl[1], pocl[0]};
    const char *cuda_dir[3] = {cuda[0], cuda[1], cuda[0]};
    for (int k = 0; k < 3; ++k) {
      if (run_first_launch_child(run->selector, nonce, cubert_dir, pocl_dir[k], cuda_dir[k],
                                 &create[k][t], &launch[k][t]) != 0)
        exit(1);
      total[k][t] = create[k][t] + launch[k][t];
      if (k == 0) {
        char sub[700];
        snprintf(sub, sizeof(sub), "%s/opencl", cubert_dir);
        int files = count_clbin(sub);
        if (cached_files < 0 || files < cached_files) cached_files = files;
      }
    }
    ratio_launch[t] = launch[1][t] / launch[0][t];
    ratio_total[t] = total[1][t] / total[0][t];
    if (bench_remove_tree(root) != 0)
      fprintf(stderr, "bench_opencl_server: could not remove %s entirely\n", root);
  }
  bench_stats lc = bench_stats_scaled(launch[0], trials, 1e3),
              lw = bench_stats_scaled(launch[1], trials, 1e3);
  bench_stats la = bench_stats_scaled(launch[2], trials, 1e3);
  bench_stats tc = bench_stats_scaled(total[0], trials, 1e3),
              tw = bench_stats_scaled(total[1], trials, 1e3);
  bench_stats ta = bench_stats_scaled(total[2], trials, 1e3);
  bench_stats cc = bench_stats_scaled(create[0], trials, 1e3),
              cw = bench_stats_scaled(create[1], trials, 1e3);
  bench_stats rl = bench_stats_scaled(ratio_launch, trials, 100.0);
  bench_stats rt = bench_stats_scaled(ratio_total, trials, 100.0);
  const bench_stats none = {0, 0, 0, 0};

  bench_text r1 =
      bench_textf("%.1f%% of cold (per trial %s\u2013%s%%)", 100.0 * lw.median / lc.median,
                  bench_fmt(rl.min).s, bench_fmt(rl.max).s);
  bench_row("2. first launch + sync of a new add_f32, warm cubert disk cache, fresh driver caches",
            "ms", lw, "same, cold: no cache knows the source", lc, r1.s, "\u2264 5% of cold",
            bench_verdict(lw.median <= 0.05 * lc.median));
  bench_text r2 =
      bench_textf("%.1f%% of cold (per trial %s\u2013%s%%)", 100.0 * tw.median / tc.median,
                  bench_fmt(rt.min).s, bench_fmt(rt.max).s);
  bench_row("2. cubert_client_create + first launch + sync, warm cubert cache, fresh driver caches",
            "ms", tw, "same, cold", tc, r2.s, "\u2264 5% of cold",
            bench_verdict(tw.median <= 0.05 * tc.median));
  bench_text r3 = bench_textf("%.1f%% of cold", 100.0 * la.median / lc.median);
  bench_row("2. first launch + sync, every cache warm (cubert's and the driver's)", "ms", la, "",
            none, r3.s, "informative", "");
  bench_text r4 = bench_textf("%.1f%% of cold", 100.0 * ta.median / tc.median);
  bench_row("2. create + first launch + sync, every cache warm", "ms", ta, "", none, r4.s,
            "informative", "");
  bench_row("2. cubert_client_create alone, cold / warm (peer column: warm)", "ms", cc, "warm", cw,
            "", "informative", "");
  bench_note(
      &run->notes,
      "2: %zu trials; each has its own nonce and temporary folders and runs three child "
      "processes in order: cold (CUBERT_CACHE_DIR, POCL_CACHE_DIR, CUDA_CACHE_PATH all empty), "
      "warm (the same CUBERT_CACHE_DIR, empty driver caches), warm-all (all three as the cold "
      "run left them). Ratios per trial are warm/cold of the same trial.",
      trials);
  bench_note(&run->notes,
             "2: cubert's disk cache held %d program binar%s after the cold run (expected >= 1).",
             cached_files, cached_files == 1 ? "y" : "ies");
  for (int k = 0; k < 3; ++k) {
    free(create[k]);
    free(launch[k]);
    free(total[k]);
  }
  free(ratio_launch);
  free(ratio_total);
}

/* ---- 3. vector add ------------------------------------------------------------------------ */

typedef struct add_cubert {
  cubert_client *client;
  cubert_cube_count count;
  cubert_cube_dim dim;
  cubert_kernel_args args;
} add_cubert;

static double block_cubert_add(void *user, int ops) {
  add_cubert *a = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    BENCH_CHECK(
        cubert_client_launch(a->client, &cubert_kernel_add_f32, a->count, a->dim, &a->args));
    BENCH_CHECK(cubert_client_sync(a->client));
  }
  return bench_seconds_since(t0);
}

typedef struct add_raw {
  cl_command_queue queue;
  cl_kernel kernel;
  bench_ocl_geometry geometry;
} add_raw;

static double block_raw_add(void *user, int ops) {
  add_raw *r = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    if (bench_ocl_enqueue(r->queue, r->kernel, &r->geometry, NULL) != CL_SUCCESS ||
        clFinish(r->queue) != CL_SUCCESS) {
      fprintf(stderr, "raw add_f32 failed\n");
      return -1;
    }
  }
  return bench_seconds_since(t0);
}

static void fill_f32(cubert_client *client, cubert_handle *h, uint64_t n, float value) {
  cubert_handle *buffers[1] = {h};
  uint64_t info[2] = {n, cubert_kernel_info_f32(value)};
  cubert_kernel_args args = {buffers, 1, info, 2};
  uint64_t cubes = (n + 255) / 256;
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
  BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_fill_u32, sel.cube_count,
                                   cubert_cube_dim_new_3d(256, 1, 1), &args));
}

static void check_f32(const float *got, const char *what, float expect) {
  for (int i = 0; i < 3; ++i) {
    if (got[i] != expect) {
      fprintf(stderr, "%s: element %d of 3 checked is %g, expected %g\n", what, i, (double)got[i],
              (double)expect);
      exit(1);
    }
  }
}

static void section_bandwidth(bench_run *run) {
  const config *cfg = &run->cfg;
  cubert_client *client = run->client;
  progress("3/5 vector add");
  uint64_t n = cfg->elements;
  cubert_handle *h[3] = {NULL, NULL, NULL};
  for (;;) {
    cubert_status s = NULL;
    for (int i = 0; i < 3 && !s; ++i) s = cubert_client_empty(client, (size_t)(n * 4), &h[i]);
    if (!s) break;
    if (cubert_status_code(s) != CUBERT_CODE_BUFFER_TOO_BIG || n <= (1u << 20)) BENCH_CHECK(s);
    fprintf(stderr, "bench_opencl_server: %llu floats per buffer too big (%s); halving\n",
            (unsigned long long)n, cubert_status_message(s));
    cubert_status_free(s);
    for (int i = 0; i < 3; ++i) {
      cubert_handle_release(h[i]);
      h[i] = NULL;
    }
    n /= 2;
  }
  const cubert_cube_dim dim = cubert_cube_dim_new_3d(256, 1, 1);
  uint64_t cubes = (n + 255) / 256;
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)cubes, &sel));

  add_cubert cub;
  uint64_t info[1] = {n};
  cub.client = client;
  cub.count = sel.cube_count;
  cub.dim = dim;
  cub.args = (cubert_kernel_args){h, 3, info, 1};
  fill_f32(client, h[0], n, 1.0f);
  fill_f32(client, h[1], n, 2.0f);
  fill_f32(client, h[2], n, 0.0f);
  BENCH_CHECK(cubert_client_sync(client));

  add_raw raw;
  cl_program program;
  raw.queue = bench_ocl_queue(&run->ocl, 0);
  raw.kernel = bench_ocl_build_raw(&run->ocl, "raw_add_f32", &program);
  raw.geometry = bench_ocl_geometry_of(sel.cube_count, dim);
  cl_mem mems[4];
  for (int i = 0; i < 3; ++i) mems[i] = bench_ocl_buffer(&run->ocl, (size_t)(n * 4));
  mems[3] = bench_ocl_info(&run->ocl, info, 1);
  const float values[3] = {1.0f, 2.0f, 0.0f};
  for (int i = 0; i < 3; ++i)
    BENCH_CL(clEnqueueFillBuffer(raw.queue, mems[i], &values[i], sizeof(float), 0, (size_t)(n * 4),
                                 0, NULL, NULL));
  bench_ocl_args(raw.kernel, mems, 4);
  BENCH_CL(clFinish(raw.queue));

  const size_t reps = (size_t)cfg->bandwidth_reps;
  double *tc = calloc(reps, sizeof(double)), *tr = calloc(reps, sizeof(double));
  bench_block_fn fns[2] = {block_cubert_add, block_raw_add};
  void *users[2] = {&cub, &raw};
  double *samples[2] = {tc, tr};
  /* Several launch + sync per block on fast devices (a 64M-float add takes ~0.2 ms on a
     4 TB/s GPU), one on slow ones: blocks of ~20 ms keep the clock's share small. */
  int ops = bench_calibrate_ops(block_cubert_add, &cub, 0.02, 1, 100);
  if (bench_interleave(fns, users, 2, 2, (int)reps, ops, samples) != 0) exit(1);

  /* Both results: c = 1 + 2 at the first, middle and last element. */
  const uint64_t at[3] = {0, n / 2, n - 1};
  float got[3];
  for (int i = 0; i < 3; ++i)
    BENCH_CHECK(cubert_client_read_range(client, h[2], at[i] * 4, &got[i], 4));
  check_f32(got, "cubert add_f32", 3.0f);
  for (int i = 0; i < 3; ++i)
    BENCH_CL(clEnqueueReadBuffer(raw.queue, mems[2], CL_TRUE, (size_t)(at[i] * 4), 4, &got[i], 0,
                                 NULL, NULL));
  check_f32(got, "raw add_f32", 3.0f);

  const double gb = 12.0 * (double)n * 1e-9;
  bench_stats bc = bench_stats_rate(bench_stats_of(tc, reps), gb);
  bench_stats br = bench_stats_rate(bench_stats_of(tr, reps), gb);
  bench_text ratio = bench_textf("%.1f%% of raw", 100.0 * bc.median / br.median);
  char what[256];
  snprintf(what, sizeof(what), "3. add_f32 c = a + b, %llu floats, launch + sync",
           (unsigned long long)n);
  bench_row(what, "GB/s", bc, "raw: the same add as hand-written OpenCL C, same NDRange + clFinish",
            br, ratio.s, "\u2265 95% of raw", bench_verdict(bc.median >= 0.95 * br.median));
  bench_stats mc = bench_stats_scaled(tc, reps, 1e3), mr = bench_stats_scaled(tr, reps, 1e3);
  bench_row("3. the same, time per launch", "ms", mc, "raw", mr,
            bench_textf("%.3f\u00d7", mc.median / mr.median).s, "informative", "");
  bench_note(
      &run->notes,
      "3: %zu interleaved blocks of %d launch + sync each after 2 warm-up blocks (statistics "
      "over blocks); NDRange work_dim %u, global "
      "(%zu, %zu, %zu), local (%zu, %zu, %zu) for both; bandwidth = 12 B \u00d7 n / time; "
      "results checked (c = 3) for both.",
      reps, ops, raw.geometry.work_dim, raw.geometry.global[0], raw.geometry.global[1],
      raw.geometry.global[2], raw.geometry.local[0], raw.geometry.local[1], raw.geometry.local[2]);
  free(tc);
  free(tr);
  for (int i = 0; i < 4; ++i) clReleaseMemObject(mems[i]);
  clReleaseKernel(raw.kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(raw.queue);
  for (int i = 0; i < 3; ++i) cubert_handle_release(h[i]);
  BENCH_CHECK(cubert_client_memory_cleanup(client));
}

/* ---- 4. host -> device transfer ------------------------------------------------------------ */

typedef struct write_cubert {
  cubert_client *client;
  cubert_handle *handle;
  const void *src;
  size_t bytes;
} write_cubert;

static double block_cubert_write(void *user, int ops) {
  write_cubert *w = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    BENCH_CHECK(cubert_client_write(w->client, w->handle, 0, w->src, w->bytes));
    BENCH_CHECK(cubert_client_sync(w->client));
  }
  return bench_seconds_since(t0);
}

typedef struct write_raw {
  cl_command_queue queue;
  cl_mem mem;
  const void *src;
  size_t bytes;
} write_raw;

static double block_raw_write(void *user, int ops) {
  write_raw *w = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    if (clEnqueueWriteBuffer(w->queue, w->mem, CL_TRUE, 0, w->bytes, w->src, 0, NULL, NULL) !=
            CL_SUCCESS ||
        clFinish(w->queue) != CL_SUCCESS) {
      fprintf(stderr, "raw clEnqueueWriteBuffer failed\n");
      return -1;
    }
  }
  return bench_seconds_since(t0);
}

static void section_transfer(bench_run *run) {
  const config *cfg = &run->cfg;
  cubert_client *client = run->client;
  progress("4/5 host -> device transfer");
  const size_t bytes = (size_t)cfg->transfer_bytes;
  unsigned char *src = malloc(bytes);
  if (!src) {
    fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
    exit(1);
  }
  for (size_t i = 0; i < bytes; ++i) src[i] = (unsigned char)(i * 131u + 7u); /* touch it all */

  write_cubert cub = {client, NULL, src, bytes};
  BENCH_CHECK(cubert_client_empty(client, bytes, &cub.handle));
  write_raw raw = {bench_ocl_queue(&run->ocl, 0), bench_ocl_buffer(&run->ocl, bytes), src, bytes};

  const size_t reps = (size_t)cfg->transfer_reps;
  double *tc = calloc(reps, sizeof(double)), *tr = calloc(reps, sizeof(double));
  bench_block_fn fns[2] = {block_cubert_write, block_raw_write};
  void *users[2] = {&cub, &raw};
  double *samples[2] = {tc, tr};
  if (bench_interleave(fns, users, 2, 1, (int)reps, 1, samples) != 0) exit(1);

  /* Both copies hold the source: check a few bytes spread over the buffer. */
  for (int k = 0; k < 5; ++k) {
    size_t at = (bytes - 1) / 4 * (size_t)k;
    unsigned char got_c = 0, got_r = 0;
    BENCH_CHECK(cubert_client_read_range(client, cub.handle, at, &got_c, 1));
    BENCH_CL(clEnqueueReadBuffer(raw.queue, raw.mem, CL_TRUE, at, 1, &got_r, 0, NULL, NULL));
    if (got_c != src[at] || got_r != src[at]) {
      fprintf(stderr, "transfer: byte %zu is %u (cubert) / %u (raw), expected %u\n", at, got_c,
              got_r, src[at]);
      exit(1);
    }
  }

  const double gb = (double)bytes * 1e-9;
  bench_stats bc = bench_stats_rate(bench_stats_of(tc, reps), gb);
  bench_stats br = bench_stats_rate(bench_stats_of(tr, reps), gb);
  bench_text ratio = bench_textf("%.2f\u00d7 raw", bc.median / br.median);
  char what[256];
  snprintf(what, sizeof(what),
           "4. host \u2192 device, %zu MiB from malloc'd memory: cubert_client_write + sync%s",
           bytes >> 20, run->host_unified ? "" : " (pinned staging)");
  if (run->host_unified) {
    bench_row(what, "GB/s", bc, "raw blocking pageable clEnqueueWriteBuffer + clFinish", br,
              ratio.s, "informative (host-unified device: cubert does not stage)", "");
  } else {
    bench_row(what, "GB/s", bc, "raw blocking pageable clEnqueueWriteBuffer + clFinish", br,
              ratio.s, "\u2265 1.5\u00d7 raw", bench_verdict(bc.median >= 1.5 * br.median));
  }
  bench_note(
      &run->notes,
      "4: %zu interleaved repetitions after 1 warm-up round, from one malloc'd source touched "
      "beforehand; GB = 1e9 bytes; both copies checked at 5 places.",
      reps);
  free(tc);
  free(tr);
  free(src);
  clReleaseMemObject(raw.mem);
  clReleaseCommandQueue(raw.queue);
  cubert_handle_release(cub.handle);
  BENCH_CHECK(cubert_client_memory_cleanup(client));
}

/* ---- 5. pinned host memory ---------------------------------------------------------------- */

/* One transfer of `bytes` between `host` and the device, then a sync: through cubert (a client
   write or read of `handle`) or raw (a blocking clEnqueueWrite/ReadBuffer of `mem`). */
typedef struct pinned_xfer {
  int raw, read;
  cubert_client *client;
  cubert_handle *handle;
  cl_command_queue queue;
  cl_mem mem;
  void *host;
  size_t bytes;
} pinned_xfer;

static double block_pinned_xfer(void *user, int ops) {
  pinned_xfer *x = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    if (x->raw) {
      cl_int err = x->read ? clEnqueueReadBuffer(x->queue, x->mem, CL_TRUE, 0, x->bytes, x->host, 0,
                                                 NULL, NULL)
                           : clEnqueueWriteBuffer(x->queue, x->mem, CL_TRUE, 0, x->bytes, x->host,
                                                  0, NULL, NULL);
      if (err != CL_SUCCESS || clFinish(x->queue) != CL_SUCCESS) {
        fprintf(stderr, "raw transfer failed (%d)\n", (int)err);
        return -1;
      }
    } else {
      BENCH_CHECK(x->read ? cubert_client_read(x->client, x->handle, x->host, x->bytes)
                          : cubert_client_write(x->client, x->handle, 0, x->host, x->bytes));
      BENCH_CHECK(cubert_client_sync(x->client));
    }
  }
  return bench_seconds_since(t0);
}

/* Writes and reads of one size from a block of cubert_client_reserve_pinned and from malloc'd
   memory, through cubert and raw, interleaved: what a user gains from pinned memory, and how
   close cubert comes to the driver with it. */
static void section_pinned(bench_run *run) {
  const config *cfg = &run->cfg;
  cubert_client *client = run->client;
  progress("5/5 pinned host memory");
  const size_t bytes = (size_t)cfg->transfer_bytes;
  void *block = NULL;
  BENCH_CHECK(cubert_client_reserve_pinned(client, bytes, &block));
  unsigned char *heap = malloc(bytes);
  if (!heap) {
    fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
    exit(1);
  }
  for (size_t i = 0; i < bytes; ++i) heap[i] = ((unsigned char *)block)[i] = (unsigned char)i;
  cubert_handle *handle = NULL;
  BENCH_CHECK(cubert_client_empty(client, bytes, &handle));
  cl_command_queue queue = bench_ocl_queue(&run->ocl, 0);
  cl_mem mem = bench_ocl_buffer(&run->ocl, bytes);
  /* order: {cubert, raw} x {block, heap} x {write, read} */
  pinned_xfer x[8];
  for (int k = 0; k < 8; ++k)
    x[k] = (pinned_xfer){.raw = k & 1,
                         .read = k >= 4,
                         .client = client,
                         .handle = handle,
                         .queue = queue,
                         .mem = mem,
                         .host = (k & 2) ? (void *)heap : block,
                         .bytes = bytes};
  const size_t reps = (size_t)cfg->transfer_reps;
  bench_block_fn fns[8];
  void *users[8];
  double *samples[8];
  for (int k = 0; k < 8; ++k) {
    fns[k] = block_pinned_xfer;
    users[k] = &x[k];
    samples[k] = calloc(reps, sizeof(double));
  }
  if (bench_interleave(fns, users, 8, 1, (int)reps, 1, samples) != 0) exit(1);
  const double gb = (double)bytes * 1e-9;
  bench_stats st[8];
  for (int k = 0; k < 8; ++k) st[k] = bench_stats_rate(bench_stats_of(samples[k], reps), gb);
  const char *kind = cubert_pinned_kind_of(block) != CUBERT_PINNED_DEVICE ? "heap fallback"
                     : run->host_unified ? "the server's host memory, not pinned: host-unified"
                                         : "the server's pinned memory";
  for (int dir = 0; dir < 2; ++dir) {
    const bench_stats *d = &st[dir * 4]; /* cubert block, raw block, cubert heap, raw heap */
    const char *op = dir ? "read into" : "write from";
    char what[256];
    bench_text ratio = bench_textf("%.2f\u00d7 raw", d[0].median / d[1].median);
    snprintf(what, sizeof(what), "5. %s a %zu MiB block (%s): cubert_client_%s + sync", op,
             bytes >> 20, kind, dir ? "read" : "write");
    bench_row(
        what, "GB/s", d[0],
        dir ? "raw clEnqueueReadBuffer into the block" : "raw clEnqueueWriteBuffer from the block",
        d[1], ratio.s, run->host_unified ? "informative (host-unified)" : "\u2265 0.90\u00d7 raw",
        run->host_unified ? "" : bench_verdict(d[0].median >= 0.9 * d[1].median));
    ratio = bench_textf("%.2f\u00d7", d[0].median / d[2].median);
    snprintf(what, sizeof(what), "5. the same, against malloc'd memory through cubert (%s)",
             run->host_unified ? "no staging on host-unified devices" : "staging threads");
    bench_row(what, "GB/s", d[0], "cubert from/into malloc'd memory", d[2], ratio.s, "informative",
              "");
    ratio = bench_textf("%.2f\u00d7", d[1].median / d[3].median);
    snprintf(what, sizeof(what),
             "5. raw %s the block, against raw %s malloc'd memory (no staging "
             "threads)",
             op, op);
    bench_row(what, "GB/s", d[1], "raw pageable, the driver's own path", d[3], ratio.s,
              "informative", "");
  }
  bench_note(&run->notes,
             "5: %zu interleaved repetitions of 8 transfers (cubert/raw x block/malloc'd x "
             "write/read) after 1 warm-up round; the block comes from cubert_client_reserve_pinned "
             "(%s).",
             reps, kind);
  for (int k = 0; k < 8; ++k) free(samples[k]);
  cubert_handle_release(handle);
  BENCH_CHECK(cubert_pinned_release(block));
  free(heap);
  clReleaseMemObject(mem);
  clReleaseCommandQueue(queue);
  BENCH_CHECK(cubert_client_memory_cleanup(client));
}

/* ---- main -------------------------------------------------------------------------------- */

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--device=SELECTOR] [--quick] [--only=12345] [--n=ELEMENTS] "
          "[--transfer-mib=MIB]\n",
          argv0);
  return 2;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "--first-launch") == 0)
    return child_first_launch(argv[2], argv[3]);

  bench_run run;
  memset(&run, 0, sizeof(run));
  run.cfg = config_default();
  run.selector = "opencl";
  const char *only = "12345";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      run.cfg.latency_warmup = 1;
      run.cfg.latency_blocks = 5;
      run.cfg.latency_ops = 50;
      run.cfg.first_trials = 1;
      run.cfg.elements = 4ull << 20;
      run.cfg.bandwidth_reps = 3;
      run.cfg.transfer_bytes = 32ull << 20;
      run.cfg.transfer_reps = 3;
    } else if (strncmp(argv[i], "--device=", 9) == 0) {
      run.selector = argv[i] + 9;
    } else if (strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else if (strncmp(argv[i], "--n=", 4) == 0) {
      run.cfg.elements = strtoull(argv[i] + 4, NULL, 10);
    } else if (strncmp(argv[i], "--transfer-mib=", 15) == 0) {
      run.cfg.transfer_bytes = strtoull(argv[i] + 15, NULL, 10) << 20;
    } else {
      return usage(argv[0]);
    }
  }
  if (run.cfg.elements < 1024) run.cfg.elements = 1024;
  if (run.cfg.elements > (uint64_t)UINT32_MAX * 256) run.cfg.elements = (uint64_t)UINT32_MAX * 256;
  if (run.cfg.transfer_bytes < (1u << 20)) run.cfg.transfer_bytes = 1u << 20;

  BENCH_CHECK(cubert_client_create(run.selector, &run.client));
  run.props = cubert_client_properties(run.client);
  if (!bench_ocl_of(run.client, &run.ocl)) {
    fprintf(stderr,
            "bench_opencl_server: device \"%s\" (selector \"%s\") is on the %s backend; this "
            "benchmark compares cubert with raw OpenCL and needs an OpenCL device\n",
            run.props->name, run.selector, run.props->backend);
    cubert_client_release(run.client);
    return CHILD_EXIT_UNAVAILABLE;
  }
  run.host_unified = bench_ocl_host_unified(&run.ocl);

  printf("# bench_opencl_server\n\n");
  bench_print_env(stdout);
  bench_print_device(stdout, run.props);
  printf(
      "- cubert %s, selector \"%s\"; host-unified memory: %s; raw peers use cubert's own "
      "cl_context and cl_device_id (backends/opencl/api.h)\n\n",
      CUBERT_VERSION_STRING, run.selector, run.host_unified ? "yes" : "no");
  bench_compare_header(stdout);

  if (strchr(only, '1')) section_latency(&run);
  if (strchr(only, '2')) section_first_launch(&run);
  if (strchr(only, '3')) section_bandwidth(&run);
  if (strchr(only, '4')) section_transfer(&run);
  if (strchr(only, '5')) section_pinned(&run);

  bench_notes_print(stdout, &run.notes);
  cubert_client_release(run.client);
  return 0;
}

#else /* built without OpenCL */

int main(void) {
  printf("# bench_opencl_server\n\nThe library was built without OpenCL: nothing to measure.\n");
  return CHILD_EXIT_UNAVAILABLE;
}

#endif
