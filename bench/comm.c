/* bench_comm — in-process all_reduce (cubert/comm.h) against the staged-copy peak of its
   members, measured in the same run.

   Usage: bench_comm [devices] [--size MiB] [--reps N]
     devices: comma-separated selectors, one member each (default "cpu,opencl"; on a two-GPU
     machine "opencl:0,opencl:1"). --size: MiB of f32 per member (default 256).

   Figures (medians, min-max over the reps):
   - all_reduce (sum, f32) algorithm bandwidth = size / time, bus bandwidth = 2 (N-1)/N *
     size / time, time = from the call until every member's sync returned;
   - staged-copy peak: every member at once copies `size` bytes device -> pinned host ->
     device (raw OpenCL on a queue of its own: clEnqueueReadBuffer into a mapped
     CL_MEM_ALLOC_HOST_PTR buffer, then clEnqueueWriteBuffer back, in chunks of 4 MiB on two
     queues so that the directions overlap as the engine's do; the CPU server: memcpy to a
     host buffer and back), rate = size / time of the slowest member. It is the bound of a
     collective staged through host memory, which moves those bytes per member
     (lib/comm/README.md);
   - ratio = all_reduce algorithm bandwidth / staged-copy peak (issue 14: >= 70% on two
     H200s). */
#include "cubert/comm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cubert/cpu.h"
#ifdef CUBERT_WITH_OPENCL
#include <CL/cl.h>

#include "cubert/opencl.h"
#endif

#define MAXM 8
#define PEAK_CHUNK (4u << 20)

typedef struct member {
  char selector[64];
  cubert_client *client;
  cubert_handle *src, *dst;
  int is_cpu;
  void *host; /* CPU peak: the host buffer */
  void *src_ptr, *dst_ptr;
#ifdef CUBERT_WITH_OPENCL
  cl_mem pinned;
  void *pinned_ptr;
  cl_command_queue q_out, q_in;
  cl_mem src_mem, dst_mem;
  size_t src_off, dst_off;
#endif
} member;

static size_t bytes;
static member members[MAXM];
static size_t n;
static pthread_barrier_t start_barrier;

static void staged_copy(member *m) {
  if (m->is_cpu) {
    memcpy(m->host, m->src_ptr, bytes);
    memcpy(m->dst_ptr, m->host, bytes);
    return;
  }
#ifdef CUBERT_WITH_OPENCL
  /* chunks through a 2-slot pinned ring: read chunk k on q_out while chunk k-1 is written on
     q_in (the write waits for its read through an event) */
  cl_event reads[2] = {NULL, NULL}, writes[2] = {NULL, NULL};
  size_t chunks = (bytes + PEAK_CHUNK - 1) / PEAK_CHUNK;
  for (size_t k = 0; k < chunks; ++k) {
    size_t slot = k % 2, off = k * PEAK_CHUNK;
    size_t len = bytes - off < PEAK_CHUNK ? bytes - off : PEAK_CHUNK;
    char *host = (char *)m->pinned_ptr + slot * PEAK_CHUNK;
    cl_uint nwait = writes[slot] ? 1 : 0;
    if (reads[slot]) clReleaseEvent(reads[slot]);
    clEnqueueReadBuffer(m->q_out, m->src_mem, CL_FALSE, m->src_off + off, len, host, nwait,
                        nwait ? &writes[slot] : NULL, &reads[slot]);
    if (writes[slot]) clReleaseEvent(writes[slot]);
    clEnqueueWriteBuffer(m->q_in, m->dst_mem, CL_FALSE, m->dst_off + off, len, host, 1,
                         &reads[slot], &writes[slot]);
    clFlush(m->q_out);
    clFlush(m->q_in);
  }
  clFinish(m->q_out);
  clFinish(m->q_in);
  for (int i = 0; i < 2; ++i) {
    if (reads[i]) clReleaseEvent(reads[i]);
    if (writes[i]) clReleaseEvent(writes[i]);
  }
#endif
}

static void *peak_thread(void *arg) {
  member *m = arg;
  pthread_barrier_wait(&start_barrier);
  staged_copy(m);
  return NULL;
}

static double time_peak(void) {
  pthread_t threads[MAXM];
  pthread_barrier_init(&start_barrier, NULL, (unsigned)n + 1);
  for (size_t i = 0; i < n; ++i) pthread_create(&threads[i], NULL, peak_thread, &members[i]);
  pthread_barrier_wait(&start_barrier);
  uint64_t t0 = bench_now_ns();
  for (size_t i = 0; i < n; ++i) pthread_join(threads[i], NULL);
  double s = bench_seconds_since(t0);
  pthread_barrier_destroy(&start_barrier);
  return s;
}

static double time_all_reduce(cubert_comm *comm, cubert_handle **src, cubert_handle **dst,
                              size_t count) {
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_comm_all_reduce(comm, src, dst, count, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  for (size_t i = 0; i < n; ++i) BENCH_CHECK(cubert_client_sync(members[i].client));
  return bench_seconds_since(t0);
}

static void setup_peak(member *m) {
  if (m->is_cpu) {
    m->host = bench_huge_alloc(bytes);
    BENCH_CHECK(cubert_cpu_handle_ptr(m->client, m->src, &m->src_ptr, NULL));
    BENCH_CHECK(cubert_cpu_handle_ptr(m->client, m->dst, &m->dst_ptr, NULL));
    memset(m->host, 0, bytes);
    return;
  }
#ifdef CUBERT_WITH_OPENCL
  cl_context ctx = NULL;
  cl_device_id dev = NULL;
  BENCH_CHECK(cubert_opencl_context(m->client, &ctx, &dev));
  BENCH_CHECK(cubert_opencl_handle_mem(m->client, m->src, &m->src_mem, &m->src_off));
  BENCH_CHECK(cubert_opencl_handle_mem(m->client, m->dst, &m->dst_mem, &m->dst_off));
  BENCH_CHECK(cubert_client_sync(m->client));
  cl_int err = CL_SUCCESS;
  m->q_out = clCreateCommandQueue(ctx, dev, 0, &err);
  m->q_in = clCreateCommandQueue(ctx, dev, 0, &err);
  m->pinned =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 2 * PEAK_CHUNK, NULL, &err);
  if (err == CL_SUCCESS)
    m->pinned_ptr = clEnqueueMapBuffer(m->q_out, m->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                       2 * PEAK_CHUNK, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS || !m->pinned_ptr) {
    fprintf(stderr, "pinned buffer for %s: OpenCL error %d\n", m->selector, err);
    exit(1);
  }
#else
  fprintf(stderr, "%s: built without OpenCL\n", m->selector);
  exit(1);
#endif
}

