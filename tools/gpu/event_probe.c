/* What each extra OpenCL call of a cross-stream wait costs on a GPU driver (issue 24 item 3):
   raw rounds of bench_streams section 1's pattern, each variant adding one call that cubert's
   wait makes and the raw peer does not, interleaved block by block in one process.
     base      fill on q1, marker (event) on q1 + clFlush, barrier without event on q2, add on
               q2, clFinish(q2), release the marker (bench_streams' raw peer)
     one       fill + add + clFinish on one queue (the one-stream baseline)
     bar_ev    base with the barrier's own event (released after the finish)
     query     base + clGetEventInfo(status) of the completed marker after the finish
     query_new base + clGetEventInfo(status) of the marker just after its flush
     retain    base + clRetainEvent / clReleaseEvent of the marker
     flush2    base + a clFlush of q2 after the barrier
   Prints per variant the median (min-max) of the blocks' mean round time, and the difference to
   base. Build: cc -O2 event_probe.c -lOpenCL -lm. Run: event_probe [blocks] [rounds per block]. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *kSource =
    "__kernel void fill(__global uint *x, uint v) { x[get_global_id(0)] = v; }\n"
    "__kernel void add(__global const float *x, __global const float *b, __global float *z) {\n"
    "  size_t i = get_global_id(0); z[i] = x[i] + b[i]; }\n";

enum { BASE, ONE, BAR_EV, QUERY, QUERY_NEW, RETAIN, FLUSH2, VARIANTS };
static const char *kNames[VARIANTS] = {"base",      "one",    "bar_ev", "query",
                                       "query_new", "retain", "flush2"};

typedef struct probe {
  cl_command_queue q1, q2;
  cl_kernel fill, add;
  size_t n;
} probe;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void round_of(const probe *p, int v) {
  const size_t n = p->n;
  if (v == ONE) {
    clEnqueueNDRangeKernel(p->q2, p->fill, 1, NULL, &n, NULL, 0, NULL, NULL);
    clEnqueueNDRangeKernel(p->q2, p->add, 1, NULL, &n, NULL, 0, NULL, NULL);
    clFinish(p->q2);
    return;
  }
  cl_event marker = NULL, barrier = NULL;
  cl_int status = 0;
  clEnqueueNDRangeKernel(p->q1, p->fill, 1, NULL, &n, NULL, 0, NULL, NULL);
  clEnqueueMarkerWithWaitList(p->q1, 0, NULL, &marker);
  clFlush(p->q1);
  if (v == QUERY_NEW)
    clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
  if (v == RETAIN) clRetainEvent(marker);
  clEnqueueBarrierWithWaitList(p->q2, 1, &marker, v == BAR_EV ? &barrier : NULL);
  if (v == FLUSH2) clFlush(p->q2);
  clEnqueueNDRangeKernel(p->q2, p->add, 1, NULL, &n, NULL, 0, NULL, NULL);
  clFinish(p->q2);
  if (v == QUERY)
    clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
  if (v == RETAIN) clReleaseEvent(marker);
  if (barrier) clReleaseEvent(barrier);
  clReleaseEvent(marker);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 50;
  cl_platform_id platforms[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, platforms, &np);
  cl_device_id device = NULL;
  cl_int err = CL_DEVICE_NOT_FOUND;
  for (cl_uint i = 0; i < np && err != CL_SUCCESS; ++i)
    err = clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &device, NULL);
  if (err != CL_SUCCESS) {
    printf("no GPU\n");
    return 1;
  }
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  probe p = {.n = 1024};
  p.q1 = clCreateCommandQueue(ctx, device, 0, &err);
  p.q2 = clCreateCommandQueue(ctx, device, 0, &err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  if (clBuildProgram(prog, 1, &device, "", NULL, NULL) != CL_SUCCESS) {
    printf("build failed\n");
    return 1;
  }
  p.fill = clCreateKernel(prog, "fill", &err);
  p.add = clCreateKernel(prog, "add", &err);
  cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, p.n * 4, NULL, &err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, p.n * 4, NULL, &err);
  cl_mem z = clCreateBuffer(ctx, CL_MEM_READ_WRITE, p.n * 4, NULL, &err);
  cl_uint v = 0x3f800000u;
  clSetKernelArg(p.fill, 0, sizeof(x), &x);
  clSetKernelArg(p.fill, 1, sizeof(v), &v);
  clSetKernelArg(p.add, 0, sizeof(x), &x);
  clSetKernelArg(p.add, 1, sizeof(b), &b);
  clSetKernelArg(p.add, 2, sizeof(z), &z);
  for (int w = 0; w < 200; ++w) round_of(&p, w % VARIANTS);
  double *t = malloc(sizeof(double) * VARIANTS * blocks);
  for (int k = 0; k < blocks; ++k)
    for (int i = 0; i < VARIANTS; ++i) {
      int var = (i + k) % VARIANTS; /* rotate the order per block */
      double t0 = now_us();
      for (int r = 0; r < rounds; ++r) round_of(&p, var);
      t[var * blocks + k] = (now_us() - t0) / rounds;
    }
  double *d = malloc(sizeof(double) * blocks), *s = malloc(sizeof(double) * blocks);
  for (int i = 0; i < VARIANTS; ++i) {
    for (int k = 0; k < blocks; ++k) { /* paired with base, block by block */
      s[k] = t[i * blocks + k];
      d[k] = s[k] - t[BASE * blocks + k];
    }
    qsort(d, blocks, sizeof(double), cmp);
    qsort(s, blocks, sizeof(double), cmp);
    printf("%-10s %7.2f us (%.2f-%.2f)  paired - base %+6.2f us\n", kNames[i], s[blocks / 2], s[0],
           s[blocks - 1], d[blocks / 2]);
  }
  free(d);
  free(s);
  free(t);
  return 0;
}
