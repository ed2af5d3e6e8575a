/** @file
   cubert — kernels. A kernel is a codelet: one definition with an implementation per backend
   (OpenCL C source, C function for the CPU server). This is the low-level layer: kernels are
   normally written once in the kernel language (cubert/cube.h, docs/kernels.md), which produces
   these definitions; a hand-written codelet fills the fields itself. */
#ifndef CUBERT_KERNEL_H
#define CUBERT_KERNEL_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_handle cubert_handle; /**< Device memory (handle.h). */

/** What a CPU implementation is given. One call covers global unit ids
   [unit_begin, unit_end), numbered cube-major:
     id = cube_linear * units_per_cube + unit_linear,
     cube_linear = x + y*cx + z*cx*cy,  unit_linear = x + y*dx + z*dx*dy.
   A call may span many cubes (an elementwise kernel is one tight loop); with
   CUBERT_KERNEL_SYNC_CUBE each call covers exactly one unit and may call
   cubert_cpu_sync_cube(). */
typedef struct cubert_cpu_ctx {
  uint32_t cube_count[3];       /**< the launch's cubes per axis */
  uint32_t cube_dim[3];         /**< units per cube per axis */
  uint64_t unit_begin;          /**< first global unit id of the call */
  uint64_t unit_end;            /**< one past the last global unit id of the call */
  void *const *buffers;         /**< in binding order */
  const uint64_t *buffer_bytes; /**< size of each buffer, bytes */
  const uint64_t *info;         /**< scalar/metadata words */
  uint32_t buffer_count;        /**< entries of buffers and buffer_bytes */
  uint32_t info_count;          /**< words in info */
  void *shared;                 /**< the current cube's shared memory (SYNC_CUBE kernels) */
  /* private fields follow; never touch */
  void *priv_;
  uint32_t mode; /**< the launch's cubert_execution_mode (read by kernel-language code) */
  /** The launch's dynamic shared array (a kernel-language `(dynamic_shared, T, name)` entry):
     its bytes, at `shared + dynamic_shared_offset` (the static part rounded up to 64 bytes). */
  uint64_t dynamic_shared_offset;
  uint64_t dynamic_shared_bytes; /**< cubert_launch_options.dynamic_shared_bytes (client.h) */
} cubert_cpu_ctx;

/** A CPU implementation: runs the units [ctx->unit_begin, ctx->unit_end). */
typedef void (*cubert_cpu_kernel_fn)(const cubert_cpu_ctx *ctx);

/** Cube barrier: returns once every unit of the current cube has reached it.
   Only valid in kernels flagged CUBERT_KERNEL_SYNC_CUBE. */
CUBERT_API void cubert_cpu_sync_cube(const cubert_cpu_ctx *ctx);
/** Reports a failure from inside a CPU kernel. The launch's remaining work may still run; the
   error reaches the user at the next flush/sync/read on the stream (SERVER_UNHEALTHY). */
CUBERT_API void cubert_cpu_fail(const cubert_cpu_ctx *ctx, const char *reason);

/* ---- services for kernel-language code (cubert/cube.h calls these; rarely called by hand) ---- */

/** `buffer` value of cubert_cpu_report_access for an info word read past the launch's words. */
#define CUBERT_CPU_ACCESS_INFO 0xffffffffu
/** Validate mode: reports an access of element `index` of buffer `buffer` (or info word `index`
   with CUBERT_CPU_ACCESS_INFO) with only `length` elements, by global unit `unit_id`
   (UINT64_MAX: not tied to a unit). The first report of a launch becomes its error (GENERIC,
   at the next flush/sync/read, naming kernel, buffer, unit and cube position, index and
   length); later ones are dropped. Thread-safe. */
CUBERT_API void cubert_cpu_report_access(const cubert_cpu_ctx *ctx, uint32_t buffer,
                                         uint64_t unit_id, uint64_t index, uint64_t length);
