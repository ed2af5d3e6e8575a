/* bench_replay — would a record/replay of a stream's launches (cubecl's graph capture: its
   graph_prepare, begin_capture, end_capture, replay) pay on cubert's servers? Issue 25 item 8
   adds it only where replay beats plain launches by 1.5x or more on some device.

   A stream of `ops` small launches then one sync, on one device, time per launch of:
   A. plain: cubert_client_launch of cubert_kernel_fill_u32 over 64 elements (1 cube of 64
      units, one buffer, two info words): every check of the core, then the server's launch.
   B. replay bound: the server's launch alone (vtable->launch under the device lock, the
      launch struct and its bindings resolved once beforehand): what a replay of recorded
      launches would still do on a server that cannot hand the whole recording to its device,
      i.e. the most any replay in the core could save is A - B.
   C. OpenCL only, raw: clEnqueueNDRangeKernel of the same work (bench_ocl.h's raw_fill_u32,
      arguments set once) on a queue of cubert's context: the floor of any replay short of
      device command buffers.
   D. OpenCL devices with cl_khr_command_buffer (PoCL has it; NVIDIA's OpenCL does not): the
      block recorded once into a command buffer, each launch after the previous one, then
      replayed with clEnqueueCommandBufferKHR: what a replay on the device itself gives.
   Blocks of the variants alternate (bench_interleave); each reports the median and min–max of
   its blocks, and the ratios of A to the others are the speed-ups a replay could reach.

   Usage: bench_replay [--device=SELECTOR] [--ops=N] [--blocks=N] [--quick]
     --device  the device (default "cpu"; "opencl:cpu" for PoCL)
     --ops     launches per block, one sync at the end of each (default 4000)
     --blocks  timed blocks per variant (default 21; --quick: 5) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ocl.h"
#include "bench_util.h"
#include "call_scope.h"
#include "client.h"
#include "cubert/cubert.h"
#include "cubert/kernels.h"
#include "handle.h"

enum { ELEMS = 64 };

typedef struct bench {
  cubert_client *client;
  cubert_handle *out;
  uint64_t info[2];
} bench;

/* A: plain client launches. */
static double block_plain(void *user, int ops) {
  bench *b = user;
  cubert_kernel_args args = {&b->out, 1, b->info, 2};
  const cubert_cube_count one = cubert_cube_count_new_3d(1, 1, 1);
  const cubert_cube_dim dim = cubert_cube_dim_new_3d(ELEMS, 1, 1);
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i)
    BENCH_CHECK(cubert_client_launch(b->client, &cubert_kernel_fill_u32, one, dim, &args));
  BENCH_CHECK(cubert_client_sync(b->client));
  return bench_seconds_since(t0);
}

/* B: the recorded launch handed to the server again and again, nothing checked or looked up. */
static double block_server(void *user, int ops) {
  bench *b = user;
  cubert_call call;
  cubert_handle_obj *h = cubert_handle_acquire(b->out);
  if (!h) return -1;
  cubert_binding binding = cubert_handle_binding(h);
  cubert_launch launch = {
      .kernel = &cubert_kernel_fill_u32,
      .cube_count = {1, 1, 1},
      .cube_dim = cubert_cube_dim_new_3d(ELEMS, 1, 1),
      .bindings = &binding,
      .binding_count = 1,
      .info = b->info,
      .info_count = 2,
      .mode = CUBERT_EXECUTION_CHECKED,
  };
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_call_enter(b->client, &call));
  cubert_server *server = call.server;
  for (int i = 0; i < ops; ++i)
    BENCH_CHECK(server->vtable->launch(server, call.slot->stream, &launch));
  BENCH_CHECK(server->vtable->sync(server, call.slot->stream));
  cubert_call_leave(&call, NULL);
  double t = bench_seconds_since(t0);
  cubert_handle_release(b->out);
  return t;
}

#if BENCH_HAVE_OPENCL
#include <CL/cl_ext.h>

typedef struct raw {
  cl_command_queue queue;
  cl_kernel kernel;
  cl_program program;
  cl_mem args[2];
} raw;

/* C: raw OpenCL. */
static double block_raw(void *user, int ops) {
  raw *r = user;
  const size_t global = ELEMS, local = ELEMS;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i)
    if (clEnqueueNDRangeKernel(r->queue, r->kernel, 1, NULL, &global, &local, 0, NULL, NULL) !=
        CL_SUCCESS)
      return -1;
  if (clFinish(r->queue) != CL_SUCCESS) return -1;
  return bench_seconds_since(t0);
}

