/* bench_client_memory — issue 3's figures through the public client (pools behind
   cubert_client_empty / cubert_handle_release), with the peers measured in the same run:
     1. empty + release of 1 MiB (target ≤ 0.5 µs) vs malloc + free of 1 MiB, and on OpenCL
        devices raw clCreateBuffer + clReleaseMemObject (and with a first kernel in between);
     2. a mixed workload, 1 KiB–64 MiB log-uniform sizes, random lifetimes, 100,000 operations:
        peak bytes_reserved / peak bytes_in_use (target ≤ 1.5);
     3. a loop re-creating the same working set: bytes_reserved after every iteration (target:
        no growth after the first).
   Usage: bench_client_memory [--device=SELECTOR] (default "cpu"). */
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#ifdef CUBERT_WITH_OPENCL
#include <CL/cl.h>

#include "../backends/opencl/api.h"
#include "client.h"
#endif

#define CHECK(expr)                                                         \
  do {                                                                      \
    cubert_status s_ = (expr);                                              \
    if (s_) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #expr, cubert_status_message(s_)); \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

enum { BATCHES = 31, PAIRS = 2000 };
static cubert_client *client;
static volatile uintptr_t sink;

static double empty_release(uint64_t size) {
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < PAIRS; ++i) {
    cubert_handle *h = NULL;
    CHECK(cubert_client_empty(client, size, &h));
    sink += (uintptr_t)h;
    cubert_handle_release(h);
  }
  return (double)(bench_now_ns() - t0) / PAIRS;
}

static double malloc_free(uint64_t size) {
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < PAIRS; ++i) {
    void *p = malloc(size);
    sink += (uintptr_t)p;
    free(p);
  }
  return (double)(bench_now_ns() - t0) / PAIRS;
}

#ifdef CUBERT_WITH_OPENCL
/* Raw OpenCL peers in cubert's own context (OpenCL devices only). */
static cl_context raw_context;
static cl_command_queue raw_queue;
static cl_kernel raw_kernel;

static double cl_create_release(uint64_t size, int with_kernel, int pairs) {
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < pairs; ++i) {
    cl_int err;
    cl_mem m = clCreateBuffer(raw_context, CL_MEM_READ_WRITE, size, NULL, &err);
    if (err != CL_SUCCESS) exit(2);
    if (with_kernel) {
      size_t one = 1;
      clSetKernelArg(raw_kernel, 0, sizeof(cl_mem), &m);
      clEnqueueNDRangeKernel(raw_queue, raw_kernel, 1, NULL, &one, &one, 0, NULL, NULL);
      clFinish(raw_queue);
    }
    clReleaseMemObject(m);
  }
  return (double)(bench_now_ns() - t0) / pairs;
}

static int raw_open(void) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (strcmp(p->backend, "opencl") != 0) return 0;
  cl_device_id device;
  cubert_status s =
      cubert_ocl_server_context(cubert_client_device(client)->server, &raw_context, &device);
  if (s) {
    cubert_status_free(s);
    return 0;
  }
  cl_int err;
  raw_queue = clCreateCommandQueue(raw_context, device, 0, &err);
  const char *src = "__kernel void touch(__global uint *p) { p[0] = 1u; }";
  cl_program prog = clCreateProgramWithSource(raw_context, 1, &src, NULL, &err);
  if (clBuildProgram(prog, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 0;
  raw_kernel = clCreateKernel(prog, "touch", &err);
  clReleaseProgram(prog);
  return raw_kernel != NULL;
}
#endif

/* Mixed workload: every operation allocates one buffer of a log-uniform size in
   [1 KiB, 64 MiB] and schedules its release 1–64 operations later. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void mixed(int ops, double *out_ratio, double *out_in_use_mib, double *out_reserved_mib) {
  enum { HORIZON = 64 };
  cubert_handle *due[HORIZON][8];
  int due_count[HORIZON] = {0};
  uint64_t peak_reserved = 0, peak_in_use = 0;
  for (int op = 0; op < ops + HORIZON; ++op) {
    int slot = op % HORIZON;
    for (int i = 0; i < due_count[slot]; ++i) cubert_handle_release(due[slot][i]);
    due_count[slot] = 0;
    if (op < ops) {
      double e = (double)(rng() % 1000000) / 1000000.0; /* log2 size in [10, 26] */
      uint64_t size = (uint64_t)(1024.0 * __builtin_exp2(16.0 * e));
      int life = 1 + (int)(rng() % (HORIZON - 1));
      int at = (op + life) % HORIZON;
      if (due_count[at] == 8) at = slot; /* full bucket: release at the next pass */
      cubert_handle *h = NULL;
      CHECK(cubert_client_empty(client, size, &h));
      if (due_count[at] < 8)
        due[at][due_count[at]++] = h;
      else
        cubert_handle_release(h);
    }
    cubert_memory_usage u;
    CHECK(cubert_client_memory_usage(client, &u));
    if (u.bytes_reserved > peak_reserved) peak_reserved = u.bytes_reserved;
    if (u.bytes_in_use > peak_in_use) peak_in_use = u.bytes_in_use;
  }
  *out_ratio = (double)peak_reserved / (double)peak_in_use;
  *out_in_use_mib = peak_in_use / 1048576.0;
  *out_reserved_mib = peak_reserved / 1048576.0;
}