/** Validate mode: reports info word `word` holding `value`, above the kernel's `limit`
   (cube.h's INFO_AT_MOST), by global unit `unit_id` (UINT64_MAX: not tied to a unit), like
   cubert_cpu_report_access. */
CUBERT_API void cubert_cpu_report_info_limit(const cubert_cpu_ctx *ctx, uint64_t unit_id,
                                             uint32_t word, uint64_t value, uint64_t limit);
/** Reports a misplaced barrier (`what`) at source line `line`, like cubert_cpu_report_access. */
CUBERT_API void cubert_cpu_report_barrier(const cubert_cpu_ctx *ctx, uint32_t line,
                                          const char *what);
/** cubert_cpu_sync_cube for the barrier at source line `line`: in validate mode units of one cube
   that wait at different barriers, or return while others wait, are reported. */
CUBERT_API void cubert_cpu_sync_cube_at(const cubert_cpu_ctx *ctx, uint32_t line);

/** Kernel flags. */
enum {
  CUBERT_KERNEL_SYNC_CUBE = 1u << 0,  /**< uses cube barriers and/or shared memory */
  CUBERT_KERNEL_NEEDS_FP64 = 1u << 1, /**< the OpenCL source needs cl_khr_fp64 */
  CUBERT_KERNEL_NEEDS_FP16 = 1u << 2, /**< the OpenCL source needs cl_khr_fp16 */
  CUBERT_KERNEL_PHASED = 1u << 3, /**< CPU: one call per whole cube (units as loops, no fibers) */
};

/** One buffer argument of a kernel, as declared in its kernel-language source. */
typedef struct cubert_kernel_buffer_decl {
  const char *name;    /**< the parameter's name, e.g. "x" */
  const char *type;    /**< its element type as written, e.g. "const float" */
  uint32_t elem_bytes; /**< sizeof the element type */
} cubert_kernel_buffer_decl;

/** Where a dynamic shared array starts after the static shared struct: its size rounded up to
   this many bytes (on the CPU server; the core checks the total the same way everywhere). */
#define CUBERT_DYNAMIC_SHARED_ALIGN 64u

/** The type of a named scalar parameter (a kernel-language `(scalar, T, name)` entry). */
typedef enum cubert_scalar_kind {
  CUBERT_SCALAR_NONE = 0, /**< not a named scalar's type */
  CUBERT_SCALAR_I8,       /**< int8_t */
  CUBERT_SCALAR_U8,       /**< uint8_t */
  CUBERT_SCALAR_I16,      /**< int16_t */
  CUBERT_SCALAR_U16,      /**< uint16_t */
  CUBERT_SCALAR_I32,      /**< int32_t */
  CUBERT_SCALAR_U32,      /**< uint32_t */
  CUBERT_SCALAR_I64,      /**< int64_t */
  CUBERT_SCALAR_U64,      /**< uint64_t */
  CUBERT_SCALAR_F32,      /**< float */
  CUBERT_SCALAR_F64,      /**< double (kernel files with CUBE_NEEDS_FP64) */
} cubert_scalar_kind;

/** One named scalar parameter of a kernel, as declared in its kernel-language source. Scalar k
   (declaration order) is info word k of a launch: the value's bytes in the word's low bytes, as
   cubert_kernel_scalar_set_* (kernel_scalars.h) store them. */
typedef struct cubert_kernel_scalar_decl {
  const char *name;        /**< the parameter's name, e.g. "alpha" */
  const char *type;        /**< its type as written, e.g. "float" */
  cubert_scalar_kind kind; /**< its type */
  uint32_t bytes;          /**< sizeof the type */
} cubert_kernel_scalar_decl;

/** What a kernel-language kernel declares. The client checks every launch against it on every
   server: exactly buffer_count buffers, each a whole number of its elements
   (INVALID_ARGUMENT naming the kernel, what it expects and what it got). On OpenCL a kernel
   with a signature uses the kernel-language calling convention (docs/kernels.md). */
