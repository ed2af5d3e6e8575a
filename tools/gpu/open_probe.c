/* Where the time of opening a GPU goes (issue 24 item 3): run as a fresh process, once per mode.
     open_probe raw     the OpenCL calls any program makes, each timed: clGetPlatformIDs (the
                        ICD loader and every vendor driver's initialisation), clGetDeviceIDs,
                        clCreateContext, clCreateCommandQueue, a first 4-byte buffer written
                        and finished (the context's first use).
     open_probe cubert  cubert_client_create("opencl:gpu") in a fresh process, then the same
                        raw sequence again in the same process (the driver is initialised now:
                        what the raw steps cost when cubert has paid the driver's start).
   Prints one line "mode step ms" per step. Build: cc -O2 open_probe.c -lcubert -lOpenCL. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cubert/cubert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define STEP(mode, name, expr)                                 \
  do {                                                         \
    double t0_ = now_ms();                                     \
    cl_int e_ = (expr);                                        \
    printf("%s %-22s %8.2f ms\n", mode, name, now_ms() - t0_); \
    if (e_ != CL_SUCCESS) {                                    \
      printf("%s %s failed: %d\n", mode, name, (int)e_);       \
      return 1;                                                \
    }                                                          \
  } while (0)

static int raw_open(const char *mode) {
  cl_platform_id platforms[8];
  cl_uint np = 0;
  STEP(mode, "clGetPlatformIDs", clGetPlatformIDs(8, platforms, &np));
  cl_device_id device = NULL;
  cl_int err = CL_DEVICE_NOT_FOUND;
  double t0 = now_ms();
  for (cl_uint i = 0; i < np && err != CL_SUCCESS; ++i)
    err = clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &device, NULL);
  printf("%s %-22s %8.2f ms\n", mode, "clGetDeviceIDs(GPU)", now_ms() - t0);
  if (err != CL_SUCCESS) return 1;
  cl_context ctx = NULL;
  STEP(mode, "clCreateContext", (ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err), err));
  cl_command_queue q = NULL;
  STEP(mode, "clCreateCommandQueue", (q = clCreateCommandQueue(ctx, device, 0, &err), err));
  cl_mem m = NULL;
  const int one = 1;
  STEP(mode, "first buffer + write",
       (m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err),
        err ? err : clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 4, &one, 0, NULL, NULL)));
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "raw";
  double t0 = now_ms();
  if (strcmp(mode, "cubert") == 0) {
    cubert_client *client = NULL;
    cubert_status s = cubert_client_create("opencl:gpu", &client);
    printf("cubert %-22s %8.2f ms\n", "cubert_client_create", now_ms() - t0);
    if (s) {
      printf("cubert_client_create failed: %s\n", cubert_status_message(s));
      return 1;
    }
    int rc = raw_open("cubert+raw");
    cubert_client_release(client);
    return rc;
  }
  int rc = raw_open(mode);
  printf("%s %-22s %8.2f ms\n", mode, "total", now_ms() - t0);
  return rc;
}
