/* bench_ocl.h — helpers shared by the benchmarks that compare cubert with raw OpenCL
   (bench/opencl_server.c, bench/streams.c).

   Header-only, static inline. What it gives:
   - BENCH_CL: a failed OpenCL call during setup is printed with its place and ends the
     program (benchmarks are programs; BENCH_CHECK in bench_util.h does the same for cubert);
   - bench_ocl_of(): the cl_context / cl_device_id behind a cubert client, through the
     OpenCL interop (backends/opencl/api.h), so that every raw peer runs on the very device
     and context cubert uses;
   - bench_ocl_build(): a raw program + kernel from a library kernel's own OpenCL C source,
     built with the options cubert uses for a checked launch;
   - bench_ocl_geometry: the global/local sizes cubert's OpenCL server enqueues for a launch
     (backends/opencl/launch.c), so the raw peer dispatches exactly the same work;
   - bench_print_device(): the device lines of a report's environment header.

   Everything OpenCL-specific compiles only when the library was built with OpenCL
   (CUBERT_WITH_OPENCL); BENCH_HAVE_OPENCL tells the program which. */
#ifndef CUBERT_BENCH_OCL_H
#define CUBERT_BENCH_OCL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cubert/cubert.h"

/* The properties lines of a report's environment header: device, backend, vendor, driver and
   platform versions, as cubert reports them. */
static inline void bench_print_device(FILE *out, const cubert_device_properties *p) {
  fprintf(out, "- device: \"%s\" (backend %s, vendor \"%s\")\n", p->name, p->backend, p->vendor);
  fprintf(out, "- driver version: %s; platform: %s\n",
          p->driver_version[0] ? p->driver_version : "n/a",
          p->platform_version[0] ? p->platform_version : "n/a");
  fprintf(out,
          "- compute units %u, max units per cube %u, timing method %s, memory alignment %llu B\n",
          p->hardware.num_compute_units, p->hardware.max_units_per_cube,
          p->timing_method == CUBERT_TIMING_DEVICE ? "device" : "system",
          (unsigned long long)p->memory.alignment);
}

#if defined(CUBERT_WITH_OPENCL) && CUBERT_WITH_OPENCL
#define BENCH_HAVE_OPENCL 1

#include <CL/cl.h>

#include "../backends/opencl/api.h"
#include "client.h" /* the server behind a client (bench links the static library) */

/* A failed OpenCL call during setup: print where and the error code, then end the program. */
#define BENCH_CL(expr)                                                                  \
  do {                                                                                  \
    cl_int cl_err_ = (expr);                                                            \
    if (cl_err_ != CL_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s failed: OpenCL error %d\n", __FILE__, __LINE__, #expr, \
              (int)cl_err_);                                                            \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* Build options of a checked launch: what backends/opencl/program.c passes
   (cubert_ocl_build_options for CUBERT_EXECUTION_CHECKED and a kernel without options of its
   own). The raw peers build the same source with the same options, so both run one binary. */
#define BENCH_OCL_CHECKED_OPTIONS "-cl-std=CL1.2 -DCUBERT_CHECKED=1"

typedef struct bench_ocl {
  cl_context context;
  cl_device_id device;
  cl_platform_id platform;
} bench_ocl;

static inline cubert_status bench_ocl_of_locked_(cubert_client *client, void *user) {
  bench_ocl *out = user;
  return cubert_ocl_server_context(cubert_client_device(client)->server, &out->context,
                                   &out->device);
}

/* The context and device of an OpenCL client (not retained: they live as long as the
   client). Returns 0 when the client is not on the OpenCL backend. The interop call runs
   inside cubert_client_exclusive, as api.h asks. */
static inline int bench_ocl_of(cubert_client *client, bench_ocl *out) {
  memset(out, 0, sizeof(*out));
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p || strcmp(p->backend, "opencl") != 0) return 0;
  BENCH_CHECK(cubert_client_exclusive(client, bench_ocl_of_locked_, out));
  BENCH_CL(clGetDeviceInfo(out->device, CL_DEVICE_PLATFORM, sizeof(out->platform), &out->platform,
                           NULL));
  return 1;
}

/* A raw in-order queue on the client's device; `properties` 0 or CL_QUEUE_PROFILING_ENABLE. */
static inline cl_command_queue bench_ocl_queue(const bench_ocl *ocl,
                                               cl_command_queue_properties properties) {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ocl->context, ocl->device, properties, &err);
  BENCH_CL(err);
  return q;
}

