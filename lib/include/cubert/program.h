/** @file
   cubert — programs: existing OpenCL C kernels launched unchanged (docs/porting.md).
   A program is OpenCL C source (a string or a file) and its build options; each of its
   `__kernel` functions becomes a cubert_kernel_def (cubert/kernel.h) that launches with
   arguments in the kernel's own order and of every OpenCL kind: buffers (handles and views),
   scalars of any type (integers of 8 to 64 bits, float, double, half, vector types, plain
   structs: bytes and a size, as clSetKernelArg takes them) and `__local` sizes.
   Such a launch is an ordinary cubert launch: it runs on the calling stream in order with
   cubert's own kernels, orders its buffers across streams, pins them while it runs (so pool
   memory is reused safely), is profiled and traced under the kernel's name (CUBERT_PROFILE,
   cubert/profile.h), is checked and compiled only in dry run, may be a candidate of a tune set
   (cubert/tune.h: candidates that launch it at different cube dims tune its local size), and
   is built once per device through the OpenCL server's program caches (memory and disk), shared
   by every kernel of the program and every client of the device.
   Servers:
   - OpenCL: the source is built for the device (cubert adds -cl-std=CL1.2 and
     -cl-kernel-arg-info, nothing else: none of the kernel language's mode macros, so one build
     serves the checked, unchecked and validate modes alike). Each launch is checked against the
   kernel's own arguments: their count (CL_KERNEL_NUM_ARGS) and, where the driver keeps the argument
   info, the kind of each (a
     `__global`/`__constant` pointer takes a buffer, a `__local` pointer a local size, anything
     else a scalar) and the size of each built-in scalar or vector type; errors name the
     argument by position and name. A buffer argument binds the handle's bytes: a view whose
     first byte is not at a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN
     (cubert_device_properties memory.alignment) is refused (UNSUPPORTED_IO_OPERATION naming the
     argument): pass the whole buffer and the offset as an integer argument instead.
     Images and samplers are not supported.
   - CPU: a kernel runs only where its definition gives a CPU function
     (cubert_program_kernel_options.cpu) that receives the same arguments (see "CPU functions"
     below); without one its launches fail with UNAVAILABLE naming the kernel and saying to use
     an "opencl" device (PoCL, `opencl:cpu`, runs OpenCL C on the CPU).
   Thread safety: programs and their kernel definitions are immutable once made; launch them
   from any thread. Release a program only after its last launch returned. */
#ifndef CUBERT_PROGRAM_H
#define CUBERT_PROGRAM_H

#include <stdint.h>
#include <string.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/geometry.h"
#include "cubert/handle.h"
#include "cubert/kernel.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A bit of cubert_kernel_def.flags (cubert/kernel.h) that cubert_program_kernel alone sets:
   the kernel takes its arguments in its own order, launched with cubert_client_launch_args. */
#define CUBERT_KERNEL_ARG_LIST (1u << 8)

/** OpenCL C source and its build options (opaque). */
typedef struct cubert_program cubert_program;

/** A program from OpenCL C `source` (copied) and `build_options` (copied; NULL: none), given to
   clBuildProgram after cubert's own options. Nothing is compiled here: each device builds the
   program at the first launch of one of its kernels (a build error is then COMPILATION with the
   build log). Errors: INVALID_ARGUMENT for a NULL or empty source or NULL out; OUT_OF_MEMORY. */
CUBERT_API cubert_status cubert_program_create(const char *source, const char *build_options,
                                               cubert_program **out);
/** cubert_program_create with the text of the file at `path` (read now). A `#include` in it
   is resolved by the OpenCL compiler: pass "-I <folder>" in build_options. Errors as
   cubert_program_create, and NOT_FOUND naming the path and the reason when the file cannot be
   read. */
CUBERT_API cubert_status cubert_program_create_from_file(const char *path,
                                                         const char *build_options,
                                                         cubert_program **out);
/** Frees the program and every kernel definition it made. Accepts NULL. Not while a launch of
   one of its kernels is in a call (queued launches are fine: they hold what they need). */
CUBERT_API void cubert_program_release(cubert_program *program);

/** How cubert_program_kernel makes a definition; valid when zeroed. */
typedef struct cubert_program_kernel_options {
  /** Name in errors, profiles and traces; NULL: the entry point's name. Copied. */
  const char *name;
  /** The same kernel for the CPU server, receiving the same arguments (cubert_cpu_arg_* below);
     NULL: the CPU server refuses the kernel. */
  cubert_cpu_kernel_fn cpu;
  /** CPU function only: CUBERT_KERNEL_SYNC_CUBE when it calls cubert_cpu_sync_cube (one call
     per unit, on fibers). On OpenCL: CUBERT_KERNEL_NEEDS_FP64 / _FP16 make a device without
     the extension refuse the kernel before building it. */
  uint32_t flags;
  /** CPU function only: the most bytes of `__local` arguments a launch passes (all of them,
     each rounded up to 16 bytes); they lie in the cube's shared memory. A launch passing more is
     refused with SHARED_MEMORY. 0: the CPU function takes no `__local` argument. */
  uint64_t cpu_local_bytes;
} cubert_program_kernel_options;

