/* bench_cpu_server — the CPU server against its peers and targets (issue 2), in one run.

   Measures, side by side, and prints a markdown report (environment, one table, notes):
   1. launch + sync of the empty kernel (cube count (1,1,1), cube dim (1,1,1)), per op;
      peers: an empty OpenMP parallel region with the same thread count (active and passive
      wait, each in a child process) and raw OpenCL on PoCL (clEnqueueNDRangeKernel + clFinish
      of an empty kernel, in a child process). Target: median <= 2 us.
   2. 10,000 back-to-back noop launches, then one sync: time per launch. Target <= 0.5 us.
   3. add_f32 and saxpy_f32 on 64M floats, in two launch geometries, against a STREAM triad
      (OpenMP, static schedule, same thread count, arrays on 2 MiB transparent huge pages as
      the server's big pages are) in the same process, reps alternating; the triad on 4 KiB
      pages too, for information.
      Bandwidth counted as STREAM does (3 arrays x 4 bytes per element). Target >= 90% of the
      triad.
   4. the cube barrier: a SYNC_CUBE kernel calling cubert_cpu_sync_cube() K = 16 times (and
      K = 0) over 1000 cubes of 256 units; cost per unit per barrier. Target <= 0.1 us.
      Peer (informative): `#pragma omp barrier` per thread and barrier (child process).

   Usage: bench_cpu_server [--quick] [--n=ELEMENTS] [--only=1234] [--device=SELECTOR]
     --quick        fewer repetitions and 4M elements (a smoke test, not for the record)
     --n=ELEMENTS   elements of the bandwidth arrays (default 64M = 67108864)
     --only=DIGITS  run only the listed sections (e.g. --only=2 for a perf session)
     --device=SEL   measure another device through the same code ("opencl:0"; default "cpu";
                    the targets are the CPU server's)
   Environment: CUBERT_CPU_THREADS (worker count) is honoured by the CPU server; the OpenMP
   thread count follows the server's num_cpu_cores.

   Processes: libgomp reads OMP_WAIT_POLICY once, at load. The main process restarts itself
   once with OMP_WAIT_POLICY=passive (unless the variable is set), so OpenMP threads left idle
   after the triad sleep instead of spinning on the 2 cores the CPU server's workers need. The
   latency-style OpenMP peers (empty region, barrier) are measured with the usual active wait
   in child processes of this same binary (argv[1] = --omp-empty / --omp-barrier), and PoCL in
   one too (--pocl-empty) so its worker threads never coexist with the server's. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define BENCH_OMP(text) _Pragma(text)
#else
#define BENCH_OMP(text)
#endif

#if defined(CUBERT_WITH_OPENCL) && CUBERT_WITH_OPENCL
#define BENCH_HAVE_OPENCL 1
#include <CL/cl.h>
#else
#define BENCH_HAVE_OPENCL 0
#endif

#include "bench_triad.h"
#include "bench_util.h"
#include "cubert/cubert.h"

#define CHILD_EXIT_UNAVAILABLE 77

/* ---- run configuration ----------------------------------------------------------------- */

typedef struct config {
  int latency_rounds;     /* rounds of (cubert, peers) for launch + sync */
  int latency_reps;       /* repetitions per round and measurement */
  int latency_ops;        /* ops per repetition */
  int burst_reps;         /* repetitions of the 10,000-launch burst */
  int burst_launches;     /* launches per burst */
  uint64_t elements;      /* bandwidth array length */
  int bandwidth_reps;     /* timed repetitions of (triad, add x2, saxpy x2) */
  int barrier_reps;       /* timed (K=0, K=16) pairs */
  uint32_t barrier_k;     /* barriers per unit in the loaded variant */
  uint32_t barrier_cubes; /* cubes of the barrier launch */
  uint32_t barrier_dim;   /* units per cube of the barrier launch */
  int omp_barrier_count;  /* barriers per repetition of the OpenMP peer */
} config;

static config config_default(void) {
  config c = {
      .latency_rounds = 3,
      .latency_reps = 10,
      .latency_ops = 2000,
      .burst_reps = 30,
      .burst_launches = 10000,
      .elements = 64ull << 20,
      .bandwidth_reps = 10,
      .barrier_reps = 10,
      .barrier_k = 16,
      .barrier_cubes = 1000,
      .barrier_dim = 256,
      .omp_barrier_count = 20000,
  };
  return c;
}

/* ---- child processes: the peers that need a process of their own ------------------------ */

#ifdef _OPENMP
/* The end of an OpenMP child: prints the thread count it saw, the wait policy and the
   samples, frees them; 0 when the runtime gave the `threads` asked for, else 2. */
static int omp_child_report(double *samples, int reps, int seen, int threads) {
  const char *policy = getenv("OMP_WAIT_POLICY");
  printf("# %d threads, OMP_WAIT_POLICY=%s\n", seen, policy ? policy : "(unset)");
  bench_emit_samples(stdout, samples, (size_t)reps);
  free(samples);
  return seen == threads ? 0 : 2;
}
#endif

/* --omp-empty THREADS OPS REPS: prints the per-op time (us) of an empty parallel region, one
   sample per repetition, after one warm-up repetition. */
static int child_omp_empty(int threads, int ops, int reps) {
#ifdef _OPENMP
  double *samples = calloc((size_t)reps, sizeof(*samples));
  if (!samples) return 1;
  int seen = 0;
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i) {
      BENCH_OMP("omp parallel num_threads(threads)") {
        if (omp_get_thread_num() == 0) seen = omp_get_num_threads();
      }
    }
    if (r >= 0) samples[r] = bench_seconds_since(t0) * 1e6 / ops;
  }
  return omp_child_report(samples, reps, seen, threads);
