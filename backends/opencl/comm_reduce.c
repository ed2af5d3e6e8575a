/* cubert — the communicators' device-side combination (server.h, comm_reduce): one kernel per
   element type reduces a member's own piece with the other members' pieces, which the engine
   staged into a scratch buffer, in rank order. With it, a collective over several GPUs moves
   its bytes through host memory by DMA only (lib/comm/README.md, "Device combination").

   Called by a communicator's member thread WITHOUT the device lock (server.h): the program is
   built at the first call of each server under this file's own lock, and a kernel's arguments
   are set and it is enqueued under that lock too (clSetKernelArg on one cl_kernel is not
   thread-safe). The lock is never held while anything waits for a stream. */
#include "opencl/comm_reduce.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/errors.h"
#include "opencl/queue.h"
#include "opencl/server.h"

/* Semantics of the host reduction (lib/comm/reduce.c): left to right over the ranks, integer
   sums wrap, max/min propagate NaN, mean (op 3) is the sum divided once by n: f32 in double
   where the device has fp64 (the correctly rounded quotient, as the host computes it), i32
   truncating toward zero. No -cl-fast-relaxed-math: results match the host's bit for bit
   (a device without fp64 divides in float: within OpenCL's 2.5 ulp of the host's f32 mean). */
static const char kSource[] =
    "#ifdef CUBERT_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#define MEAN_F32(s, n) ((float)((double)(s) / (double)(n)))\n"
    "#else\n"
    "#define MEAN_F32(s, n) ((s) / (float)(n))\n"
    "#endif\n"
    "#define NAN_MAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))\n"
    "#define NAN_MIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))\n"
    "#define FLOAT_OP(a, b) (op == 0 || op == 3 ? (a) + (b) : op == 1 ? NAN_MAX(a, b) : "
    "NAN_MIN(a, b))\n"
    "#define INT_OP(a, b) (op == 0 || op == 3 ? as_int(as_uint(a) + as_uint(b)) : op == 1 ? "
    "max(a, b) : min(a, b))\n"
    "#define REDUCE(NAME, T, OP, MEAN)                                                      \\\n"
    "  kernel void NAME(global T *dst, ulong dst_at, global const T *own, ulong own_at,    \\\n"
    "                   global const T *others, ulong others_at, uint n, uint own_rank,    \\\n"
    "                   ulong count, uint op) {                                             \\\n"
    "    ulong i = get_global_id(0);                                                        \\\n"
    "    if (i >= count) return;                                                            \\\n"
    "    T acc = own_rank == 0 ? own[own_at + i] : others[others_at + i];                   \\\n"
    "    for (uint r = 1; r < n; ++r) {                                                     \\\n"
    "      T v = r == own_rank ? own[own_at + i]                                            \\\n"
    "                          : others[others_at + (ulong)(r < own_rank ? r : r - 1) * count + "
    "i]; \\\n"
    "      acc = OP(acc, v);                                                                \\\n"
    "    }                                                                                  \\\n"
    "    if (op == 3) acc = MEAN(acc, n);                                                   \\\n"
    "    dst[dst_at + i] = acc;                                                             \\\n"
    "  }\n"
    "#define MEAN_I32(s, n) ((s) / (int)(n))\n"
    "#define MEAN_F64(s, n) ((s) / (double)(n))\n"
    "REDUCE(cubert_comm_reduce_f32, float, FLOAT_OP, MEAN_F32)\n"
    "REDUCE(cubert_comm_reduce_i32, int, INT_OP, MEAN_I32)\n"
    "#ifdef CUBERT_FP64\n"
    "REDUCE(cubert_comm_reduce_f64, double, FLOAT_OP, MEAN_F64)\n"
    "#endif\n";

enum { KERNEL_F32, KERNEL_I32, KERNEL_F64, KERNELS };
static const char *const kNames[KERNELS] = {"cubert_comm_reduce_f32", "cubert_comm_reduce_i32",
                                            "cubert_comm_reduce_f64"};
/* Units per work-group. */
#define LOCAL_SIZE 256