/** *out = the definition of the `__kernel` function `entry` of the program (`options` may be
   NULL). The definition belongs to the program and stays valid until it is released; asking
   twice for one entry with the same options gives two definitions of the same kernel object.
   Whether `entry` exists is known at its first launch on an OpenCL device (COMPILATION naming
   it). Errors: INVALID_ARGUMENT for a NULL program, entry or out, or an empty entry;
   OUT_OF_MEMORY. Not thread-safe against other calls on the same program. */
CUBERT_API cubert_status cubert_program_kernel(cubert_program *program, const char *entry,
                                               const cubert_program_kernel_options *options,
                                               const cubert_kernel_def **out);

/* ---- launch arguments ------------------------------------------------------------------ */

/** The kind of a launch argument. */
typedef enum cubert_arg_kind {
  CUBERT_ARG_BUFFER = 1, /**< a `__global` or `__constant` pointer: a handle's bytes */
  CUBERT_ARG_SCALAR = 2, /**< a value passed by copy: `size` bytes at `value` */
  CUBERT_ARG_LOCAL = 3,  /**< a `__local` pointer: `size` bytes of shared memory per cube */
} cubert_arg_kind;

/** One kernel argument, in the kernel's own order (clSetKernelArg's argument index). */
typedef struct cubert_arg {
  cubert_arg_kind kind;  /**< what the other fields mean */
  cubert_handle *handle; /**< BUFFER: the handle (a view binds only its bytes) */
  const void *value;     /**< SCALAR: the value's bytes, in the device's layout (cl_float4, ...) */
  uint64_t size;         /**< SCALAR: bytes at value; LOCAL: bytes per cube; BUFFER: unused */
} cubert_arg;

/** A buffer argument. */
static inline cubert_arg cubert_arg_buffer(cubert_handle *handle) {
  cubert_arg a = {CUBERT_ARG_BUFFER, handle, NULL, 0};
  return a;
}
/** A scalar argument of `size` bytes at `value` (copied by the launch). */
static inline cubert_arg cubert_arg_scalar(const void *value, uint64_t size) {
  cubert_arg a = {CUBERT_ARG_SCALAR, NULL, value, size};
  return a;
}
/** A `__local` argument of `size` bytes per cube. */
static inline cubert_arg cubert_arg_local(uint64_t size) {
  cubert_arg a = {CUBERT_ARG_LOCAL, NULL, NULL, size};
  return a;
}
/** A scalar argument holding the lvalue `v` (any type: int8_t, cl_float4, a struct, ...). */
#define CUBERT_ARG_VALUE(v) cubert_arg_scalar(&(v), sizeof(v))

/** The most arguments one launch takes. */
#define CUBERT_ARGS_MAX 256u

/** Launches `kernel` (a definition of cubert_program_kernel) over `count` cubes of `dim` units
   (OpenCL: global size count x dim, local size dim) with the `arg_count` entries of `args` on the
   calling stream, with the checks and ordering of cubert_client_launch (cubert/client.h) plus those
   of the arguments: INVALID_ARGUMENT naming the argument's position for a kind out of the enum, a
   NULL handle or value, a scalar or local size of 0 or over 4 GiB, more than CUBERT_ARGS_MAX
   arguments, and a kernel not made by cubert_program_kernel; NOT_FOUND for a released handle.
   The OpenCL server then checks them against the kernel (see the top of this file):
   INVALID_ARGUMENT naming position, name and what the kernel declares for a wrong count, kind
   or size, and the OpenCL error (CL_INVALID_ARG_SIZE, ...) naming the argument when the
   driver refuses a value. SHARED_MEMORY when the `__local` arguments and the kernel's own local
   memory exceed the device's (OpenCL) or cpu_local_bytes (CPU). The values are copied before
   the call returns. */
CUBERT_API cubert_status cubert_client_launch_args(cubert_client *client,
                                                   const cubert_kernel_def *kernel,
                                                   cubert_cube_count count, cubert_cube_dim dim,
                                                   const cubert_arg *args, uint32_t arg_count);

