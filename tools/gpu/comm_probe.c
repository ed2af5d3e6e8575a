/* comm_probe — raw OpenCL probe of the communicator engine's per-member pipeline on one GPU,
   for the question the two-H200 all_reduce left open (docs/benchmarks-history.md, "Collectives in
   one process"): the engine moves 256 MiB in 4 MiB chunks at ~6 GB/s where the raw staged copy
   moves ~42 GB/s. The probe runs the same pipeline without cubert: reads of the next four
   chunks into pinned slots (CL_MEM_ALLOC_HOST_PTR, mapped) on queue A, a host copy per chunk
   (the reduction's stand-in), a write of the chunk from a pinned slot on queue B (blocking, as
   the OpenCL server writes 1 MiB and more, or non-blocking + clFinish), and optionally a third
   queue of the same context blocked on a user event for the whole run, as the engine's gate
   blocks the caller's stream. If the gated runs are slow and the others fast, the driver's
   handling of user events is the cost.

   Not built by CMake (it needs a GPU): on the GPU machine, after `. .gpu/setup.sh`,
     cc -O2 -o comm_probe tools/gpu/comm_probe.c -lOpenCL
     ./comm_probe GATE BLOCKING CHUNK_MIB     e.g. ./comm_probe 1 1 4
   DIAG_ANY=1 lets it run on a device that is not a GPU (PoCL), to check the probe itself.
   PROBE_FOREIGN=1 allocates the pinned slots in a context of the second GPU: can a device DMA
   from memory another context pinned, at full speed?
   Two more measurements:
     ./comm_probe memcpy THREADS    host copy bandwidth of 256 MiB split over THREADS threads
     ./comm_probe peer              clEnqueueCopyBuffer of 256 MiB between the first two GPUs
                                    of one platform, in one context holding both */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 4

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CK(x)                                         \
  do {                                                \
    cl_int e_ = (x);                                  \
    if (e_ != CL_SUCCESS) {                           \
      fprintf(stderr, "%s: error %d\n", #x, (int)e_); \
      exit(1);                                        \
    }                                                 \
  } while (0)

/* ---- host copy bandwidth ---- */
typedef struct copy_part {
  char *dst;
  const char *src;
  size_t n;
} copy_part;

static void *copy_main(void *arg) {
  copy_part *p = arg;
  memcpy(p->dst, p->src, p->n);
  return NULL;
}

static int probe_memcpy(int threads) {
  const size_t total = (size_t)256 << 20;
  char *a = malloc(total), *b = malloc(total);
  if (!a || !b || threads < 1 || threads > 64) return 1;
  memset(a, 1, total);
  memset(b, 2, total);
  for (int rep = 0; rep < 5; ++rep) {
    pthread_t t[64];
    copy_part parts[64];
    double t0 = now();
    for (int i = 0; i < threads; ++i) {
      size_t lo = total / threads * i, hi = i + 1 == threads ? total : total / threads * (i + 1);
      parts[i] = (copy_part){b + lo, a + lo, hi - lo};
      pthread_create(&t[i], NULL, copy_main, &parts[i]);
    }
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    double el = now() - t0;
    printf("memcpy threads=%d: %.1f GB/s copied (%.1f GB/s of memory traffic)\n", threads,
           total / el * 1e-9, 2 * total / el * 1e-9);
  }
  return 0;
}

/* The first two GPUs of one platform, or 0. */
static int two_gpus(cl_device_id out[2]) {
  cl_platform_id platforms[8];
  cl_uint count = 0;
  if (clGetPlatformIDs(8, platforms, &count) != CL_SUCCESS) return 0;
  for (cl_uint i = 0; i < count; ++i) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 2, out, &n) == CL_SUCCESS && n >= 2)
      return 1;
  }
  return 0;
}

static int probe_peer(void) {
  cl_device_id d[2];
  if (!two_gpus(d)) {
    fprintf(stderr, "peer: no platform with two GPUs\n");
    return 1;
  }
  const size_t total = (size_t)256 << 20;
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(NULL, 2, d, NULL, NULL, &err);
  CK(err);
  cl_command_queue q0 = clCreateCommandQueue(ctx, d[0], 0, &err);
  CK(err);
  cl_command_queue q1 = clCreateCommandQueue(ctx, d[1], 0, &err);
  CK(err);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &err);
  CK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &err);
  CK(err);
  const char one = 1, two = 2;
  CK(clEnqueueFillBuffer(q0, a, &one, 1, 0, total, 0, NULL, NULL)); /* a lives on GPU 0 */
  CK(clFinish(q0));
  CK(clEnqueueFillBuffer(q1, b, &two, 1, 0, total, 0, NULL, NULL)); /* b on GPU 1 */
  CK(clFinish(q1));
  for (int rep = 0; rep < 5; ++rep) {
    cl_command_queue q = rep % 2 ? q0 : q1;
    double t0 = now();
    CK(clEnqueueCopyBuffer(q, rep % 2 ? b : a, rep % 2 ? a : b, 0, 0, total, 0, NULL, NULL));
    CK(clFinish(q));
    double el = now() - t0;
    printf("peer copy GPU%d -> GPU%d on GPU%d's queue (one context): %.1f GB/s\n", rep % 2 ? 1 : 0,
           rep % 2 ? 0 : 1, rep % 2 ? 0 : 1, total / el * 1e-9);
  }
  char check = 0;
  CK(clEnqueueReadBuffer(q1, b, CL_TRUE, total - 1, 1, &check, 0, NULL, NULL));
  printf("peer: last byte of b after the copies is %d (expected 1)\n", check);
  return 0;
}

