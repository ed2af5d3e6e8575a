/* Helpers shared by the operations of cubert/ops.h: operand checks with messages that name the
   operation, the operand and the axis, broadcasting, and 1-D launches. */
#ifndef CUBERT_OPS_INTERNAL_H
#define CUBERT_OPS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/kernel.h"
#include "cubert/ops.h"
#include "launch_1d.h"
#include "strided.h"

/* Bit of a dtype in an "allowed types" mask. */
#define CUBERT_OPS_DTYPE_BIT(d) (1u << (unsigned)(d))
#define CUBERT_OPS_FLOATS \
  (CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F32) | CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F64))

/* What cubert_ops_check_tensor learned about a valid operand. */
typedef struct cubert_ops_extent {
  uint64_t elems;     /* product of the shape */
  uint64_t end_elems; /* one past the furthest element reached, offset included (0 if empty) */
  const void *memory; /* the allocation (slice) behind the handle: views of one share it */
  uint64_t first_byte, end_byte; /* the bytes the view spans within that allocation's page */
} cubert_ops_extent;

/* INVALID_ARGUMENT "<op>: client is NULL", NOT_FOUND for a released client. */
cubert_status cubert_ops_check_client(const cubert_client *client, const char *op);

/* Checks one operand of `op` (its name in messages, e.g. "matmul") called `name` ("a", "out"):
   non-NULL with a live handle (NOT_FOUND when released) that starts at a multiple of the
   element's alignment (UNSUPPORTED_IO_OPERATION with the offset and the alignment otherwise),
   rank <= CUBERT_MAX_RANK, a dtype in `allowed` (a mask of
   CUBERT_OPS_DTYPE_BIT; 0 accepts any dtype, NONE included), elem_size equal to the dtype's
   size, shape * strides + offset inside the handle without overflow, and for an output
   (`is_output`) no zero stride over a dimension longer than 1. */
cubert_status cubert_ops_check_tensor(const char *op, const char *name, const cubert_tensor *t,
                                      uint32_t allowed, bool is_output, cubert_ops_extent *out);

/* How the memory of two checked operands relates, by their bytes, whatever handles reach them:
   0 disjoint, 1 the very same view (same first byte, shape, strides and element size), 2 they
   overlap otherwise. */
int cubert_ops_memory_relation(const cubert_tensor *a, const cubert_ops_extent *ea,
                               const cubert_tensor *b, const cubert_ops_extent *eb);

/* UNAVAILABLE when the client's device cannot hold `dtype` (F64 without CUBERT_FEATURE_FP64, F16
   without CUBERT_FEATURE_FP16); NOT_FOUND for a released client. */
cubert_status cubert_ops_check_device_dtype(cubert_client *client, const char *op, const char *name,
                                            cubert_dtype dtype);

/* INVALID_ARGUMENT unless a and b have one rank and shape, naming the first axis that differs. */
cubert_status cubert_ops_check_same_shape(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b);

/* INVALID_ARGUMENT unless a and b have one dtype. */
cubert_status cubert_ops_check_same_dtype(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b);

/* NumPy broadcasting of `in` (called `name`) to `out`'s shape: in.rank <= out.rank, and aligned
   at the last axis every in dimension equals out's or is 1. Writes out.rank strides for `in`
   into strides (0 on broadcast and missing axes). INVALID_ARGUMENT naming the axis otherwise. */
cubert_status cubert_ops_broadcast_strides(const char *op, const char *name,
                                           const cubert_tensor *in, const cubert_tensor *out,
                                           uint64_t strides[CUBERT_MAX_RANK]);

/* The known-good candidate of `set` for the device family of `client` (known_good.c), or
   UINT32_MAX (cubert_tune_execute_known, lib/tune/tune_internal.h). */
struct cubert_tune_set;
uint32_t cubert_ops_known_good(const cubert_client *client, const struct cubert_tune_set *set);

/* The autotune sets of cubert_op_reduce and cubert_op_softmax, and a way to bypass them: with
   a candidate index >= 0 set, the calling thread's next operations run that candidate (when it
   is valid for the problem; else UNAVAILABLE) instead of asking the tuner; -1 restores tuning.
   For tests that must run every geometry, and benchmarks that time fixed choices. */
struct cubert_tune_set;
const struct cubert_tune_set *cubert_ops_reduce_tune_set(void);
void cubert_ops_reduce_force_candidate(int index);
const struct cubert_tune_set *cubert_ops_softmax_tune_set(void);
void cubert_ops_softmax_force_candidate(int index);
/* The same for cubert_op_matmul (tune sets "matmul_f32" / "matmul_f64", one candidate list:
   0 tile64x64, 1 tile128x64, 2 tile128x256c, 3 tile32x32, 4 simple, 5 vec8x32, 6 big128k8,
   7 big128k16, 8 big128k16_packed, 9 big128k16_mn). */
void cubert_ops_matmul_force_candidate(int index);

/* CPU builds of a kernel file (CMake's cubert_add_kernel_cpu_variants compiles the C side of a
   file again for x86-64-v3 and -v4; CUBERT_KERNEL_VARIANT_<name> says which were built). */
typedef enum cubert_ops_cpu_level {
  CUBERT_OPS_CPU_BASELINE = 0,
  CUBERT_OPS_CPU_X86V3 = 1, /* AVX2, FMA, BMI2 */
  CUBERT_OPS_CPU_X86V4 = 2, /* AVX-512 F, BW, VL, DQ, CD */
} cubert_ops_cpu_level;

/* The widest build the host CPU runs (detected once). */
cubert_ops_cpu_level cubert_ops_cpu_level_get(void);

/* The definition to launch on `client`: on the CPU server the widest of x86v4, x86v3 and
   baseline that was built (non-NULL) and that the host runs; on OpenCL always `baseline` (every
   build has the same OpenCL text, so one program serves them all). */
const cubert_kernel_def *cubert_ops_cpu_pick(cubert_client *client,
                                             const cubert_kernel_def *baseline,
                                             const cubert_kernel_def *x86v3,
                                             const cubert_kernel_def *x86v4);

#endif /* CUBERT_OPS_INTERNAL_H */