struct cubert_ocl_comm_reduce {
  cl_program program;
  cl_kernel kernels[KERNELS]; /* f64: NULL without fp64 */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* g_lock held. */
static cubert_status build(cubert_ocl_server *server) {
  if (server->comm_reduce) return NULL;
  int fp64 = (server->base.properties.features & CUBERT_FEATURE_FP64) != 0;
  struct cubert_ocl_comm_reduce *r = calloc(1, sizeof *r);
  if (!r) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  const char *src = kSource;
  cl_int err = CL_SUCCESS;
  r->program = clCreateProgramWithSource(server->context, 1, &src, NULL, &err);
  if (err == CL_SUCCESS)
    err = clBuildProgram(r->program, 1, &server->device, fp64 ? "-DCUBERT_FP64=1" : "", NULL, NULL);
  for (int k = 0; err == CL_SUCCESS && k < KERNELS; ++k)
    if (k != KERNEL_F64 || fp64) r->kernels[k] = clCreateKernel(r->program, kNames[k], &err);
  if (err != CL_SUCCESS) {
    server->comm_reduce = r;
    cubert_ocl_comm_reduce_release(server);
    return cubert_ocl_status(err, CUBERT_CODE_COMPILATION,
                             "building the collectives' reduction kernels on OpenCL device '%s'",
                             server->base.properties.name);
  }
  server->comm_reduce = r;
  return NULL;
}

static int kernel_index(cubert_dtype dtype) {
  switch (dtype) {
    case CUBERT_DTYPE_F32:
      return KERNEL_F32;
    case CUBERT_DTYPE_I32:
      return KERNEL_I32;
    case CUBERT_DTYPE_F64:
      return KERNEL_F64;
    default:
      return -1;
  }
}

cubert_status cubert_ocl_comm_reduce(cubert_server *base, cubert_server_stream *stream,
                                     const cubert_binding *dst, const cubert_binding *own,
                                     const cubert_binding *others, size_t n, size_t own_rank,
                                     size_t count, cubert_dtype dtype, cubert_reduce_op op) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  int k = kernel_index(dtype);
  size_t es = dtype == CUBERT_DTYPE_F64 ? 8 : 4;
  if (k < 0 || (unsigned)op > CUBERT_REDUCE_MEAN || n < 1 || own_rank >= n || dst->offset % es ||
      own->offset % es || (n > 1 && others->offset % es))
    return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                              "comm_reduce on OpenCL device '%s': dtype, op or alignment not "
                              "supported",
                              base->properties.name);
  pthread_mutex_lock(&g_lock);
  cubert_status s = build(server);
  cl_kernel kernel = s ? NULL : server->comm_reduce->kernels[k];
  if (!s && !kernel)
    s = cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                           "comm_reduce on OpenCL device '%s': no fp64", base->properties.name);
  if (!s && count == 0) { /* nothing to reduce: the kernels are built (the engine's check) */
    pthread_mutex_unlock(&g_lock);
    return NULL;
  }
  cl_event event = NULL;
  if (!s) {
    const cubert_binding *other = n > 1 ? others : own; /* n == 1: never read */
    cl_mem mems[3] = {(cl_mem)dst->slice->page->native, (cl_mem)own->slice->page->native,
                      (cl_mem)other->slice->page->native};
    cl_ulong at[3] = {dst->offset / es, own->offset / es, other->offset / es};
    cl_uint un = (cl_uint)n, rank = (cl_uint)own_rank, uop = (cl_uint)op;
    cl_ulong ucount = count;
    cl_int err = CL_SUCCESS;
    for (cl_uint a = 0; a < 3 && err == CL_SUCCESS; ++a) {
      err = clSetKernelArg(kernel, 2 * a, sizeof(cl_mem), &mems[a]);
      if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 2 * a + 1, sizeof(cl_ulong), &at[a]);
    }
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 6, sizeof un, &un);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 7, sizeof rank, &rank);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 8, sizeof ucount, &ucount);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 9, sizeof uop, &uop);
    size_t local = LOCAL_SIZE, global = (count + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE;
    if (err == CL_SUCCESS)
      err =
          clEnqueueNDRangeKernel(stream->queue, kernel, 1, NULL, &global, &local, 0, NULL, &event);
    if (err != CL_SUCCESS) {
      cubert_ocl_poll(stream);
      s = cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                            "the collectives' reduction kernel on OpenCL device '%s'",
                            base->properties.name);
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (s) return s;
  clFlush(stream->queue);
  cubert_binding used[3] = {*dst, *own, n > 1 ? *others : *own};
  return cubert_ocl_track(stream, event, "comm_reduce", used, 3, NULL, 0, 1);
}

void cubert_ocl_comm_reduce_release(cubert_ocl_server *server) {
  struct cubert_ocl_comm_reduce *r = server->comm_reduce;
  if (!r) return;
  for (int k = 0; k < KERNELS; ++k)
    if (r->kernels[k]) clReleaseKernel(r->kernels[k]);
  if (r->program) clReleaseProgram(r->program);
  free(r);
  server->comm_reduce = NULL;
}