/* D: the device's own replay, where it has cl_khr_command_buffer: the block's launches recorded
   once (outside the timing) into a command buffer, each after the previous one (sync points,
   as a stream orders them), then the buffer enqueued and finished. */
typedef struct command_buffer {
  raw *raw;
  cl_platform_id platform;
  int ops; /* launches recorded in `buffer` */
  cl_command_buffer_khr buffer;
  clCreateCommandBufferKHR_fn create;
  clCommandNDRangeKernelKHR_fn ndrange;
  clFinalizeCommandBufferKHR_fn finalize;
  clEnqueueCommandBufferKHR_fn enqueue;
  clReleaseCommandBufferKHR_fn release;
} command_buffer;

static int command_buffer_record(command_buffer *c, int ops) {
  if (c->buffer) c->release(c->buffer);
  cl_int err = CL_SUCCESS;
  c->buffer = c->create(1, &c->raw->queue, NULL, &err);
  if (err != CL_SUCCESS) return -1;
  const size_t global = ELEMS, local = ELEMS;
  cl_sync_point_khr last = 0;
  for (int i = 0; i < ops; ++i) {
    cl_sync_point_khr point = 0;
    err = c->ndrange(c->buffer, NULL, NULL, c->raw->kernel, 1, NULL, &global, &local, i ? 1 : 0,
                     i ? &last : NULL, &point, NULL);
    if (err != CL_SUCCESS) return -1;
    last = point;
  }
  if (c->finalize(c->buffer) != CL_SUCCESS) return -1;
  c->ops = ops;
  return 0;
}

static double block_command_buffer(void *user, int ops) {
  command_buffer *c = user;
  if (c->ops != ops && command_buffer_record(c, ops) != 0) return -1;
  uint64_t t0 = bench_now_ns();
  if (c->enqueue(1, &c->raw->queue, c->buffer, 0, NULL, NULL) != CL_SUCCESS) return -1;
  if (clFinish(c->raw->queue) != CL_SUCCESS) return -1;
  return bench_seconds_since(t0);
}

/* The extension's entry points, or 0 when the driver does not give them all. */
static int command_buffer_init(command_buffer *c, raw *r, cl_platform_id platform) {
  memset(c, 0, sizeof(*c));
  c->raw = r;
  c->platform = platform;
  /* dlsym's idiom: ISO C has no cast from an object pointer to a function pointer. */
#define BENCH_ENTRY(field, name)                                         \
  do {                                                                   \
    void *p_ = clGetExtensionFunctionAddressForPlatform(platform, name); \
    memcpy(&c->field, &p_, sizeof(p_));                                  \
  } while (0)
  BENCH_ENTRY(create, "clCreateCommandBufferKHR");
  BENCH_ENTRY(ndrange, "clCommandNDRangeKernelKHR");
  BENCH_ENTRY(finalize, "clFinalizeCommandBufferKHR");
  BENCH_ENTRY(enqueue, "clEnqueueCommandBufferKHR");
  BENCH_ENTRY(release, "clReleaseCommandBufferKHR");
#undef BENCH_ENTRY
  return c->create && c->ndrange && c->finalize && c->enqueue && c->release;
}