/* ---- CPU functions ----------------------------------------------------------------------
   A CPU function of a program kernel (cubert_program_kernel_options.cpu) is a plain
   cubert_cpu_kernel_fn (cubert/kernel.h: units, cubes, barriers as for any CPU kernel) whose
   arguments are read by their position in the launch's argument list:
     const float *in = cubert_cpu_arg_buffer(ctx, 0);   // buffer: the bytes of the handle
     int n; cubert_cpu_arg_get(ctx, 1, &n, sizeof n);   // scalar: its bytes, copied out
     float *tile = cubert_cpu_arg_local(ctx, 2);        // __local: the current cube's part
   The arguments travel in the launch's buffers and info words (ctx->buffers in argument order
   of the buffer arguments, ctx->info an encoding of the list that only these helpers read).
   A `__local` argument's bytes lie in the current cube's shared memory (ctx->shared, set for
   functions flagged CUBERT_KERNEL_SYNC_CUBE or PHASED), the arguments one after another, each
   starting at a multiple of 16 bytes. Positions and kinds are the caller's promise: the
   helpers return NULL (or 0) for a position out of range or of another kind. */

/** @cond internal */
/* The info words of a program kernel's launch: [0] CUBERT_ARG_LIST_MAGIC | count, then one
   word per argument: kind << 56 | index << 32 | size (index: the buffer's position among the
   buffer arguments, or the scalar's first word in ctx->info), then the scalars' bytes. */
#define CUBERT_ARG_LIST_MAGIC 0x4342415200000000ull
static inline uint64_t cubert_cpu_arg_word_(const cubert_cpu_ctx *ctx, uint32_t i) {
  if (!ctx->info_count || (ctx->info[0] & 0xffffffff00000000ull) != CUBERT_ARG_LIST_MAGIC ||
      i >= (uint32_t)ctx->info[0] || 1u + i >= ctx->info_count)
    return 0;
  return ctx->info[1 + i];
}
/** @endcond */

/** The number of arguments of the launch. */
static inline uint32_t cubert_cpu_arg_count(const cubert_cpu_ctx *ctx) {
  return ctx->info_count && (ctx->info[0] & 0xffffffff00000000ull) == CUBERT_ARG_LIST_MAGIC
             ? (uint32_t)ctx->info[0]
             : 0;
}
/** The kind of argument `i` (0 when out of range). */
static inline cubert_arg_kind cubert_cpu_arg_kind(const cubert_cpu_ctx *ctx, uint32_t i) {
  return (cubert_arg_kind)(cubert_cpu_arg_word_(ctx, i) >> 56);
}
/** The size of argument `i` in bytes: a buffer's bytes, a scalar's, a local argument's. */
static inline uint64_t cubert_cpu_arg_size(const cubert_cpu_ctx *ctx, uint32_t i) {
  uint64_t w = cubert_cpu_arg_word_(ctx, i);
  if (w >> 56 == CUBERT_ARG_BUFFER) return ctx->buffer_bytes[(w >> 32) & 0xffffff];
  return (uint32_t)w;
}
/** The first byte of buffer argument `i`, or NULL. */
static inline void *cubert_cpu_arg_buffer(const cubert_cpu_ctx *ctx, uint32_t i) {
  uint64_t w = cubert_cpu_arg_word_(ctx, i);
  return w >> 56 == CUBERT_ARG_BUFFER ? ctx->buffers[(w >> 32) & 0xffffff] : NULL;
}
/** The bytes of scalar argument `i` (8-byte aligned), or NULL. */
static inline const void *cubert_cpu_arg_value(const cubert_cpu_ctx *ctx, uint32_t i) {
  uint64_t w = cubert_cpu_arg_word_(ctx, i);
  return w >> 56 == CUBERT_ARG_SCALAR ? (const void *)(ctx->info + ((w >> 32) & 0xffffff)) : NULL;
}
/** Copies scalar argument `i` into `dst` when it has exactly `size` bytes; returns 1, else 0
   (dst untouched). */
static inline int cubert_cpu_arg_get(const cubert_cpu_ctx *ctx, uint32_t i, void *dst,
                                     uint64_t size) {
  const void *v = cubert_cpu_arg_value(ctx, i);
  if (!v || cubert_cpu_arg_size(ctx, i) != size) return 0;
  memcpy(dst, v, (size_t)size);
  return 1;
}
/** The current cube's bytes of `__local` argument `i`, or NULL (also without shared memory). */
static inline void *cubert_cpu_arg_local(const cubert_cpu_ctx *ctx, uint32_t i) {
  if (cubert_cpu_arg_kind(ctx, i) != CUBERT_ARG_LOCAL || !ctx->shared) return NULL;
  uint64_t offset = 0;
  for (uint32_t j = 0; j < i; ++j)
    if (cubert_cpu_arg_kind(ctx, j) == CUBERT_ARG_LOCAL)
      offset += (cubert_cpu_arg_size(ctx, j) + 15) & ~(uint64_t)15;
  return (char *)ctx->shared + offset;
}

CUBERT_EXTERN_C_END

#endif /* CUBERT_PROGRAM_H */