#else
  (void)threads, (void)ops, (void)reps;
  printf("# built without OpenMP\n");
  return CHILD_EXIT_UNAVAILABLE;
#endif
}

/* --omp-barrier THREADS BARRIERS REPS: prints, per repetition, the wall time of one parallel
   region running BARRIERS `omp barrier`s divided by BARRIERS x THREADS (us per thread and
   barrier: the same normalisation as the cube barrier's cost per unit and barrier). */
static int child_omp_barrier(int threads, int barriers, int reps) {
#ifdef _OPENMP
  double *samples = calloc((size_t)reps, sizeof(*samples));
  if (!samples) return 1;
  int seen = 0;
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    BENCH_OMP("omp parallel num_threads(threads)") {
      if (omp_get_thread_num() == 0) seen = omp_get_num_threads();
      for (int i = 0; i < barriers; ++i) {
        BENCH_OMP("omp barrier")
      }
    }
    if (r >= 0) samples[r] = bench_seconds_since(t0) * 1e6 / ((double)barriers * threads);
  }
  return omp_child_report(samples, reps, seen, threads);
#else
  (void)threads, (void)barriers, (void)reps;
  printf("# built without OpenMP\n");
  return CHILD_EXIT_UNAVAILABLE;
#endif
}

#if BENCH_HAVE_OPENCL
/* The first device of the PoCL platform (by name), else of the first platform with a CPU
   device. Returns 0 when there is none. */
static int pocl_find_device(cl_platform_id *out_platform, cl_device_id *out_device) {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  if (clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS || count == 0) return 0;
  if (count > 16) count = 16;
  for (int pass = 0; pass < 2; ++pass) {
    for (cl_uint i = 0; i < count; ++i) {
      char name[256] = "";
      clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name, NULL);
      int is_pocl = strstr(name, "Portable Computing Language") || strstr(name, "PoCL") ||
                    strstr(name, "pocl");
      if (pass == 0 && !is_pocl) continue;
      cl_device_id device;
      cl_uint n = 0;
      if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_CPU, 1, &device, &n) != CL_SUCCESS || !n)
        continue;
      *out_platform = platforms[i];
      *out_device = device;
      return 1;
    }
  }
  return 0;
}
#endif

/* --pocl-empty OPS REPS: raw OpenCL on PoCL: clEnqueueNDRangeKernel (global 1, local 1) of an
   empty kernel + clFinish, per op in us, after a warm-up of 500 ops. */
static int child_pocl_empty(int ops, int reps) {
#if BENCH_HAVE_OPENCL
  cl_platform_id platform;
  cl_device_id device;
  if (!pocl_find_device(&platform, &device)) {
    printf("# no OpenCL CPU device\n");
    return CHILD_EXIT_UNAVAILABLE;
  }
  cl_int err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) return 1;
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return 1;
  const char *source = "__kernel void bench_empty(void) {}\n";
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS || clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
    return 1;
  cl_kernel kernel = clCreateKernel(program, "bench_empty", &err);
  if (err != CL_SUCCESS) return 1;
  const size_t global = 1, local = 1;
  for (int i = 0; i < 500; ++i) {
    if (clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL) ||
        clFinish(queue))
      return 1;
  }
  double *samples = calloc((size_t)reps, sizeof(*samples));
  if (!samples) return 1;
  for (int r = 0; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i) {
      clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
      clFinish(queue);
    }
    samples[r] = bench_seconds_since(t0) * 1e6 / ops;
  }
  char name[256] = "", version[256] = "";
  cl_uint units = 0;
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name), name, NULL);
  clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof(version), version, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
  printf("# %s, %u compute units, %s\n", name, units, version);
  bench_emit_samples(stdout, samples, (size_t)reps);
  free(samples);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
#else
  (void)ops, (void)reps;
  printf("# built without OpenCL\n");
  return CHILD_EXIT_UNAVAILABLE;
#endif
}

/* A peer measured in a child process: its samples are appended to `samples` over several
   rounds. */
typedef struct peer {
  double *samples;
  size_t count, capacity;
  char comment[256]; /* the child's description line */
  int status;        /* last exit status: 0 ok, CHILD_EXIT_UNAVAILABLE, other = failure */
} peer;

static void peer_init(peer *p, size_t capacity) {
  memset(p, 0, sizeof(*p));
  p->samples = calloc(capacity, sizeof(*p->samples));
  p->capacity = p->samples ? capacity : 0;
}

/* Runs this binary as `mode a b c` with the extra environment and appends its samples. */
static void peer_run(peer *p, const char *mode, int a, int b, int c, const char *const *env) {
  char sa[32], sb[32], sc[32];
  snprintf(sa, sizeof(sa), "%d", a);
  snprintf(sb, sizeof(sb), "%d", b);
  snprintf(sc, sizeof(sc), "%d", c);
  const char *args[] = {"bench_cpu_server", mode, sa, sb, sc, NULL};
  size_t got = 0;
  char comment[256];
  p->status = bench_run_self(args, env, p->samples + p->count, p->capacity - p->count, &got,
                             comment, sizeof(comment));
  if (comment[0]) snprintf(p->comment, sizeof(p->comment), "%s", comment);
  if (p->status == 0)
    p->count += got;
  else if (p->status != CHILD_EXIT_UNAVAILABLE)
    fprintf(stderr, "bench_cpu_server: child %s exited with status %d\n", mode, p->status);
}

static bench_stats peer_stats(const peer *p) {
  return bench_stats_of(p->samples, p->count);
}