static void teardown_peak(member *m) {
  if (m->is_cpu) {
    bench_huge_free(m->host, bytes);
    return;
  }
#ifdef CUBERT_WITH_OPENCL
  clEnqueueUnmapMemObject(m->q_out, m->pinned, m->pinned_ptr, 0, NULL, NULL);
  clFinish(m->q_out);
  clReleaseMemObject(m->pinned);
  clReleaseCommandQueue(m->q_out);
  clReleaseCommandQueue(m->q_in);
#endif
}

int main(int argc, char **argv) {
  const char *devices = "cpu,opencl";
  size_t mib = 256;
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc)
      mib = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (argv[i][0] != '-')
      devices = argv[i];
    else {
      fprintf(stderr, "usage: %s [devices] [--size MiB] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > 1000) reps = 10;
  bytes = mib << 20;
  size_t count = bytes / 4;
  char list[512];
  snprintf(list, sizeof list, "%s", devices);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < MAXM;
       tok = strtok_r(NULL, ",", &save)) {
    member *m = &members[n++];
    snprintf(m->selector, sizeof m->selector, "%s", tok);
    BENCH_CHECK(cubert_client_create(tok, &m->client));
    m->is_cpu = !strcmp(cubert_client_properties(m->client)->backend, "cpu");
  }
  printf(
      "# bench_comm: in-process all_reduce, %zu MiB f32 per member, %zu members (%s), %d reps\n\n",
      mib, n, devices, reps);
  bench_print_env(stdout);
  for (size_t i = 0; i < n; ++i)
    printf("- member %zu: %s = \"%s\"\n", i, members[i].selector,
           cubert_client_properties(members[i].client)->name);
  printf("\n");

  float *init = bench_huge_alloc(bytes);
  for (size_t k = 0; k < count; ++k) init[k] = (float)(k % 1024) * 0.25f;
  cubert_handle *src[MAXM], *dst[MAXM];
  cubert_client *clients[MAXM];
  for (size_t i = 0; i < n; ++i) {
    member *m = &members[i];
    BENCH_CHECK(cubert_client_create_buffer(m->client, init, bytes, &m->src));
    BENCH_CHECK(cubert_client_empty(m->client, bytes, &m->dst));
    BENCH_CHECK(cubert_client_sync(m->client));
    src[i] = m->src;
    dst[i] = m->dst;
    clients[i] = m->client;
    setup_peak(m);
  }
  cubert_comm *comm = NULL;
  BENCH_CHECK(cubert_comm_create(clients, n, &comm));

  /* warm-up (pinned buffers, first-touch, programs), then interleaved samples */
  time_all_reduce(comm, src, dst, count);
  time_peak();
  double *t_ar = calloc((size_t)reps, sizeof(double)), *t_pk = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    t_ar[r] = time_all_reduce(comm, src, dst, count);
    t_pk[r] = time_peak();
  }
  double gb = (double)bytes / 1e9;
  bench_stats ar = bench_stats_rate(bench_stats_of(t_ar, (size_t)reps), gb);
  bench_stats bus = bench_stats_scale(ar, n > 1 ? 2.0 * (double)(n - 1) / (double)n : 0.0);
  bench_stats pk = bench_stats_rate(bench_stats_of(t_pk, (size_t)reps), gb);
  bench_stats tm = bench_stats_scale(bench_stats_of(t_ar, (size_t)reps), 1e3);
  const char *titles[] = {"measure", "median", "min-max"};
  bench_table_header(stdout, titles, 3);
  const char *row1[] = {"all_reduce time (ms)", bench_fmt_median(tm).s, bench_fmt_range(tm).s};
  bench_table_row(stdout, row1, 3);
  const char *row2[] = {"all_reduce algbw (GB/s)", bench_fmt_median(ar).s, bench_fmt_range(ar).s};
  bench_table_row(stdout, row2, 3);
  const char *row3[] = {"all_reduce busbw (GB/s)", bench_fmt_median(bus).s, bench_fmt_range(bus).s};
  bench_table_row(stdout, row3, 3);
  const char *row4[] = {"staged-copy peak (GB/s)", bench_fmt_median(pk).s, bench_fmt_range(pk).s};
  bench_table_row(stdout, row4, 3);
  printf("\nratio all_reduce algbw / staged-copy peak (medians): %.2f\n",
         pk.median > 0 ? ar.median / pk.median : 0.0);

  cubert_comm_release(comm);
  for (size_t i = 0; i < n; ++i) {
    teardown_peak(&members[i]);
    cubert_handle_release(members[i].src);
    cubert_handle_release(members[i].dst);
    cubert_client_release(members[i].client);
  }
  bench_huge_free(init, bytes);
  free(t_ar);
  free(t_pk);
  return 0;
}