int main(int argc, char **argv) {
  const char *device = "cpu";
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--device=", 9) == 0) device = argv[i] + 9;
  CHECK(cubert_client_create(device, &client));
  printf("# bench_client_memory\n\n");
  bench_print_env(stdout);
  printf("- device: \"%s\" (backend %s), selector \"%s\"\n\n",
         cubert_client_properties(client)->name, cubert_client_properties(client)->backend, device);
  bench_compare_header(stdout);

  /* 1. empty + release of 1 MiB vs malloc + free, interleaved batch by batch. */
  const uint64_t mib = 1u << 20;
  double a[BATCHES], b[BATCHES];
  empty_release(mib);
  malloc_free(mib);
  for (int i = 0; i < BATCHES; ++i) {
    a[i] = empty_release(mib);
    b[i] = malloc_free(mib);
  }
  bench_stats sa = bench_stats_scale(bench_stats_of(a, BATCHES), 1e-3);
  bench_stats sb = bench_stats_scale(bench_stats_of(b, BATCHES), 1e-3);
  bench_text ratio = bench_textf("%.2f× malloc+free", sa.median / sb.median);
  bench_compare_row(stdout, "1. cubert_client_empty + cubert_handle_release, 1 MiB", "µs/pair", sa,
                    "malloc + free, 1 MiB", sb, ratio.s, "≤ 0.5 µs",
                    bench_verdict(sa.median <= 0.5));
#ifdef CUBERT_WITH_OPENCL
  if (raw_open()) {
    double c[BATCHES], d[BATCHES / 3 + 1];
    cl_create_release(mib, 0, 50);
    cl_create_release(mib, 1, 5);
    for (int i = 0; i < BATCHES; ++i) c[i] = cl_create_release(mib, 0, 200);
    for (int i = 0; i < BATCHES / 3 + 1; ++i) d[i] = cl_create_release(mib, 1, 20);
    bench_stats sc = bench_stats_scale(bench_stats_of(c, BATCHES), 1e-3);
    bench_stats sd = bench_stats_scale(bench_stats_of(d, BATCHES / 3 + 1), 1e-3);
    bench_text r2 = bench_textf("%.3f× raw", sa.median / sc.median);
    bench_compare_row(stdout, "1. same, vs raw clCreateBuffer + clReleaseMemObject", "µs/pair", sa,
                      "raw create + release, 1 MiB", sc, r2.s, "informative", "");
    bench_text r3 = bench_textf("%.4f× raw", sa.median / sd.median);
    bench_compare_row(stdout, "1. same, vs raw create + first kernel + release", "µs/pair", sa,
                      "raw create + 1-unit kernel + clFinish + release", sd, r3.s, "informative",
                      "");
  }
#endif

  /* 2. mixed workload */
  double ratios[3], in_use = 0, reserved = 0;
  for (int i = 0; i < 3; ++i) {
    rng_state = 0x9E3779B97F4A7C15ull + (uint64_t)i * 7919u;
    mixed(100000, &ratios[i], &in_use, &reserved);
    CHECK(cubert_client_memory_cleanup(client));
  }
  bench_stats sr = bench_stats_of(ratios, 3);
  bench_text r4 =
      bench_textf("peak in use %.0f MiB, reserved %.0f MiB (last seed)", in_use, reserved);
  bench_compare_row(stdout,
                    "2. mixed workload, 100,000 ops, 1 KiB–64 MiB, 3 seeds: peak reserved / peak "
                    "in use",
                    "ratio", sr, "", (bench_stats){0}, r4.s, "≤ 1.5", bench_verdict(sr.max <= 1.5));

  /* 3. working set re-created 20 times */
  enum { SET = 48, ITER = 20 };
  uint64_t sizes[SET], first = 0, most = 0, least = UINT64_MAX;
  for (int i = 0; i < SET; ++i) sizes[i] = 1024ull << (rng() % 16);
  for (int it = 0; it < ITER; ++it) {
    cubert_handle *hs[SET];
    for (int i = 0; i < SET; ++i) CHECK(cubert_client_empty(client, sizes[i], &hs[i]));
    for (int i = 0; i < SET; ++i) cubert_handle_release(hs[(i * 7) % SET]);
    cubert_memory_usage u;
    CHECK(cubert_client_memory_usage(client, &u));
    if (it == 0) first = u.bytes_reserved;
    if (u.bytes_reserved > most) most = u.bytes_reserved;
    if (u.bytes_reserved < least) least = u.bytes_reserved;
  }
  bench_stats sw = {most / 1048576.0, least / 1048576.0, most / 1048576.0, ITER};
  bench_text r5 = bench_textf("after iteration 1: %.1f MiB; growth %.1f MiB", first / 1048576.0,
                              (most - first) / 1048576.0);
  bench_compare_row(stdout, "3. same working set (48 buffers, 1 KiB–32 MiB) × 20: bytes_reserved",
                    "MiB", sw, "", (bench_stats){0}, r5.s, "no growth after iteration 1",
                    bench_verdict(most == first));
  printf("\n");
  cubert_client_release(client);
  return 0;
}