/* ---- cubert helpers ------------------------------------------------------------------- */

static cubert_handle *make_buffer(cubert_client *client, uint64_t bytes, cubert_status *out) {
  cubert_handle *h = NULL;
  *out = cubert_client_empty(client, (size_t)bytes, &h);
  return h;
}

/* A launch geometry for n elements, one unit per element. */
typedef struct geometry {
  const char *label;
  cubert_cube_dim dim;
  cubert_cube_count count;
  uint64_t units; /* dispatched units (>= n) */
  char text[160];
} geometry;

static geometry geometry_for(cubert_client *client, const char *label, cubert_cube_dim dim,
                             uint64_t n) {
  geometry g;
  memset(&g, 0, sizeof(g));
  g.label = label;
  g.dim = dim;
  uint64_t per_cube = cubert_cube_dim_num_elems(dim);
  uint64_t cubes = (n + per_cube - 1) / per_cube;
  if (cubes > UINT32_MAX) {
    fprintf(stderr, "%s: %llu cubes exceed 2^32-1\n", label, (unsigned long long)cubes);
    exit(1);
  }
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
  g.count = sel.cube_count;
  g.units = (uint64_t)sel.num_cubes * per_cube;
  snprintf(g.text, sizeof(g.text), "%s: cube dim (%u, %u, %u), cube count (%u, %u, %u)%s", label,
           dim.x, dim.y, dim.z, g.count.x, g.count.y, g.count.z,
           sel.kind == CUBERT_CUBE_COUNT_APPROX ? " (approx: extra units idle)" : "");
  return g;
}

/* Launches `kernel` and waits for it; returns the wall time in seconds. */
static double time_launch(cubert_client *client, const cubert_kernel_def *kernel,
                          cubert_cube_count count, cubert_cube_dim dim,
                          const cubert_kernel_args *args) {
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_launch(client, kernel, count, dim, args));
  BENCH_CHECK(cubert_client_sync(client));
  return bench_seconds_since(t0);
}

/* Reads element `index` of a float buffer. */
static float read_f32(cubert_client *client, cubert_handle *h, uint64_t index) {
  float v = 0;
  BENCH_CHECK(cubert_client_read_range(client, h, index * sizeof(float), &v, sizeof(v)));
  return v;
}

/* Checks three elements (first, middle, last) of a float buffer against `expect`. */
static void verify_f32(cubert_client *client, cubert_handle *h, uint64_t n, float expect,
                       const char *what) {
  const uint64_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; ++i) {
    float v = read_f32(client, h, at[i]);
    if (fabsf(v - expect) > 1e-4f * fabsf(expect)) {
      fprintf(stderr, "%s: element %llu is %g, expected %g\n", what, (unsigned long long)at[i],
              (double)v, (double)expect);
      exit(1);
    }
  }
}

/* ---- 1. launch + sync -------------------------------------------------------------------- */

static void noop_ops(cubert_client *client, int ops) {
  const cubert_cube_count one = cubert_cube_count_new_3d(1, 1, 1);
  const cubert_cube_dim unit = cubert_cube_dim_new_3d(1, 1, 1);
  for (int i = 0; i < ops; ++i) {
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_noop, one, unit, NULL));
    BENCH_CHECK(cubert_client_sync(client));
  }
}

/* Per-op launch + sync time in us, one sample per repetition, appended to samples. */
static void measure_launch_sync(cubert_client *client, int ops, int reps, double *samples) {
  for (int r = 0; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    noop_ops(client, ops);
    samples[r] = bench_seconds_since(t0) * 1e6 / ops;
  }
}

/* ---- 2. back-to-back launches ----------------------------------------------------------- */

/* One burst: `launches` noop launches, then one sync. Times per launch in us: until the last
   launch call returned (submit) and until the sync returned (total). */
static void measure_burst(cubert_client *client, int launches, double *out_submit,
                          double *out_total) {
  const cubert_cube_count one = cubert_cube_count_new_3d(1, 1, 1);
  const cubert_cube_dim unit = cubert_cube_dim_new_3d(1, 1, 1);
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < launches; ++i)
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_noop, one, unit, NULL));
  uint64_t t1 = bench_now_ns();
  BENCH_CHECK(cubert_client_sync(client));
  uint64_t t2 = bench_now_ns();
  *out_submit = (double)(t1 - t0) * 1e-3 / launches;
  *out_total = (double)(t2 - t0) * 1e-3 / launches;
}

/* ---- 3. bandwidth ------------------------------------------------------------------------ */

/* triad() and triad_init(): bench_triad.h. */

static double launch_add(cubert_client *client, const geometry *g, cubert_handle *a,
                         cubert_handle *b, cubert_handle *c, uint64_t n) {
  cubert_handle *buffers[3] = {a, b, c};
  uint64_t info[1] = {n};
  cubert_kernel_args args = {buffers, 3, info, 1};
  return time_launch(client, &cubert_kernel_add_f32, g->count, g->dim, &args);
}

static double launch_saxpy(cubert_client *client, const geometry *g, cubert_handle *x,
                           cubert_handle *y, uint64_t n, float alpha) {
  cubert_handle *buffers[2] = {x, y};
  uint64_t info[2] = {n, cubert_kernel_info_f32(alpha)};
  cubert_kernel_args args = {buffers, 2, info, 2};
  return time_launch(client, &cubert_kernel_saxpy_f32, g->count, g->dim, &args);
}