static int has_extension(const bench_ocl *ocl, const char *name) {
  char ext[16384] = "";
  clGetDeviceInfo(ocl->device, CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
  return strstr(ext, name) != NULL;
}
#endif

int main(int argc, char **argv) {
  const char *selector = "cpu";
  int ops = 4000, blocks = 21;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--device=", 9) == 0)
      selector = argv[i] + 9;
    else if (strncmp(argv[i], "--ops=", 6) == 0)
      ops = atoi(argv[i] + 6);
    else if (strncmp(argv[i], "--blocks=", 9) == 0)
      blocks = atoi(argv[i] + 9);
    else if (strcmp(argv[i], "--quick") == 0)
      blocks = 5;
    else {
      fprintf(stderr, "usage: %s [--device=SELECTOR] [--ops=N] [--blocks=N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (ops < 1 || blocks < 1) {
    fprintf(stderr, "--ops and --blocks must be at least 1\n");
    return 2;
  }
  bench b = {.info = {ELEMS, 5}};
  BENCH_CHECK(cubert_client_create(selector, &b.client));
  BENCH_CHECK(cubert_client_empty(b.client, ELEMS * sizeof(uint32_t), &b.out));
  const cubert_device_properties *p = cubert_client_properties(b.client);

  printf("## bench_replay: plain launches against the best a replay could do\n\n");
  bench_print_env(stdout);
  bench_print_device(stdout, p);
  bench_block_fn fns[4] = {block_plain, block_server, NULL, NULL};
  void *users[4] = {&b, &b, NULL, NULL};
  size_t variants = 2;
#if BENCH_HAVE_OPENCL
  raw r;
  bench_ocl ocl;
  command_buffer cb = {0};
  if (bench_ocl_of(b.client, &ocl)) {
    r.queue = bench_ocl_queue(&ocl, 0);
    r.kernel = bench_ocl_build_raw(&ocl, "raw_fill_u32", &r.program);
    r.args[0] = bench_ocl_buffer(&ocl, ELEMS * sizeof(uint32_t));
    r.args[1] = bench_ocl_info(&ocl, b.info, 2);
    bench_ocl_args(r.kernel, r.args, 2);
    fns[2] = block_raw;
    users[2] = &r;
    variants = 3;
    const int has_cb = has_extension(&ocl, "cl_khr_command_buffer");
    printf("- cl_khr_command_buffer: %s\n", has_cb ? "present" : "absent");
    if (has_cb && command_buffer_init(&cb, &r, ocl.platform)) {
      fns[3] = block_command_buffer;
      users[3] = &cb;
      variants = 4;
    }
  }
#endif
  printf(
      "- %d launches per block then one sync, %d blocks per variant after 2 warm-up blocks, "
      "alternating\n\n",
      ops, blocks);
  double *samples[4] = {NULL, NULL, NULL, NULL};
  for (size_t v = 0; v < variants; ++v) samples[v] = calloc((size_t)blocks, sizeof(double));
  if (bench_interleave(fns, users, variants, 2, blocks, ops, samples) != 0) {
    fprintf(stderr, "a block failed\n");
    return 1;
  }
  uint32_t check[ELEMS];
  BENCH_CHECK(cubert_client_read(b.client, b.out, check, sizeof check));
  for (int i = 0; i < ELEMS; ++i)
    if (check[i] != 5) {
      fprintf(stderr, "element %d is %u after the launches, expected 5\n", i, check[i]);
      return 1;
    }
  /* Each peer's row: its time per launch, and the ratio plain / peer paired block by block
     (blocks alternate, so a pair saw the same machine), median and min–max. */
  static const char *const peers[4] = {NULL, "B: server launch, pre-validated",
                                       "C: clEnqueueNDRangeKernel, args set once",
                                       "D: cl_khr_command_buffer, recorded once, chained"};
  static const char *const whats[4] = {NULL, "fill_u32 (64 units): plain vs the server's launch",
                                       "fill_u32 (64 units): plain vs raw OpenCL",
                                       "fill_u32 (64 units): plain vs a command buffer"};
  bench_stats plain = bench_stats_scaled(samples[0], (size_t)blocks, 1e6);
  double *ratios = calloc((size_t)blocks, sizeof(double));
  bench_compare_header(stdout);
  for (size_t v = 1; v < variants; ++v) {
    for (int k = 0; k < blocks; ++k) ratios[k] = samples[0][k] / samples[v][k];
    bench_stats peer = bench_stats_scaled(samples[v], (size_t)blocks, 1e6);
    bench_stats ratio = bench_stats_of(ratios, (size_t)blocks);
    bench_text cell =
        bench_textf("%.2f\u00d7 (%.2f\u2013%.2f)", ratio.median, ratio.min, ratio.max);
    bench_row(whats[v], "\u00b5s/launch", plain, peers[v], peer, cell.s,
              "replay \u2265 1.5\u00d7 faster", bench_verdict(ratio.median >= 1.5));
  }
  free(ratios);
  printf(
      "\nRatio: plain / peer per pair of blocks, median (min\u2013max). Result \"pass\" means a "
      "replay could reach the 1.5\u00d7 of issue 25 item 8 on this "
      "device; \"miss\" that even a free replay could not.\n");
  for (size_t v = 0; v < variants; ++v) free(samples[v]);
#if BENCH_HAVE_OPENCL
  if (cb.buffer) cb.release(cb.buffer);
  if (variants >= 3) {
    clReleaseMemObject(r.args[0]);
    clReleaseMemObject(r.args[1]);
    clReleaseKernel(r.kernel);
    clReleaseProgram(r.program);
    clReleaseCommandQueue(r.queue);
  }
#endif
  cubert_handle_release(b.out);
  cubert_client_release(b.client);
  return 0;
}