typedef struct cubert_kernel_signature {
  uint32_t buffer_count;                    /**< buffers the kernel takes */
  const cubert_kernel_buffer_decl *buffers; /**< buffer_count entries */
  const char *file;                         /**< where the kernel is defined */
  uint32_t line;                            /**< and the line */
  /** Named scalars: info words 0 .. scalar_count-1 (a launch must pass at least as many). */
  uint32_t scalar_count;
  const cubert_kernel_scalar_decl *scalars; /**< scalar_count entries */
  /** The dynamic shared array, or NULL: its name, element type and element size. Its size is
     the launch's cubert_launch_options.dynamic_shared_bytes (client.h). */
  const cubert_kernel_buffer_decl *dynamic_shared;
} cubert_kernel_signature;

/** A kernel: a codelet with one implementation per backend. Definitions are immutable and may
   be launched from any thread. */
typedef struct cubert_kernel_def {
  const char *name;          /**< for errors, logs and profiles */
  const char *opencl_source; /**< OpenCL C, or NULL */
  const char *opencl_entry;  /**< the __kernel function's name in opencl_source */
  /** Build options, or NULL. Options that start with -cl-nv- are given to NVIDIA's compiler
     only: the OpenCL server drops them on other platforms. */
  const char *opencl_options;
  cubert_cpu_kernel_fn cpu; /**< or NULL */
  uint32_t flags;           /**< CUBERT_KERNEL_* */
  uint64_t shared_bytes;    /**< per-cube shared bytes (with a signature: on all servers) */
  /** Kernel-language kernels: the declared buffers (NULL for hand-written codelets, which keep
     the convention of kernels.h and are not checked beyond the device limits). */
  const cubert_kernel_signature *signature;
  /** Kernel-language kernels: the same CPU function built for the kernel sanitizer (cube.h's
     CUBERT_CUBE_SANITIZE copy), which the CPU server runs in validate mode; NULL: none. */
  cubert_cpu_kernel_fn cpu_sanitize;
  /** Kernel-language kernels: that copy again with private variables starting zeroed instead of
     filled with 0xfe bytes; validate mode runs the whole launch again with it, on copies of the
     buffers, and reports an output that differs (a private variable read before it was
     written). NULL: none (the build makes it only for a file that declares a private variable
     without an initialiser: docs/debugging.md). */
  cubert_cpu_kernel_fn cpu_sanitize_zero;
} cubert_kernel_def;

/** The arguments of a launch: buffers and info words. Borrowed: the launch takes what it
   needs before it returns. */
typedef struct cubert_kernel_args {
  cubert_handle *const *buffers; /**< OpenCL: arguments 0..buffer_count-1 */
  uint32_t buffer_count;         /**< entries of buffers */
  /** Scalar words. OpenCL: one more argument, `__global const ulong *info`, present only when
     info_count > 0. */
  const uint64_t *info;
  uint32_t info_count; /**< words in info */
} cubert_kernel_args;

/** How a launch checks its kernel's accesses (docs/kernels.md, CUBERT_CHECK_MODE). */
typedef enum cubert_execution_mode {
  CUBERT_EXECUTION_CHECKED = 0,   /**< validate the launch; kernels bound-check */
  CUBERT_EXECUTION_VALIDATE = 1,  /**< checked, and kernels may report out-of-bounds accesses */
  CUBERT_EXECUTION_UNCHECKED = 2, /**< no bound checks in kernels (device limits still enforced) */
} cubert_execution_mode;

/* ---- helpers for CPU implementations ------------------------------------------------- */