/* Partial sums of `in` (n floats, all 1.0) in cubes of `dim` units, `per_cube` floats each. */
static double launch_reduce(cubert_client *client, cubert_handle *in, cubert_handle *out,
                            uint64_t n, uint64_t per_cube, uint32_t dim) {
  cubert_handle *buffers[2] = {in, out};
  uint64_t info[2] = {n, per_cube};
  cubert_kernel_args args = {buffers, 2, info, 2};
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(
      client, (uint32_t)cubert_kernel_reduce_cube_count(n, per_cube), &sel));
  return time_launch(client, &cubert_kernel_reduce_sum_f32, sel.cube_count,
                     cubert_cube_dim_new_3d(dim, 1, 1), &args);
}

/* copy_strided of a pitched rows x cols float matrix (pitch cols + 7) out of `src` into `dst`
   with the definition `def` (the CPU override or the portable body). */
static double launch_copy(cubert_client *client, const cubert_kernel_def *def, cubert_handle *src,
                          cubert_handle *dst, uint64_t rows, uint64_t cols) {
  cubert_handle *buffers[2] = {src, dst};
  uint64_t info[7] = {2, 4, rows * cols, rows, cols, cols + 7, 1};
  cubert_kernel_args args = {buffers, 2, info, 7};
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)((rows * cols + 255) / 256), &sel));
  return time_launch(client, def, sel.cube_count, cubert_cube_dim_new_3d(256, 1, 1), &args);
}

static void launch_fill(cubert_client *client, const geometry *g, cubert_handle *out, uint64_t n,
                        float value) {
  cubert_handle *buffers[1] = {out};
  uint64_t info[2] = {n, cubert_kernel_info_f32(value)};
  cubert_kernel_args args = {buffers, 1, info, 2};
  time_launch(client, &cubert_kernel_fill_u32, g->count, g->dim, &args);
}

/* ---- 4. cube barrier --------------------------------------------------------------------- */

/* K = info[0] cube barriers per unit and nothing else. */
static void barrier_loop_cpu(const cubert_cpu_ctx *ctx) {
  const uint64_t k = ctx->info[0];
  for (uint64_t i = 0; i < k; ++i) cubert_cpu_sync_cube(ctx);
}

/* The same kernel in OpenCL C (only the CPU server runs it in this benchmark). */
static const char barrier_loop_cl[] =
    "__kernel void bench_barrier_loop(__global const ulong *info) {\n"
    "  const ulong k = info[0];\n"
    "  for (ulong i = 0; i < k; ++i) barrier(CLK_LOCAL_MEM_FENCE);\n"
    "}\n";

static const cubert_kernel_def barrier_loop_kernel = {
    .name = "bench_barrier_loop",
    .opencl_source = barrier_loop_cl,
    .opencl_entry = "bench_barrier_loop",
    .cpu = barrier_loop_cpu,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
};

static double time_barrier(cubert_client *client, const config *cfg, uint64_t k) {
  uint64_t info[1] = {k};
  cubert_kernel_args args = {NULL, 0, info, 1};
  return time_launch(client, &barrier_loop_kernel,
                     cubert_cube_count_new_3d(cfg->barrier_cubes, 1, 1),
                     cubert_cube_dim_new_3d(cfg->barrier_dim, 1, 1), &args);
}

/* ---- the report ------------------------------------------------------------------------ */

static const char *const columns[] = {"Measurement", "Median", "Min\u2013max", "Unit",
                                      "Ratio",       "Target", "Result"};
#define COLUMN_COUNT (sizeof(columns) / sizeof(columns[0]))

static void row(const char *what, bench_stats s, const char *unit, const char *ratio,
                const char *target, const char *result) {
  bench_text median = bench_fmt_median(s), range = bench_fmt_range(s);
  const char *cells[COLUMN_COUNT] = {what, median.s, range.s, unit, ratio, target, result};
  bench_table_row(stdout, cells, COLUMN_COUNT);
}

static const char *verdict(int pass) {
  return pass ? "**pass**" : "**miss**";
}

/* Text for a peer that could not be measured. */
static const char *peer_missing(const peer *p) {
  return p->status == CHILD_EXIT_UNAVAILABLE ? "not available" : "failed";
}

/* "x.xx" = a / b, or "n/a" when b was not measured. */
static bench_text ratio_text(double a, const bench_stats *b) {
  return b->count ? bench_fmt(a / b->median) : bench_textf("n/a");
}

/* What every section needs; notes are printed under the table. */
typedef struct bench_run {
  config cfg;
  cubert_client *client;
  const cubert_hardware_properties *hw;
  int threads;                   /* OpenMP threads of the peers = the server's cores */
  const char *const *env_active; /* child environment: active-wait OpenMP */
  const char *const *env_passive;
  char notes[16][320];
  int note_count;
} bench_run;

