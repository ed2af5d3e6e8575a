/* cubert — kernels. A kernel is a codelet: one definition with an implementation per backend
   (OpenCL C source, C function for the CPU server). See DESIGN §2 and §7. */
#ifndef CUBERT_KERNEL_H
#define CUBERT_KERNEL_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_handle cubert_handle;

/* What a CPU implementation is given. One call covers global unit ids
   [unit_begin, unit_end), numbered cube-major:
     id = cube_linear * units_per_cube + unit_linear,
     cube_linear = x + y*cx + z*cx*cy,  unit_linear = x + y*dx + z*dx*dy.
   A call may span many cubes (an elementwise kernel is one tight loop); with
   CUBERT_KERNEL_SYNC_CUBE each call covers exactly one unit and may call
   cubert_cpu_sync_cube(). */
typedef struct cubert_cpu_ctx {
  uint32_t cube_count[3], cube_dim[3];
  uint64_t unit_begin, unit_end;
  void *const *buffers; /* in binding order */
  const uint64_t *buffer_bytes;
  const uint64_t *info; /* scalar/metadata words */
  uint32_t buffer_count, info_count;
  void *shared; /* the current cube's shared memory (SYNC_CUBE kernels) */
  /* private fields follow; never touch */
  void *priv_;
} cubert_cpu_ctx;

typedef void (*cubert_cpu_kernel_fn)(const cubert_cpu_ctx *ctx);

/* Cube barrier: returns once every unit of the current cube has reached it.
   Only valid in kernels flagged CUBERT_KERNEL_SYNC_CUBE. */
CUBERT_API void cubert_cpu_sync_cube(const cubert_cpu_ctx *ctx);
/* Reports a failure from inside a CPU kernel. The launch's remaining work may still run; the
   error reaches the user at the next flush/sync/read on the stream (SERVER_UNHEALTHY). */
CUBERT_API void cubert_cpu_fail(const cubert_cpu_ctx *ctx, const char *reason);

/* Kernel flags. */
enum {
  CUBERT_KERNEL_SYNC_CUBE = 1u << 0,  /* uses cube barriers and/or shared memory */
  CUBERT_KERNEL_NEEDS_FP64 = 1u << 1, /* the OpenCL source needs cl_khr_fp64 */
  CUBERT_KERNEL_NEEDS_FP16 = 1u << 2,
};

typedef struct cubert_kernel_def {
  const char *name;
  const char *opencl_source; /* OpenCL C, or NULL */
  const char *opencl_entry;
  const char *opencl_options; /* build options, or NULL */
  cubert_cpu_kernel_fn cpu;   /* or NULL */
  uint32_t flags;             /* CUBERT_KERNEL_* */
  uint64_t shared_bytes;      /* per-cube shared memory of the CPU implementation */
} cubert_kernel_def;

typedef struct cubert_kernel_args {
  cubert_handle *const *buffers; /* OpenCL: arguments 0..buffer_count-1 */
  uint32_t buffer_count;
  const uint64_t *info; /* OpenCL: one more argument, `__global const ulong *info`, */
  uint32_t info_count;  /* present only when info_count > 0 */
} cubert_kernel_args;

typedef enum cubert_execution_mode {
  CUBERT_EXECUTION_CHECKED = 0,   /* validate the launch; kernels bound-check */
  CUBERT_EXECUTION_VALIDATE = 1,  /* checked, and kernels may report out-of-bounds accesses */
  CUBERT_EXECUTION_UNCHECKED = 2, /* no bound checks in kernels (device limits still enforced) */
} cubert_execution_mode;

/* ---- helpers for CPU implementations ------------------------------------------------- */

static inline uint64_t cubert_cpu_units_per_cube(const cubert_cpu_ctx *ctx) {
  return (uint64_t)ctx->cube_dim[0] * ctx->cube_dim[1] * ctx->cube_dim[2];
}
/* Cube position (x, y, z) of a global unit id. */
static inline void cubert_cpu_cube_pos(const cubert_cpu_ctx *ctx, uint64_t id, uint32_t out[3]) {
  uint64_t cube = id / cubert_cpu_units_per_cube(ctx);
  out[0] = (uint32_t)(cube % ctx->cube_count[0]);
  cube /= ctx->cube_count[0];
  out[1] = (uint32_t)(cube % ctx->cube_count[1]);
  out[2] = (uint32_t)(cube / ctx->cube_count[1]);
}
/* Unit position (x, y, z) inside its cube. */
static inline void cubert_cpu_unit_pos(const cubert_cpu_ctx *ctx, uint64_t id, uint32_t out[3]) {
  uint64_t unit = id % cubert_cpu_units_per_cube(ctx);
  out[0] = (uint32_t)(unit % ctx->cube_dim[0]);
  unit /= ctx->cube_dim[0];
  out[1] = (uint32_t)(unit % ctx->cube_dim[1]);
  out[2] = (uint32_t)(unit / ctx->cube_dim[1]);
}
/* Linear unit index inside the cube (OpenCL get_local_linear_id). */
static inline uint32_t cubert_cpu_unit_linear(const cubert_cpu_ctx *ctx, uint64_t id) {
  return (uint32_t)(id % cubert_cpu_units_per_cube(ctx));
}
/* Linear cube index (OpenCL group linear id). */
static inline uint64_t cubert_cpu_cube_linear(const cubert_cpu_ctx *ctx, uint64_t id) {
  return id / cubert_cpu_units_per_cube(ctx);
}

/* Writes a CPU kernel as a per-unit body; the loop over the call's range is one counted loop
   the compiler can vectorise. `id` is the global unit id (for 1-D launches with cube dim
   (d,1,1) and cube count (c,1,1) it equals the OpenCL global id).
     CUBERT_CPU_KERNEL(add_f32, ctx, id) {
       const float *a = ctx->buffers[0]; ...
       if (id < n) out[id] = a[id] + b[id];
     }                                                                                      */
#define CUBERT_CPU_KERNEL(fn_name, ctx_name, id_name)                                        \
  static inline void fn_name##_unit_(const cubert_cpu_ctx *ctx_name, uint64_t id_name);      \
  static void fn_name(const cubert_cpu_ctx *ctx_name) {                                      \
    const uint64_t end_ = ctx_name->unit_end;                                                \
    for (uint64_t i_ = ctx_name->unit_begin; i_ < end_; ++i_) fn_name##_unit_(ctx_name, i_); \
  }                                                                                          \
  static inline void fn_name##_unit_(const cubert_cpu_ctx *ctx_name, uint64_t id_name)

CUBERT_EXTERN_C_END

#endif /* CUBERT_KERNEL_H */