/** Units per cube: the product of ctx->cube_dim. */
static inline uint64_t cubert_cpu_units_per_cube(const cubert_cpu_ctx *ctx) {
  return (uint64_t)ctx->cube_dim[0] * ctx->cube_dim[1] * ctx->cube_dim[2];
}
/** Cube position (x, y, z) of a global unit id. */
static inline void cubert_cpu_cube_pos(const cubert_cpu_ctx *ctx, uint64_t id, uint32_t out[3]) {
  uint64_t cube = id / cubert_cpu_units_per_cube(ctx);
  out[0] = (uint32_t)(cube % ctx->cube_count[0]);
  cube /= ctx->cube_count[0];
  out[1] = (uint32_t)(cube % ctx->cube_count[1]);
  out[2] = (uint32_t)(cube / ctx->cube_count[1]);
}
/** Unit position (x, y, z) inside its cube. */
static inline void cubert_cpu_unit_pos(const cubert_cpu_ctx *ctx, uint64_t id, uint32_t out[3]) {
  uint64_t unit = id % cubert_cpu_units_per_cube(ctx);
  out[0] = (uint32_t)(unit % ctx->cube_dim[0]);
  unit /= ctx->cube_dim[0];
  out[1] = (uint32_t)(unit % ctx->cube_dim[1]);
  out[2] = (uint32_t)(unit / ctx->cube_dim[1]);
}
/** Linear unit index inside the cube (OpenCL get_local_linear_id). */
static inline uint32_t cubert_cpu_unit_linear(const cubert_cpu_ctx *ctx, uint64_t id) {
  return (uint32_t)(id % cubert_cpu_units_per_cube(ctx));
}
/** Linear cube index (OpenCL group linear id). */
static inline uint64_t cubert_cpu_cube_linear(const cubert_cpu_ctx *ctx, uint64_t id) {
  return id / cubert_cpu_units_per_cube(ctx);
}

/** Positions of a global unit id, and a walk over consecutive ids that keeps them as counters
   (kernel-language code runs rows of units with it instead of dividing per unit). */
typedef struct cubert_cpu_unit_walk {
  uint64_t cl; /**< linear cube */
  uint32_t ul; /**< linear unit in the cube */
  uint32_t ux; /**< unit position x */
  uint32_t uy; /**< unit position y */
  uint32_t uz; /**< unit position z */
  uint32_t cx; /**< cube position x */
  uint32_t cy; /**< cube position y */
  uint32_t cz; /**< cube position z */
} cubert_cpu_unit_walk;
/** Starts a walk at global unit id `id`. */
static inline void cubert_cpu_unit_walk_start(const cubert_cpu_ctx *ctx, uint64_t id,
                                              cubert_cpu_unit_walk *w) {
  uint32_t c[3], u[3];
  cubert_cpu_cube_pos(ctx, id, c);
  cubert_cpu_unit_pos(ctx, id, u);
  w->cl = cubert_cpu_cube_linear(ctx, id);
  w->ul = cubert_cpu_unit_linear(ctx, id);
  w->ux = u[0], w->uy = u[1], w->uz = u[2];
  w->cx = c[0], w->cy = c[1], w->cz = c[2];
}
/** Moves the walk `n` units on, where n <= cube_dim[0] - ux (the rest of the current row). */
static inline void cubert_cpu_unit_walk_advance(const cubert_cpu_ctx *ctx, uint32_t n,
                                                cubert_cpu_unit_walk *w) {
  w->ux += n;
  w->ul += n;
  if (w->ux < ctx->cube_dim[0]) return;
  w->ux = 0;
  if (++w->uy < ctx->cube_dim[1]) return;
  w->uy = 0;
  if (++w->uz < ctx->cube_dim[2]) return;
  w->uz = 0;
  w->ul = 0;
  ++w->cl;
  if (++w->cx < ctx->cube_count[0]) return;
  w->cx = 0;
  if (++w->cy < ctx->cube_count[1]) return;
  w->cy = 0;
  ++w->cz;
}
/** True when unit ids are plain x positions: cubes of one row, one row of cubes. */
static inline int cubert_cpu_ctx_is_flat(const cubert_cpu_ctx *ctx) {
  return ctx->cube_dim[1] == 1 && ctx->cube_dim[2] == 1 && ctx->cube_count[1] == 1 &&
         ctx->cube_count[2] == 1;
}

/** Writes a CPU kernel as a per-unit body; the loop over the call's range is one counted loop
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