static cl_device_id pick_device(void) {
  cl_platform_id platforms[8];
  cl_uint count = 0;
  CK(clGetPlatformIDs(8, platforms, &count));
  cl_device_type type = getenv("DIAG_ANY") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU;
  for (cl_uint i = 0; i < count; ++i) {
    cl_device_id d = NULL;
    if (clGetDeviceIDs(platforms[i], type, 1, &d, NULL) == CL_SUCCESS) return d;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "memcpy") == 0) return probe_memcpy(argc > 2 ? atoi(argv[2]) : 1);
  if (argc > 1 && strcmp(argv[1], "peer") == 0) return probe_peer();
  const int gate = argc > 1 && atoi(argv[1]) != 0;
  const int blocking = argc > 2 ? atoi(argv[2]) != 0 : 1;
  const size_t chunk = (size_t)(argc > 3 ? atoi(argv[3]) : 4) << 20;
  const size_t total = (size_t)256 << 20, chunks = total / chunk;
  cl_device_id device = pick_device();
  if (!device || chunk == 0) {
    fprintf(stderr, "no GPU (DIAG_ANY=1 takes any device), or a chunk of 0 MiB\n");
    return 1;
  }
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CK(err);
  cl_command_queue qa = clCreateCommandQueue(ctx, device, 0, &err);
  CK(err);
  cl_command_queue qb = clCreateCommandQueue(ctx, device, 0, &err);
  CK(err);
  cl_command_queue qc = clCreateCommandQueue(ctx, device, 0, &err);
  CK(err);
  cl_mem src = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &err);
  CK(err);
  cl_mem dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &err);
  CK(err);
  const char one = 1;
  CK(clEnqueueFillBuffer(qa, src, &one, 1, 0, total, 0, NULL, NULL));
  CK(clFinish(qa));
  char *in[SLOTS], *out[SLOTS];
  cl_context pin_ctx = ctx;
  cl_command_queue pin_q = qa;
  cl_device_id pair[2];
  if (getenv("PROBE_FOREIGN")) {
    if (!two_gpus(pair) || pair[1] == device) {
      fprintf(stderr, "PROBE_FOREIGN: no second GPU on the first GPU's platform\n");
      return 1;
    }
    pin_ctx = clCreateContext(NULL, 1, &pair[1], NULL, NULL, &err);
    CK(err);
    pin_q = clCreateCommandQueue(pin_ctx, pair[1], 0, &err);
    CK(err);
  }
  for (int i = 0; i < 2 * SLOTS; ++i) {
    cl_mem pinned = clCreateBuffer(pin_ctx, CL_MEM_ALLOC_HOST_PTR, chunk, NULL, &err);
    CK(err);
    char *host = clEnqueueMapBuffer(pin_q, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, chunk, 0,
                                    NULL, NULL, &err);
    CK(err);
    if (i < SLOTS)
      in[i] = host;
    else
      out[i - SLOTS] = host;
  }
  for (int rep = 0; rep < 4; ++rep) {
    cl_event user = NULL, behind = NULL;
    if (gate) {
      user = clCreateUserEvent(ctx, &err);
      CK(err);
      CK(clEnqueueMarkerWithWaitList(qc, 1, &user, &behind));
      CK(clFlush(qc));
    }
    double t0 = now(), t_reads = 0, t_copies = 0, t_writes = 0;
    cl_event reads[SLOTS] = {0};
    size_t issued = 0;
    for (size_t k = 0; k < chunks; ++k) {
      for (; issued < chunks && issued < k + SLOTS; ++issued) {
        CK(clEnqueueReadBuffer(qa, src, CL_FALSE, issued * chunk, chunk, in[issued % SLOTS], 0,
                               NULL, &reads[issued % SLOTS]));
        CK(clFlush(qa));
      }
      double t = now();
      CK(clWaitForEvents(1, &reads[k % SLOTS]));
      CK(clReleaseEvent(reads[k % SLOTS]));
      t_reads += now() - t;
      t = now();
      memcpy(out[k % SLOTS], in[k % SLOTS], chunk);
      t_copies += now() - t;
      t = now();
      CK(clEnqueueWriteBuffer(qb, dst, blocking ? CL_TRUE : CL_FALSE, k * chunk, chunk,
                              out[k % SLOTS], 0, NULL, NULL));
      if (!blocking) CK(clFinish(qb));
      t_writes += now() - t;
    }
    const double elapsed = now() - t0;
    if (gate) {
      CK(clSetUserEventStatus(user, CL_COMPLETE));
      CK(clWaitForEvents(1, &behind));
      CK(clReleaseEvent(behind));
      CK(clReleaseEvent(user));
    }
    printf(
        "gate=%d blocking=%d chunk=%zu MiB%s: %.2f GB/s (%.1f ms; waiting for reads %.1f ms, "
        "host copies %.1f ms, writes %.1f ms)\n",
        gate, blocking, chunk >> 20, getenv("PROBE_FOREIGN") ? " foreign pinned" : "",
        (double)total / elapsed * 1e-9, elapsed * 1e3, t_reads * 1e3, t_copies * 1e3,
        t_writes * 1e3);
  }
  return 0;
}