static void note(bench_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(bench_run *run, const char *fmt, ...) {
  if (run->note_count >= (int)(sizeof(run->notes) / sizeof(run->notes[0]))) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(run->notes[run->note_count++], sizeof(run->notes[0]), fmt, ap);
  va_end(ap);
}

static void progress(const char *what) {
  fprintf(stderr, "bench_cpu_server: %s (load %s)\n", what, bench_load_avg().s);
}

/* 1. launch + sync, in rounds interleaved with the peers so noise hits all alike. */
static void section_latency(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("1/4 launch + sync");
  noop_ops(run->client, cfg->latency_ops); /* warm-up: workers, stream slot, records */
  size_t cap = (size_t)cfg->latency_rounds * cfg->latency_reps;
  double *lat = calloc(cap, sizeof(*lat));
  peer omp_active, omp_passive, pocl;
  peer_init(&omp_active, cap);
  peer_init(&omp_passive, cap);
  peer_init(&pocl, cap);
  for (int round = 0; round < cfg->latency_rounds; ++round) {
    measure_launch_sync(run->client, cfg->latency_ops, cfg->latency_reps,
                        lat + round * cfg->latency_reps);
    peer_run(&omp_active, "--omp-empty", run->threads, cfg->latency_ops, cfg->latency_reps,
             run->env_active);
    peer_run(&omp_passive, "--omp-empty", run->threads, cfg->latency_ops, cfg->latency_reps,
             run->env_passive);
    peer_run(&pocl, "--pocl-empty", cfg->latency_ops, cfg->latency_reps, 0, NULL);
  }
  bench_stats lat_s = bench_stats_of(lat, cap), omp_s = peer_stats(&omp_active),
              omp_p_s = peer_stats(&omp_passive), pocl_s = peer_stats(&pocl);

  char what[256];
  snprintf(what, sizeof(what), "1. cubert launch + sync, noop, (1,1,1) x (1,1,1), %u threads",
           run->hw->num_compute_units);
  bench_text ratio =
      bench_textf("%.2f\u00d7 target; %s\u00d7 OMP active; %s\u00d7 PoCL", lat_s.median / 2.0,
                  ratio_text(lat_s.median, &omp_s).s, ratio_text(lat_s.median, &pocl_s).s);
  row(what, lat_s, "\u00b5s/op", ratio.s, "\u2264 2 \u00b5s", verdict(lat_s.median <= 2.0));
  snprintf(what, sizeof(what), "1. peer: empty `omp parallel`, %d threads, OMP_WAIT_POLICY=active",
           run->threads);
  row(what, omp_s, "\u00b5s/op", omp_s.count ? "peer" : peer_missing(&omp_active), "", "");
  snprintf(what, sizeof(what), "1. peer: empty `omp parallel`, %d threads, OMP_WAIT_POLICY=passive",
           run->threads);
  row(what, omp_p_s, "\u00b5s/op", omp_p_s.count ? "informative" : peer_missing(&omp_passive), "",
      "");
  row("1. peer: PoCL clEnqueueNDRangeKernel + clFinish, empty kernel, global 1 local 1", pocl_s,
      "\u00b5s/op", pocl_s.count ? "peer" : peer_missing(&pocl), "", "");

  note(run,
       "1: %d rounds of %d repetitions \u00d7 %d ops for cubert and each peer, rounds "
       "interleaved (peers in child processes).",
       cfg->latency_rounds, cfg->latency_reps, cfg->latency_ops);
  if (pocl.comment[0]) note(run, "1: PoCL device: %s", pocl.comment);
  free(lat);
  free(omp_active.samples);
  free(omp_passive.samples);
  free(pocl.samples);
}

/* 2. back-to-back launches, then one sync. */
static void section_burst(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("2/4 back-to-back launches");
  size_t reps = (size_t)cfg->burst_reps;
  double *submit = calloc(reps, sizeof(*submit)), *total = calloc(reps, sizeof(*total));
  measure_burst(run->client, cfg->burst_launches, &submit[0], &total[0]); /* warm-up */
  for (size_t r = 0; r < reps; ++r)
    measure_burst(run->client, cfg->burst_launches, &submit[r], &total[r]);
  bench_stats submit_s = bench_stats_of(submit, reps), total_s = bench_stats_of(total, reps);

  char what[256];
  snprintf(what, sizeof(what), "2. %d back-to-back noop launches + 1 sync, per launch",
           cfg->burst_launches);
  row(what, total_s, "\u00b5s/launch", bench_textf("%.2f\u00d7 target", total_s.median / 0.5).s,
      "\u2264 0.5 \u00b5s", verdict(total_s.median <= 0.5));
  row("2. same, launch calls only (before the sync)", submit_s, "\u00b5s/launch", "informative", "",
      "");
  note(run, "2: %d repetitions of %d launches.", cfg->burst_reps, cfg->burst_launches);
  free(submit);
  free(total);
}

/* 3. add and saxpy against the STREAM triad, repetitions alternating. */
static void section_bandwidth(bench_run *run) {
  const config *cfg = &run->cfg;
  cubert_client *client = run->client;
  const int threads = run->threads;
  progress("3/4 bandwidth");
  uint64_t n = cfg->elements;
  cubert_handle *a = NULL, *b = NULL, *c = NULL;
  for (;;) {
    cubert_status s = NULL;
    a = make_buffer(client, n * 4, &s);
    if (!s) b = make_buffer(client, n * 4, &s);
    if (!s) c = make_buffer(client, n * 4, &s);
    if (!s) break;
    if (cubert_status_code(s) != CUBERT_CODE_BUFFER_TOO_BIG || n <= (1u << 20)) BENCH_CHECK(s);
    fprintf(stderr, "bench_cpu_server: %llu floats per buffer too big (%s); halving\n",
            (unsigned long long)n, cubert_status_message(s));
    cubert_status_free(s);
    cubert_handle_release(a);
    cubert_handle_release(b);
    cubert_handle_release(c);
    a = b = c = NULL;
    n /= 2;
  }
  /* The triad is the physical limit, so its arrays get what the server's big pages get: 2 MiB
     alignment and transparent huge pages. A second triad on plain 4 KiB pages (malloc) shows
     what that is worth. */
  float *ta = bench_huge_alloc(n * 4), *tb = bench_huge_alloc(n * 4), *tc = bench_huge_alloc(n * 4);
  float *sa = aligned_alloc(64, n * 4), *sb = aligned_alloc(64, n * 4),
        *sc = aligned_alloc(64, n * 4);
  if (!ta || !tb || !tc || !sa || !sb || !sc) {
    fprintf(stderr, "host allocation of 6 x %llu floats failed\n", (unsigned long long)n);
    exit(1);
  }
  triad_init(ta, tb, tc, n, threads);
  triad_init(sa, sb, sc, n, threads);

  geometry geo[2] = {
      geometry_for(client, "cube_dim_new", cubert_cube_dim_new(client, (uint32_t)n), n),
      geometry_for(client, "dim 256", cubert_cube_dim_new_3d(256, 1, 1), n),
  };
  /* First touch on the server's threads, then one checked pass of each kernel (warm-up). */
  launch_fill(client, &geo[1], a, n, 1.0f);
  launch_fill(client, &geo[1], b, n, 2.0f);
  launch_fill(client, &geo[1], c, n, 0.0f);
  const float alpha = 0.5f;
  for (int g = 0; g < 2; ++g) {
    launch_add(client, &geo[g], a, b, c, n);
    verify_f32(client, c, n, 3.0f, "add_f32");
    launch_saxpy(client, &geo[g], a, c, n, alpha);
    verify_f32(client, c, n, 3.5f, "saxpy_f32");
  }
  triad(ta, tb, tc, 3.0f, n, threads);
  triad(sa, sb, sc, 3.0f, n, threads);
  if (ta[0] != 7.0f || ta[n - 1] != 7.0f || sa[0] != 7.0f || sa[n - 1] != 7.0f) {
    fprintf(stderr, "triad: wrong result %g\n", (double)ta[0]);
    exit(1);
  }

  /* reduce_sum_f32 reads a (all 1.0 after the fill) into one partial sum per cube. */
  const uint64_t per_cube = 65536;
  cubert_status made = NULL;
  cubert_handle *partial =
      make_buffer(client, cubert_kernel_reduce_cube_count(n, per_cube) * 4, &made);
  BENCH_CHECK(made);
  static const uint32_t reduce_dims[2] = {256, 1024};
  for (int g = 0; g < 2; ++g) launch_reduce(client, a, partial, n, per_cube, reduce_dims[g]);
  verify_f32(client, partial, 1, (float)per_cube, "reduce_sum_f32");

  /* copy_strided: the CPU override (rows with memcpy) against the portable kernel-language body
     (a byte per checked access), reading a pitched matrix out of `a` into `b`. */
  const uint64_t cols = 4096, rows = n / (cols + 7) < 4096 ? n / (cols + 7) : 4096;
  cubert_handle *copied = make_buffer(client, rows * cols * 4, &made);
  BENCH_CHECK(made);
  launch_copy(client, &cubert_kernel_copy_strided, a, copied, rows, cols);
  launch_copy(client, &cubert_kernel_copy_strided_portable, a, copied, rows, cols);

  const size_t reps = (size_t)cfg->bandwidth_reps;
  double *t_triad = calloc(reps, sizeof(double)), *t_triad_small = calloc(reps, sizeof(double));
  double *t_reduce[2] = {calloc(reps, sizeof(double)), calloc(reps, sizeof(double))};
  double *t_copy[2] = {calloc(reps, sizeof(double)), calloc(reps, sizeof(double))};
  double *t_add[2] = {calloc(reps, sizeof(double)), calloc(reps, sizeof(double))};
  double *t_saxpy[2] = {calloc(reps, sizeof(double)), calloc(reps, sizeof(double))};
  for (size_t r = 0; r < reps; ++r) {
    t_triad[r] = triad(ta, tb, tc, 3.0f, n, threads);
    for (int g = 0; g < 2; ++g) t_add[g][r] = launch_add(client, &geo[g], a, b, c, n);
    for (int g = 0; g < 2; ++g) t_saxpy[g][r] = launch_saxpy(client, &geo[g], a, c, n, alpha);
    for (int g = 0; g < 2; ++g)
      t_reduce[g][r] = launch_reduce(client, a, partial, n, per_cube, reduce_dims[g]);
    if (r < 3) {
      t_copy[0][r] = launch_copy(client, &cubert_kernel_copy_strided, a, copied, rows, cols);
      t_copy[1][r] =
          launch_copy(client, &cubert_kernel_copy_strided_portable, a, copied, rows, cols);
    }
    t_triad_small[r] = triad(sa, sb, sc, 3.0f, n, threads);
  }
  /* c = 3 + 2 * alpha after the last repetition: the timed launches really ran. */
  verify_f32(client, c, n, 3.0f + 2.0f * alpha, "saxpy_f32 (timed)");
  const double gb = 3.0 * 4.0 * (double)n * 1e-9;
  bench_stats bw_triad = bench_stats_rate(bench_stats_of(t_triad, reps), gb);
  bench_stats bw_triad_small = bench_stats_rate(bench_stats_of(t_triad_small, reps), gb);
  bench_stats bw_add[2], bw_saxpy[2];
  for (int g = 0; g < 2; ++g) {
    bw_add[g] = bench_stats_rate(bench_stats_of(t_add[g], reps), gb);
    bw_saxpy[g] = bench_stats_rate(bench_stats_of(t_saxpy[g], reps), gb);
  }

  char what[256];
  snprintf(what, sizeof(what),
           "3. peer: STREAM triad a = b + s\u00b7c, OpenMP static, %d threads, 2 MiB THP arrays",
           threads);
  row(what, bw_triad, "GB/s", "peer (100%)", "", "");
  bench_text small =
      bench_textf("%.0f%% of triad (informative)", 100.0 * bw_triad_small.median / bw_triad.median);
  row("3. same triad on 4 KiB pages (malloc, no MADV_HUGEPAGE)", bw_triad_small, "GB/s", small.s,
      "", "");
  /* Per kernel: the better geometry is the headline (with the target), the other follows. */
  const char *names[2] = {"add_f32 c = a + b", "saxpy_f32 y = a\u00b7x + y"};
  bench_stats *bws[2] = {bw_add, bw_saxpy};
  for (int kernel = 0; kernel < 2; ++kernel) {
    const bench_stats *bw = bws[kernel];
    int best = bw[1].median > bw[0].median;
    for (int k = 0; k < 2; ++k) {
      int g = k == 0 ? best : !best;
      snprintf(what, sizeof(what), "3. cubert %s (%s%s)", names[kernel], geo[g].label,
               k == 0 ? "" : ", other geometry");
      bench_text ratio = bench_textf("%.0f%% of triad", 100.0 * bw[g].median / bw_triad.median);
      row(what, bw[g], "GB/s", ratio.s, k == 0 ? "\u2265 90% of triad" : "",
          k == 0 ? verdict(bw[g].median >= 0.9 * bw_triad.median) : "");
    }
  }
  verify_f32(client, partial, 1, (float)per_cube, "reduce_sum_f32 (timed)");
  bench_stats bw_reduce[2];
  for (int g = 0; g < 2; ++g)
    bw_reduce[g] = bench_stats_rate(bench_stats_of(t_reduce[g], reps), 4.0 * (double)n * 1e-9);
  const int best_reduce = bw_reduce[1].median > bw_reduce[0].median;
  for (int k = 0; k < 2; ++k) {
    const int g = k == 0 ? best_reduce : !best_reduce;
    snprintf(what, sizeof(what),
             "3. cubert reduce_sum_f32 (phased cube kernel, dim %u, 65536 floats per cube%s)",
             reduce_dims[g], k == 0 ? "" : ", other geometry");
    bench_text reduce_ratio =
        bench_textf("%.0f%% of triad", 100.0 * bw_reduce[g].median / bw_triad.median);
    row(what, bw_reduce[g], "GB/s", reduce_ratio.s, k == 0 ? "\u2265 80% of triad" : "",
        k == 0 ? verdict(bw_reduce[g].median >= 0.8 * bw_triad.median) : "");
  }
  const size_t copy_reps = reps < 3 ? reps : 3;
  const double copy_gb = 2.0 * 4.0 * (double)(rows * cols) * 1e-9;
  bench_stats bw_copy[2] = {bench_stats_rate(bench_stats_of(t_copy[0], copy_reps), copy_gb),
                            bench_stats_rate(bench_stats_of(t_copy[1], copy_reps), copy_gb)};
  bench_text copy_ratio =
      bench_textf("override %.1f\u00d7 the portable body", bw_copy[0].median / bw_copy[1].median);
  row("3. copy_strided, pitched 4096-float rows: CPU override (rows with memcpy)", bw_copy[0],
      "GB/s", copy_ratio.s, "\u2265 1.1\u00d7 to keep it",
      verdict(bw_copy[0].median >= 1.1 * bw_copy[1].median));
  row("3. copy_strided, the same: portable kernel-language body", bw_copy[1], "GB/s", "", "", "");
  note(run,
       "3: n = %llu floats (%.0f MiB per array), %zu repetitions alternating triad, add \u00d7 2, "
       "saxpy \u00d7 2, reduce, triad on 4 KiB pages; bandwidth = 3 \u00d7 4 B \u00d7 n / time "
       "(reduce: 4 B \u00d7 n / time, it only reads). All kernels are kernel-language kernels "
       "(kernels/*.cube.c) in the default checked mode.",
       (unsigned long long)n, n * 4.0 / (1 << 20), reps);
  for (int g = 0; g < 2; ++g) note(run, "3: %s", geo[g].text);

  free(t_triad);
  free(t_triad_small);
  free(t_reduce[0]);
  free(t_reduce[1]);
  free(t_copy[0]);
  free(t_copy[1]);
  cubert_handle_release(copied);
  cubert_handle_release(partial);
  for (int g = 0; g < 2; ++g) {
    free(t_add[g]);
    free(t_saxpy[g]);
  }
  bench_huge_free(ta, n * 4);
  bench_huge_free(tb, n * 4);
  bench_huge_free(tc, n * 4);
  free(sa);
  free(sb);
  free(sc);
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_handle_release(c);
  BENCH_CHECK(cubert_client_memory_cleanup(client));
}

/* 4. the cube barrier, K = 0 and K = barrier_k launches alternating. */
static void section_barrier(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("4/4 cube barrier");
  const size_t reps = (size_t)cfg->barrier_reps;
  double *t_k0 = calloc(reps, sizeof(double)), *t_k = calloc(reps, sizeof(double));
  double *per_barrier = calloc(reps, sizeof(double));
  time_barrier(run->client, cfg, 0); /* warm-up */
  time_barrier(run->client, cfg, cfg->barrier_k);
  const double crossings = (double)cfg->barrier_cubes * cfg->barrier_dim * cfg->barrier_k;
  for (size_t r = 0; r < reps; ++r) {
    t_k0[r] = time_barrier(run->client, cfg, 0);
    t_k[r] = time_barrier(run->client, cfg, cfg->barrier_k);
    per_barrier[r] = (t_k[r] - t_k0[r]) * 1e6 / crossings;
  }
  bench_stats k0_s = bench_stats_scale(bench_stats_of(t_k0, reps), 1e3);
  bench_stats k_s = bench_stats_scale(bench_stats_of(t_k, reps), 1e3);
  bench_stats barrier_s = bench_stats_of(per_barrier, reps);
  peer omp_barrier;
  peer_init(&omp_barrier, reps);
  peer_run(&omp_barrier, "--omp-barrier", run->threads, cfg->omp_barrier_count, (int)reps,
           run->env_active);
  bench_stats ompb_s = peer_stats(&omp_barrier);

  char what[256];
  snprintf(what, sizeof(what),
           "4. cubert cube barrier, per unit per barrier: (t(K=%u) \u2212 t(K=0)) / (%u \u00d7 "
           "%u \u00d7 %u)",
           cfg->barrier_k, cfg->barrier_cubes, cfg->barrier_dim, cfg->barrier_k);
  bench_text ratio = bench_textf("%.2f\u00d7 target; %s\u00d7 OMP", barrier_s.median / 0.1,
                                 ratio_text(barrier_s.median, &ompb_s).s);
  row(what, barrier_s, "\u00b5s", ratio.s, "\u2264 0.1 \u00b5s", verdict(barrier_s.median <= 0.1));
  snprintf(what, sizeof(what), "4. the launch with K=0 (%u cubes \u00d7 %u units)",
           cfg->barrier_cubes, cfg->barrier_dim);
  row(what, k0_s, "ms", "informative", "", "");
  snprintf(what, sizeof(what), "4. the launch with K=%u", cfg->barrier_k);
  row(what, k_s, "ms", "informative", "", "");
  snprintf(what, sizeof(what),
           "4. peer: `omp barrier`, %d threads, active, wall / (barriers \u00d7 threads)",
           run->threads);
  row(what, ompb_s, "\u00b5s", ompb_s.count ? "informative" : peer_missing(&omp_barrier), "", "");

  note(run, "4: %zu (K=0, K=%u) pairs; statistics of the per-pair differences.", reps,
       cfg->barrier_k);
  if (ompb_s.count)
    note(run, "4: one `omp barrier` with %d threads takes %s \u00b5s of wall time (median).",
         run->threads, bench_fmt(ompb_s.median * run->threads).s);
  free(t_k0);
  free(t_k);
  free(per_barrier);
  free(omp_barrier.samples);
}

static int usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--quick] [--n=ELEMENTS] [--only=1234] [--device=SELECTOR]\n", argv0);
  return 2;
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "--omp-empty") == 0)
    return child_omp_empty(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (argc >= 5 && strcmp(argv[1], "--omp-barrier") == 0)
    return child_omp_barrier(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (argc >= 4 && strcmp(argv[1], "--pocl-empty") == 0)
    return child_pocl_empty(atoi(argv[2]), atoi(argv[3]));

  bench_run run;
  memset(&run, 0, sizeof(run));
  run.cfg = config_default();
  const char *selector = "cpu";
  const char *only = "1234";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      run.cfg.latency_rounds = 1;
      run.cfg.latency_reps = 5;
      run.cfg.burst_reps = 5;
      run.cfg.elements = 4ull << 20;
      run.cfg.bandwidth_reps = 3;
      run.cfg.barrier_reps = 3;
    } else if (strncmp(argv[i], "--device=", 9) == 0) {
      selector = argv[i] + 9;
    } else if (strncmp(argv[i], "--n=", 4) == 0) {
      run.cfg.elements = strtoull(argv[i] + 4, NULL, 10);
    } else if (strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else {
      return usage(argv[0]);
    }
  }
  if (run.cfg.elements < 1024) run.cfg.elements = 1024;
  if (run.cfg.elements > UINT32_MAX) run.cfg.elements = UINT32_MAX;

  {
    const char *names[] = {"OMP_WAIT_POLICY"};
    const char *values[] = {"passive"};
    bench_reexec_with_env(argv, "BENCH_CPU_SERVER_RESTARTED", names, values, 1);
  }

  BENCH_CHECK(cubert_client_create(selector, &run.client));
  const cubert_device_properties *props = cubert_client_properties(run.client);
  run.hw = &props->hardware;
  run.threads = (int)(run.hw->num_cpu_cores       ? run.hw->num_cpu_cores
                      : run.hw->num_compute_units ? run.hw->num_compute_units
                                                  : 1);
  char threads_env[48];
  snprintf(threads_env, sizeof(threads_env), "OMP_NUM_THREADS=%d", run.threads);
  const char *env_active[] = {"OMP_WAIT_POLICY=active", threads_env, NULL};
  const char *env_passive[] = {"OMP_WAIT_POLICY=passive", threads_env, NULL};
  run.env_active = env_active;
  run.env_passive = env_passive;

  printf("# bench_cpu_server\n\n");
  bench_print_env(stdout);
  printf("- cubert %s, device \"%s\" (backend %s): num_cpu_cores %u, kernel threads %u\n",
         CUBERT_VERSION_STRING, props->name, props->backend, run.hw->num_cpu_cores,
         run.hw->num_compute_units);
#ifdef _OPENMP
  const char *policy = getenv("OMP_WAIT_POLICY");
  printf("- OpenMP %d: %d threads for the peers; main process OMP_WAIT_POLICY=%s\n", _OPENMP,
         run.threads, policy ? policy : "(unset)");
#else
  printf("- OpenMP: not built in (the OpenMP peers are n/a)\n");
#endif
  printf("\n");
  bench_table_header(stdout, columns, COLUMN_COUNT);

  if (strchr(only, '1')) section_latency(&run);
  if (strchr(only, '2')) section_burst(&run);
  if (strchr(only, '3')) section_bandwidth(&run);
  if (strchr(only, '4')) section_barrier(&run);

  printf("\nNotes:\n");
  for (int i = 0; i < run.note_count; ++i) printf("- %s\n", run.notes[i]);
  printf("- load average (1/5/15 min) at the end: %s\n", bench_load_avg().s);
  cubert_client_release(run.client);
  return 0;
}