/* Builds `source` with `options` and returns the kernel `entry` (the program goes to
 *out_program so the caller can release it). Prints the build log on failure. */
static inline cl_kernel bench_ocl_build(const bench_ocl *ocl, const char *source,
                                        const char *options, const char *entry,
                                        cl_program *out_program) {
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(ocl->context, 1, &source, NULL, &err);
  BENCH_CL(err);
  err = clBuildProgram(program, 1, &ocl->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(program, ocl->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fprintf(stderr, "clBuildProgram of %s failed (%d):\n%s\n", entry, (int)err, log);
    exit(1);
  }
  cl_kernel kernel = clCreateKernel(program, entry, &err);
  BENCH_CL(err);
  *out_program = program;
  return kernel;
}

/* The raw peers: what a user would write by hand in plain OpenCL C (cube-major unit ids, the
   info words as the last argument), for launch-latency and bandwidth comparisons with the
   library's kernel-language kernels. raw_noop takes the two arguments every kernel-language
   kernel has (info words, validate record), so the latency peer launches the same signature. */
static const char bench_ocl_raw_source[] =
    "static ulong unit_id(void) {\n"
    "  const ulong gx = get_num_groups(0), gy = get_num_groups(1);\n"
    "  const ulong group = get_group_id(0) + get_group_id(1) * gx + get_group_id(2) * gx * gy;\n"
    "  const ulong sx = get_local_size(0), sy = get_local_size(1);\n"
    "  const ulong lid = get_local_id(0) + get_local_id(1) * sx + get_local_id(2) * sx * sy;\n"
    "  return group * (sx * sy * get_local_size(2)) + lid;\n"
    "}\n"
    "__kernel void raw_noop(__global const ulong *info, __global uint *record) {}\n"
    "__kernel void raw_add_f32(__global const float *a, __global const float *b,\n"
    "                          __global float *out, __global const ulong *info) {\n"
    "  const ulong id = unit_id();\n"
    "  if (id < info[0]) out[id] = a[id] + b[id];\n"
    "}\n"
    "__kernel void raw_fill_u32(__global uint *out, __global const ulong *info) {\n"
    "  const ulong id = unit_id();\n"
    "  if (id < info[0]) out[id] = (uint)info[1];\n"
    "}\n"
    "__kernel void raw_saxpy_f32(__global const float *x, __global float *y,\n"
    "                            __global const ulong *info) {\n"
    "  const ulong id = unit_id();\n"
    "  if (id < info[0]) y[id] = as_float((uint)info[1]) * x[id] + y[id];\n"
    "}\n";

/* Builds `entry` (raw_noop, raw_add_f32, raw_fill_u32, raw_saxpy_f32) of bench_ocl_raw_source. */
static inline cl_kernel bench_ocl_build_raw(const bench_ocl *ocl, const char *entry,
                                            cl_program *out_program) {
  return bench_ocl_build(ocl, bench_ocl_raw_source, BENCH_OCL_CHECKED_OPTIONS, entry, out_program);
}

/* A raw buffer of `bytes` (uninitialised). */
static inline cl_mem bench_ocl_buffer(const bench_ocl *ocl, size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ocl->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  BENCH_CL(err);
  return m;
}

/* An immutable buffer holding the info words, as cubert's server makes them
   (CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, backends/opencl/launch.c). */
static inline cl_mem bench_ocl_info(const bench_ocl *ocl, const uint64_t *words, size_t count) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ocl->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            count * sizeof(uint64_t), (void *)words, &err);
  BENCH_CL(err);
  return m;
}

