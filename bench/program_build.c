/* bench/program_build.c — what one clBuildProgram costs for a kernel-language file built whole
   against one kernel's program (backends/opencl/kernel_source.c), on the first OpenCL device.

   For each flattened library file (a library kernel's opencl_source), in one process after a
   warm-up build: the CPU time of building the whole text, then of building the program of each
   of its first N kernels alone (the text with the other entry points blanked). CPU time of the
   process, not wall time: PoCL compiles on the calling thread, and CPU time is what a loaded
   machine does not distort. Run with an empty POCL_CACHE_DIR, or PoCL serves its cache.

   Usage: POCL_CACHE_DIR=$(mktemp -d) bench_program_build [N]   (default 8) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_ocl.h"
#include "cubert/kernels.h"

#ifdef BENCH_HAVE_OPENCL
#include "../backends/opencl/kernel_source.h"

/* Kernels of the library's internal files (kernels/ops), linked from the static library. */
extern const cubert_kernel_def cubert_kernel_reduce_inner_sum_f32, cubert_kernel_binary_add_f32_c,
    cubert_kernel_copy_u32_nd;

static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds of building `text` (exits on a build error). */
static double build(cl_context context, cl_device_id device, const char *text) {
  const double t0 = cpu_s();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &err);
  BENCH_CL(err);
  BENCH_CL(clBuildProgram(program, 1, &device, "-DCUBERT_MODE=0", NULL, NULL));
  const double t = cpu_s() - t0;
  clReleaseProgram(program);
  return t;
}

/* The whole file of `kernel` and its first `n` kernels alone: one table row. */
static void row(cl_context context, cl_device_id device, const char *file,
                const cubert_kernel_def *kernel, int n) {
  const char *text = kernel->opencl_source;
  int total = 0;
  for (const char *p = strstr(text, "__kernel void "); p; p = strstr(p + 1, "__kernel void "))
    ++total;
  const double whole = build(context, device, text);
  double sum = 0;
  int built = 0;
  for (const char *p = strstr(text, "__kernel void "); p && built < n;
       p = strstr(p + 1, "__kernel void ")) {
    char name[256];
    const size_t len = strcspn(p + 14, "(");
    if (len >= sizeof name) continue;
    memcpy(name, p + 14, len);
    name[len] = '\0';
    char *only = cubert_ocl_kernel_only_source(text, name);
    if (!only) continue;
    sum += build(context, device, only);
    free(only);
    ++built;
  }
  printf("| `%s` | %zu KB | %d | %.3f | %.3f (%d built) |\n", file, strlen(text) / 1024, total,
         whole, built ? sum / built : 0.0, built);
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 8;
  cl_platform_id platform;
  cl_device_id device;
  BENCH_CL(clGetPlatformIDs(1, &platform, NULL));
  BENCH_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  BENCH_CL(err);
  char name[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
  printf("bench_program_build on \"%s\", %d kernels per file; %s\n\n", name, n, bench_load_avg().s);
  build(context, device, "__kernel void warm(__global int *o) { o[0] = 1; }");
  printf(
      "| Flattened file | text | kernels | whole text, CPU s | one kernel's program, CPU s "
      "(mean) |\n| --- | --- | --- | --- | --- |\n");
  row(context, device, "reduce_axis.cube.c", &cubert_kernel_reduce_inner_sum_f32, n);
  row(context, device, "matmul.cube.c", &cubert_kernel_matmul_simple_f32, n);
  row(context, device, "elementwise_ops.cube.c", &cubert_kernel_binary_add_f32_c, n);
  row(context, device, "copy_nd.cube.c", &cubert_kernel_copy_u32_nd, n);
  row(context, device, "elementwise.cube.c", &cubert_kernel_add_f32, n);
  clReleaseContext(context);
  return 0;
}
#else
int main(void) {
  printf("bench_program_build: built without OpenCL\n");
  return 0;
}
#endif