/* Sets arguments 0..count-1 of `kernel` to the buffers `mems`. */
static inline void bench_ocl_args(cl_kernel kernel, const cl_mem *mems, cl_uint count) {
  for (cl_uint i = 0; i < count; ++i) BENCH_CL(clSetKernelArg(kernel, i, sizeof(cl_mem), &mems[i]));
}

/* The NDRange cubert's OpenCL server enqueues for (count, dim): global = count * dim per
   axis, local = dim, and the smallest work dimension that covers the launch
   (backends/opencl/launch.c). */
typedef struct bench_ocl_geometry {
  cl_uint work_dim;
  size_t global[3], local[3];
} bench_ocl_geometry;

static inline bench_ocl_geometry bench_ocl_geometry_of(cubert_cube_count count,
                                                       cubert_cube_dim dim) {
  bench_ocl_geometry g;
  const uint32_t c[3] = {count.x, count.y, count.z}, d[3] = {dim.x, dim.y, dim.z};
  for (int i = 0; i < 3; ++i) {
    g.global[i] = (size_t)c[i] * d[i];
    g.local[i] = d[i];
  }
  g.work_dim = g.global[2] > 1 || d[2] > 1 ? 3 : (g.global[1] > 1 || d[1] > 1 ? 2 : 1);
  return g;
}

/* Enqueues `kernel` over the geometry on `queue` (event optional). */
static inline cl_int bench_ocl_enqueue(cl_command_queue queue, cl_kernel kernel,
                                       const bench_ocl_geometry *g, cl_event *event) {
  return clEnqueueNDRangeKernel(queue, kernel, g->work_dim, NULL, g->global, g->local, 0, NULL,
                                event);
}

/* CL_DEVICE_HOST_UNIFIED_MEMORY (PoCL, integrated GPUs): 1 when the device shares the host's
   memory, so "pinned" and "pageable" host memory are the same thing there. */
static inline int bench_ocl_host_unified(const bench_ocl *ocl) {
  cl_bool unified = CL_FALSE;
  if (clGetDeviceInfo(ocl->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified,
                      NULL) != CL_SUCCESS)
    return 0;
  return unified == CL_TRUE;
}

/* Pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer mapped once (drivers back it with
   page-locked memory, which DMA engines read and write without a bounce copy). Unmap and
   release with bench_ocl_pinned_free. */
typedef struct bench_ocl_pinned {
  cl_mem mem;
  cl_command_queue queue;
  void *ptr;
  size_t bytes;
} bench_ocl_pinned;

static inline bench_ocl_pinned bench_ocl_pinned_alloc(const bench_ocl *ocl, size_t bytes) {
  bench_ocl_pinned p;
  cl_int err = CL_SUCCESS;
  p.bytes = bytes;
  p.queue = bench_ocl_queue(ocl, 0);
  p.mem =
      clCreateBuffer(ocl->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
  BENCH_CL(err);
  p.ptr = clEnqueueMapBuffer(p.queue, p.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                             NULL, &err);
  BENCH_CL(err);
  memset(p.ptr, 0, bytes); /* touch every page before anything is timed */
  return p;
}

static inline void bench_ocl_pinned_free(bench_ocl_pinned *p) {
  if (!p->mem) return;
  clEnqueueUnmapMemObject(p->queue, p->mem, p->ptr, 0, NULL, NULL);
  clFinish(p->queue);
  clReleaseMemObject(p->mem);
  clReleaseCommandQueue(p->queue);
  memset(p, 0, sizeof(*p));
}

#else
#define BENCH_HAVE_OPENCL 0
#endif

#endif /* CUBERT_BENCH_OCL_H */
