/** @file
    The kernel language's C side (cubert/cube.h, which documents every name and includes this
    half unless CUBERT_CUBE_OPENCL is defined): kernels as C functions for the CPU server, with
    the names outside the language poisoned at the end for the rest of the kernel file.
    Include cubert/cube.h, never this header. */
#ifndef CUBERT_CUBE_H
#error "include cubert/cube.h, which includes this half"
#endif
#ifndef CUBERT_CUBE_CPU_H
#define CUBERT_CUBE_CPU_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <tgmath.h>

#include "cubert/kernel.h"

#if defined(__GNUC__) || defined(__clang__)
#define CUBERT_CUBE_INLINE_ static inline __attribute__((always_inline))
#define CUBERT_CUBE_UNUSED_ __attribute__((unused))
#define CUBERT_CUBE_PRAGMA_SIMD_ _Pragma("omp simd")
#else
#define CUBERT_CUBE_INLINE_ static inline
#define CUBERT_CUBE_UNUSED_
#define CUBERT_CUBE_PRAGMA_SIMD_
#endif

#define CUBE_FN CUBERT_CUBE_INLINE_
#define CUBE_GLOBAL
#define CUBE_SHARED

/* Where the kernel definitions go: `const cubert_kernel_def <PREFIX><name>`. The library sets
   CUBERT_KERNEL_PREFIX=cubert_kernel_ and exports them; a user's kernels default to the bare
   name with the target's default visibility. */
#ifndef CUBERT_KERNEL_PREFIX
#define CUBERT_KERNEL_PREFIX
#endif
#ifndef CUBERT_KERNEL_EXPORT
#define CUBERT_KERNEL_EXPORT
#endif
/* The flattened OpenCL C of this file, embedded by cubert_add_kernels (-DCUBERT_CUBE_SOURCE=
   <symbol>); without it the kernels have no OpenCL implementation. */
#ifdef CUBERT_CUBE_SOURCE
extern const char CUBERT_CUBE_SOURCE[];
#define CUBERT_CUBE_SOURCE_PTR_ CUBERT_CUBE_SOURCE
#else
#define CUBERT_CUBE_SOURCE_PTR_ 0
#endif

/* ---- positions: variables every body has in scope (see the forms below) ---- */
#define UNIT_POS_X ((uint32_t)cubert_ux_)
#define UNIT_POS_Y ((uint32_t)cubert_uy_)
#define UNIT_POS_Z ((uint32_t)cubert_uz_)
#define UNIT_POS (cubert_ul_) /* no cast: a 64-bit index keeps phase loops affine */
#define CUBE_POS_X ((uint32_t)cubert_cx_)
#define CUBE_POS_Y ((uint32_t)cubert_cy_)
#define CUBE_POS_Z ((uint32_t)cubert_cz_)
#define CUBE_POS ((uint64_t)cubert_cl_)
#define CUBE_DIM_X (cubert_ctx_->cube_dim[0])
#define CUBE_DIM_Y (cubert_ctx_->cube_dim[1])
#define CUBE_DIM_Z (cubert_ctx_->cube_dim[2])
#define CUBE_DIM (CUBE_DIM_X * CUBE_DIM_Y * CUBE_DIM_Z)
#define CUBE_COUNT_X (cubert_ctx_->cube_count[0])
#define CUBE_COUNT_Y (cubert_ctx_->cube_count[1])
#define CUBE_COUNT_Z (cubert_ctx_->cube_count[2])
#define CUBE_COUNT ((uint64_t)CUBE_COUNT_X * CUBE_COUNT_Y * CUBE_COUNT_Z)
#define ABSOLUTE_POS_X ((uint32_t)cubert_ax_)
#define ABSOLUTE_POS_Y ((uint32_t)cubert_ay_)
#define ABSOLUTE_POS_Z ((uint32_t)cubert_az_)
#define UNIT_ID ((uint64_t)cubert_id_)

/* SYNC_CUBE() checks the language's two barrier rules at compile time, by the types of two
   names in scope: `cubert_form_tag_` is a pointer to struct cubert_form_unit_ only in a
   UNIT_KERNEL's body (elsewhere the enum constant below), and `cubert_in_phase_` is a uint32_t
   only inside a PHASE block (the phase loop's variable; elsewhere the body's uint64_t
   parameter). A violation is a static assertion whose message states the rule. */
enum { cubert_form_tag_ = 0 };
struct cubert_form_unit_;
#define SYNC_CUBE()                                                                             \
  ((void)sizeof(struct {                                                                        \
     _Static_assert(                                                                            \
         _Generic(cubert_form_tag_, struct cubert_form_unit_ * : 0, default : 1),               \
         "SYNC_CUBE() in a UNIT_KERNEL: unit kernels have no barriers (use CUBE_KERNEL "        \
         "or PHASED_KERNEL)");                                                                  \
     _Static_assert(_Generic(cubert_in_phase_, uint32_t : 0, default : 1),                      \
                    "SYNC_CUBE() inside a PHASE block: in a PHASED_KERNEL barriers go between " \
                    "phases, outside every PHASE");                                             \
     char cubert_ok_;                                                                           \
   }),                                                                                          \
   cubert_sync_(cubert_ctx_, cubert_form_, cubert_in_phase_, __LINE__))

/* Bodies of the three forms. */
#define CUBERT_CUBE_FORM_UNIT_ 0
#define CUBERT_CUBE_FORM_FIBER_ 1
#define CUBERT_CUBE_FORM_PHASED_ 2

/* The most units a cube has on the CPU server (cubert_hardware_properties.max_units_per_cube):
   the size of an EXCLUSIVE array. */
#define CUBERT_CUBE_MAX_UNITS 1024

#define EXCLUSIVE(T, name) T name[CUBERT_CUBE_MAX_UNITS]
#define MY(name) ((name)[cubert_ul_])
/* n values per unit (n a compile-time constant), element i read and written as MY_AT(name, i):
   on the CPU n arrays of one value per unit (so a phase's loop over units reads each element
   as a contiguous vector), on OpenCL a private array. For register blocks (kernels/matmul). */
#define EXCLUSIVE_ARRAY(T, name, ...) T name[__VA_ARGS__][CUBERT_CUBE_MAX_UNITS]
#define MY_AT(name, ...) ((name)[__VA_ARGS__][cubert_ul_])
/* A PHASE runs the block once per unit of the cube: z and y rows, and a vectorisable loop over
   x. The innermost one-trip loop only declares the unit's other positions. */
#define PHASE CUBERT_CUBE_PHASE_LOOPS_(0, cubert_dx_, 0, cubert_dy_)
#define UNROLL /* gcc and clang unroll constant loops themselves at -O3 */
/* The phase transform's PHASE (tools/cubert_phase.py) for a phase whose body does nothing for a
   unit with UNIT_POS_X >= limit (a value of an integer type, the same for every unit, evaluated
   once; above CUBE_DIM_X it is CUBE_DIM_X): its x loop stops there. The body keeps its own test,
   so a limit past the last unit that acts only costs iterations. */
#define CUBERT_CUBE_PHASE_BELOW_X_(limit)                                                     \
  for (uint32_t cubert_xe_ = (uint64_t)(limit) < cubert_dx_ ? (uint32_t)(limit) : cubert_dx_, \
                cubert_xo_ = 1;                                                               \
       cubert_xo_; cubert_xo_ = 0)                                                            \
  CUBERT_CUBE_PHASE_LOOPS_(0, cubert_xe_, 0, cubert_dy_)
/* The transform's PHASE for a statement that acts only for units with UNIT_POS_X in [xb, xe) and
   UNIT_POS_Y in [yb, ye) (uniform integer values, evaluated once, each above the cube's dim taken
   as the dim): its loops run there alone; the body keeps its own test. */
#define CUBERT_CUBE_PHASE_RANGE_(xb, xe, yb, ye)                                        \
  for (uint32_t cubert_xb_ = (uint64_t)(xb) < cubert_dx_ ? (uint32_t)(xb) : cubert_dx_, \
                cubert_xe_ = (uint64_t)(xe) < cubert_dx_ ? (uint32_t)(xe) : cubert_dx_, \
                cubert_yb_ = (uint64_t)(yb) < cubert_dy_ ? (uint32_t)(yb) : cubert_dy_, \
                cubert_ye_ = (uint64_t)(ye) < cubert_dy_ ? (uint32_t)(ye) : cubert_dy_, \
                cubert_xo_ = 1;                                                         \
       cubert_xo_; cubert_xo_ = 0)                                                      \
  CUBERT_CUBE_PHASE_LOOPS_(cubert_xb_, cubert_xe_, cubert_yb_, cubert_ye_)
/* Whether the transform's per-cube versions of a phase run (tools/cubert_phase_ranges.py): 0 in
   the sanitize copy, which keeps every access checked. */
#define CUBERT_CUBE_VERSIONS_ 1
/* The sanitize variant (CUBERT_CUBE_SANITIZE, at the end of this file) learns each unit here:
   a PHASE's unit (ul, linear in the cube), a unit kernel's unit (id, global). */
#define CUBERT_CUBE_PU_(ul) 1
#define CUBERT_CUBE_UNIT_AT_(id) ((void)0)
#define CUBERT_CUBE_PHASE_LOOPS_(x_begin, x_end, y_begin, y_end)                           \
  for (uint32_t cubert_uz_ = 0; cubert_uz_ < cubert_dz_; ++cubert_uz_)                     \
    for (uint32_t cubert_uy_ = (y_begin),                                                  \
                  cubert_row_ = cubert_dx_ * (cubert_dy_ * cubert_uz_ + cubert_uy_);       \
         cubert_uy_ < (y_end); ++cubert_uy_, cubert_row_ += cubert_dx_)                    \
      CUBERT_CUBE_PRAGMA_SIMD_                                                             \
  for (uint32_t cubert_ux_ = (x_begin); cubert_ux_ < (x_end); ++cubert_ux_)                \
    for (CUBERT_CUBE_UNUSED_ uint64_t cubert_ul_ = (uint64_t)cubert_row_ + cubert_ux_,     \
                                      cubert_id_ = cubert_idb_ + cubert_ul_,               \
                                      cubert_rid_ = cubert_id_, cubert_once_ = 1;          \
         cubert_once_; cubert_once_ = 0)                                                   \
      for (CUBERT_CUBE_UNUSED_ uint32_t cubert_ax_ = cubert_cx_ * cubert_dx_ + cubert_ux_, \
                                        cubert_ay_ = cubert_cy_ * cubert_dy_ + cubert_uy_, \
                                        cubert_az_ = cubert_cz_ * cubert_dz_ + cubert_uz_, \
                                        cubert_in_phase_ = CUBERT_CUBE_PU_(cubert_ul_);    \
           cubert_in_phase_; cubert_in_phase_ = 0)

/* ---- helpers the macros call ---- */

/* LOAD's value out of range: the element type's zero, numbers and plain structs alike. */
#define CUBERT_CUBE_ZERO_(buf) ((__typeof__((buf)[0])){0})

/* STORE_SAME's store: units of cubes on other threads may store the same element at once, a data
   race under C11's memory model unless the stores are atomic. An element of 1, 2, 4 or 8 bytes is
   stored with a relaxed atomic store (the same plain move on x86-64 and AArch64, so it costs
   nothing); a larger one (a struct) stays a plain store. SHARED_STORE_SAME stays plain: a cube's
   units share one thread. */
#undef CUBERT_CUBE_BUFFER_SAME_STORE_
#define CUBERT_CUBE_BUFFER_SAME_STORE_(p, v)                                                 \
  do {                                                                                       \
    __typeof__(p) cubert_same_p_ = (p);                                                      \
    __typeof__(*cubert_same_p_) cubert_same_v_ = (v);                                        \
    __builtin_choose_expr(sizeof cubert_same_v_ == 1 || sizeof cubert_same_v_ == 2 ||        \
                              sizeof cubert_same_v_ == 4 || sizeof cubert_same_v_ == 8,      \
                          __atomic_store(cubert_same_p_, &cubert_same_v_, __ATOMIC_RELAXED), \
                          (void)(*cubert_same_p_ = cubert_same_v_));                         \
  } while (0)

/* Validate mode: reports the first out-of-range access of the launch (kernel.h). */
#define CUBERT_CUBE_ENV_ cubert_ctx_
CUBERT_CUBE_INLINE_ int cubert_chk_(const cubert_cpu_ctx *ctx, int mode, uint64_t i, uint64_t len,
                                    uint32_t buffer, uint64_t unit_id) {
  if (mode == CUBERT_CUBE_UNCHECKED) return 1;
  if (i < len) return 1;
  if (mode == CUBERT_CUBE_VALIDATE) cubert_cpu_report_access(ctx, buffer, unit_id, i, len);
  return 0;
}
CUBERT_CUBE_INLINE_ uint64_t cubert_info_word_(const cubert_cpu_ctx *ctx, int mode, uint32_t k) {
  if (mode == CUBERT_CUBE_UNCHECKED || k < ctx->info_count) return ctx->info[k];
  if (mode == CUBERT_CUBE_VALIDATE)
    cubert_cpu_report_access(ctx, CUBERT_CPU_ACCESS_INFO, UINT64_MAX, k, ctx->info_count);
  return 0;
}
CUBERT_CUBE_INLINE_ int cubert_info_at_most_(const cubert_cpu_ctx *ctx, int mode, uint32_t k,
                                             uint64_t limit) {
  const uint64_t v = cubert_info_word_(ctx, mode, k);
  if (v <= limit) return 1;
  if (mode == CUBERT_CUBE_VALIDATE) cubert_cpu_report_info_limit(ctx, UINT64_MAX, k, v, limit);
  return 0;
}
/* Value ranges for the transform's per-cube versions of a phase (tools/cubert_phase_ranges.py):
   [lo, hi] holds every value an integer expression takes over the cube's units, computed exactly
   in 64 bits; ok is 0 once a bound is unknown, overflows or leaves the C type of the expression
   (the version then is not taken). */
typedef struct cubert_span_ {
  int64_t lo, hi;
  int ok;
} cubert_span_;
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_of_(int64_t lo, int64_t hi) {
  return (cubert_span_){lo, hi, lo <= hi};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_u_(uint64_t v) {
  return (cubert_span_){(int64_t)(v & INT64_MAX), (int64_t)(v & INT64_MAX), v <= INT64_MAX};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_s_(int64_t v) {
  return (cubert_span_){v, v, 1};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_fit_(cubert_span_ a, int64_t lo, int64_t hi) {
  a.ok = a.ok && a.lo >= lo && a.hi <= hi;
  return a;
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_add_(cubert_span_ a, cubert_span_ b) {
  cubert_span_ r;
  r.ok = a.ok && b.ok && !__builtin_add_overflow(a.lo, b.lo, &r.lo) &&
         !__builtin_add_overflow(a.hi, b.hi, &r.hi);
  return r;
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_sub_(cubert_span_ a, cubert_span_ b) {
  cubert_span_ r;
  r.ok = a.ok && b.ok && !__builtin_sub_overflow(a.lo, b.hi, &r.lo) &&
         !__builtin_sub_overflow(a.hi, b.lo, &r.hi);
  return r;
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_mul_(cubert_span_ a, cubert_span_ b) {
  int64_t p[4];
  cubert_span_ r = {0, 0, a.ok && b.ok};
  r.ok = r.ok && !__builtin_mul_overflow(a.lo, b.lo, &p[0]) &&
         !__builtin_mul_overflow(a.lo, b.hi, &p[1]) && !__builtin_mul_overflow(a.hi, b.lo, &p[2]) &&
         !__builtin_mul_overflow(a.hi, b.hi, &p[3]);
  if (!r.ok) return r;
  r.lo = r.hi = p[0];
  for (int i = 1; i < 4; ++i) {
    r.lo = p[i] < r.lo ? p[i] : r.lo;
    r.hi = p[i] > r.hi ? p[i] : r.hi;
  }
  return r;
}
/* Division, remainder and shifts: operands not negative (C's and the exact results agree). */
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_div_(cubert_span_ a, cubert_span_ b) {
  const int ok = a.ok && b.ok && a.lo >= 0 && b.lo > 0;
  return (cubert_span_){ok ? a.lo / b.hi : 0, ok ? a.hi / b.lo : 0, ok};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_rem_(cubert_span_ a, cubert_span_ b) {
  const int ok = a.ok && b.ok && a.lo >= 0 && b.lo > 0;
  return ok && a.hi < b.lo ? a : (cubert_span_){0, ok ? b.hi - 1 : 0, ok};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_shl_(cubert_span_ a, cubert_span_ b) {
  if (!(b.ok && b.lo >= 0 && b.hi < 63)) return (cubert_span_){0, 0, 0};
  return cubert_span_mul_(cubert_span_fit_(a, 0, INT64_MAX),
                          cubert_span_of_(INT64_C(1) << b.lo, INT64_C(1) << b.hi));
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_shr_(cubert_span_ a, cubert_span_ b) {
  const int ok = a.ok && b.ok && a.lo >= 0 && b.lo >= 0 && b.hi < 63;
  return (cubert_span_){ok ? a.lo >> b.hi : 0, ok ? a.hi >> b.lo : 0, ok};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_and_(cubert_span_ a, cubert_span_ b) {
  const int ok = a.ok && b.ok && a.lo >= 0 && b.lo >= 0;
  return (cubert_span_){0, a.hi < b.hi ? a.hi : b.hi, ok};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_min_(cubert_span_ a, cubert_span_ b) {
  return (cubert_span_){a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, a.ok && b.ok};
}
CUBERT_CUBE_INLINE_ cubert_span_ cubert_span_max_(cubert_span_ a, cubert_span_ b) {
  return (cubert_span_){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, a.ok && b.ok};
}
/* Facts the version assumes, each true for every unit of the cube: an index below len; a < b and
   a <= b (values not negative, so C's comparison after its conversions agrees); a nonzero; a
   zero; a known. */
CUBERT_CUBE_INLINE_ int cubert_span_in_(cubert_span_ a, uint64_t len) {
  return a.ok && a.lo >= 0 && (uint64_t)a.hi < len;
}
CUBERT_CUBE_INLINE_ int cubert_span_lt_(cubert_span_ a, cubert_span_ b) {
  return a.ok && b.ok && a.lo >= 0 && b.lo >= 0 && a.hi < b.lo;
}
CUBERT_CUBE_INLINE_ int cubert_span_le_(cubert_span_ a, cubert_span_ b) {
  return a.ok && b.ok && a.lo >= 0 && b.lo >= 0 && a.hi <= b.lo;
}
CUBERT_CUBE_INLINE_ int cubert_span_nonzero_(cubert_span_ a) {
  return a.ok && (a.lo > 0 || a.hi < 0);
}
CUBERT_CUBE_INLINE_ int cubert_span_zero_(cubert_span_ a) {
  return a.ok && a.lo == 0 && a.hi == 0;
}
CUBERT_CUBE_INLINE_ int cubert_span_ok_(cubert_span_ a) {
  return a.ok;
}
CUBERT_CUBE_INLINE_ float cubert_bits_f32_(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
CUBERT_CUBE_INLINE_ double cubert_bits_f64_(uint64_t bits) {
  double f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
CUBERT_CUBE_INLINE_ void cubert_sync_(const cubert_cpu_ctx *ctx, int form, uint64_t in_phase,
                                      uint32_t line) {
  if (form == CUBERT_CUBE_FORM_PHASED_) {
    /* Between phases the barrier is the loop structure itself; inside one it cannot hold. */
    if (in_phase) cubert_cpu_report_barrier(ctx, line, "SYNC_CUBE() inside a PHASE block");
    return;
  }
  cubert_cpu_sync_cube_at(ctx, line);
}

/* Buffer atomics (ATOMIC_*): relaxed, like OpenCL 1.2's atomic_* functions. */
#define CUBERT_CUBE_GATOMIC_ADD_(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define CUBERT_CUBE_GATOMIC_SUB_(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define CUBERT_CUBE_GATOMIC_XCHG_(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
/* The function `prefix##op` for p's element type: 32- and 64-bit integers (buffer and shared
   atomics). */
#define CUBERT_CUBE_INT_FN_(prefix, op, p) \
  _Generic((p), int32_t *                  \
           : prefix##op##_i32_, uint32_t * \
           : prefix##op##_u32_, int64_t *  \
           : prefix##op##_i64_, uint64_t * \
           : prefix##op##_u64_)
/* 32- and 64-bit integer elements; add, sub and xchg are GCC's type-generic builtins. */
#define CUBERT_CUBE_GATOMIC_FN_(op, p) CUBERT_CUBE_INT_FN_(cubert_atomic_, op, p)
#define CUBERT_CUBE_GATOMIC_MIN_(p, v) CUBERT_CUBE_GATOMIC_FN_(min, p)((p), (v))
#define CUBERT_CUBE_GATOMIC_MAX_(p, v) CUBERT_CUBE_GATOMIC_FN_(max, p)((p), (v))
#define CUBERT_CUBE_GATOMIC_CAS_(p, e, d) CUBERT_CUBE_GATOMIC_FN_(cas, p)((p), (e), (d))
#define CUBERT_CUBE_ATOMIC_FNS_(T, sfx)                                                        \
  CUBERT_CUBE_INLINE_ T cubert_atomic_min_##sfx##_(T *p, T v) {                                \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                              \
    while (v < old &&                                                                          \
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {  \
    }                                                                                          \
    return old;                                                                                \
  }                                                                                            \
  CUBERT_CUBE_INLINE_ T cubert_atomic_max_##sfx##_(T *p, T v) {                                \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                              \
    while (v > old &&                                                                          \
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {  \
    }                                                                                          \
    return old;                                                                                \
  }                                                                                            \
  CUBERT_CUBE_INLINE_ T cubert_atomic_cas_##sfx##_(T *p, T expected, T desired) {              \
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return expected;                                                                           \
  }
CUBERT_CUBE_ATOMIC_FNS_(int32_t, i32)
CUBERT_CUBE_ATOMIC_FNS_(uint32_t, u32)
CUBERT_CUBE_ATOMIC_FNS_(int64_t, i64)
CUBERT_CUBE_ATOMIC_FNS_(uint64_t, u64)
CUBERT_CUBE_INLINE_ double cubert_atomic_add_f64_(double *p, double v) {
  uint64_t *bits = (uint64_t *)(void *)p;
  uint64_t old = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
  do {
    double sum = cubert_bits_f64_(old) + v;
    memcpy(&next, &sum, sizeof next);
  } while (!__atomic_compare_exchange_n(bits, &old, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return cubert_bits_f64_(old);
}
CUBERT_CUBE_INLINE_ float cubert_atomic_add_f32_(float *p, float v) {
  uint32_t *bits = (uint32_t *)(void *)p;
  uint32_t old = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
  do {
    float sum = cubert_bits_f32_(old) + v;
    memcpy(&next, &sum, sizeof next);
  } while (!__atomic_compare_exchange_n(bits, &old, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return cubert_bits_f32_(old);
}

/* ---- shared-memory atomics ----
   A cube's units always run on one thread of the CPU server (the fibers of a CUBE_KERNEL switch
   only at SYNC_CUBE(); a PHASED_KERNEL's phases are loops), so no other unit can come between
   the read and the write of an update of shared memory: a plain read-modify-write is atomic
   there, at the cost of a load and a store. It is spelled as a relaxed atomic load and a relaxed
   atomic store (ordinary moves on every CPU) because a plain `*p += v` in a phase's `omp simd`
   loop over units could be vectorised into a gather and a scatter that lose the updates of
   units hitting one address. Shared memory only: a pointer into a buffer needs ATOMIC_*. */
#define CUBERT_CUBE_LD_(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CUBERT_CUBE_ST_(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define CUBERT_CUBE_SHARED_FNS_(T, U, sfx)                                        \
  CUBERT_CUBE_INLINE_ T cubert_shared_add_##sfx##_(T *p, T v) {                   \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    CUBERT_CUBE_ST_(p, (T)((U)old + (U)v)); /* wraps, as OpenCL's atomic_add */   \
    return old;                                                                   \
  }                                                                               \
  CUBERT_CUBE_INLINE_ T cubert_shared_sub_##sfx##_(T *p, T v) {                   \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    CUBERT_CUBE_ST_(p, (T)((U)old - (U)v));                                       \
    return old;                                                                   \
  }                                                                               \
  CUBERT_CUBE_INLINE_ T cubert_shared_min_##sfx##_(T *p, T v) {                   \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    if (v < old) CUBERT_CUBE_ST_(p, v);                                           \
    return old;                                                                   \
  }                                                                               \
  CUBERT_CUBE_INLINE_ T cubert_shared_max_##sfx##_(T *p, T v) {                   \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    if (v > old) CUBERT_CUBE_ST_(p, v);                                           \
    return old;                                                                   \
  }                                                                               \
  CUBERT_CUBE_INLINE_ T cubert_shared_xchg_##sfx##_(T *p, T v) {                  \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    CUBERT_CUBE_ST_(p, v);                                                        \
    return old;                                                                   \
  }                                                                               \
  CUBERT_CUBE_INLINE_ T cubert_shared_cas_##sfx##_(T *p, T expected, T desired) { \
    const T old = CUBERT_CUBE_LD_(p);                                             \
    if (old == expected) CUBERT_CUBE_ST_(p, desired);                             \
    return old;                                                                   \
  }
CUBERT_CUBE_SHARED_FNS_(int32_t, uint32_t, i32)
CUBERT_CUBE_SHARED_FNS_(uint32_t, uint32_t, u32)
CUBERT_CUBE_SHARED_FNS_(int64_t, uint64_t, i64)
CUBERT_CUBE_SHARED_FNS_(uint64_t, uint64_t, u64)
#define CUBERT_CUBE_SHARED_GENERIC_(op, p) CUBERT_CUBE_INT_FN_(cubert_shared_, op, p)
/* Split arguments (cube.h, "Whole arguments"): the function by the first of the two as the C
   parser sees them, called with both; CAS's three by GCC's type-generic compare-and-swap (an
   atomic instruction where the plain update would do: only where a literal splits them). */
#define SHARED_ATOMIC_ADD(...) CUBERT_CUBE_SHARED2_(add, __VA_ARGS__)
#define SHARED_ATOMIC_SUB(...) CUBERT_CUBE_SHARED2_(sub, __VA_ARGS__)
#define SHARED_ATOMIC_MIN(...) CUBERT_CUBE_SHARED2_(min, __VA_ARGS__)
#define SHARED_ATOMIC_MAX(...) CUBERT_CUBE_SHARED2_(max, __VA_ARGS__)
#define SHARED_ATOMIC_XCHG(...) CUBERT_CUBE_SHARED2_(xchg, __VA_ARGS__)
#define CUBERT_CUBE_SHARED2_(op, ...)                                                \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_SHARED_AT_, CUBERT_CUBE_SHARED_SPLIT_, __VA_ARGS__) \
  (op, __VA_ARGS__)
#define CUBERT_CUBE_SHARED_AT_(op, p, v) CUBERT_CUBE_SHARED_GENERIC_(op, p)((p), (v))
#define CUBERT_CUBE_SHARED_SPLIT_(op, ...) \
  CUBERT_CUBE_SHARED_GENERIC_(op, CUBERT_PP_ARG1_OF_2_(__VA_ARGS__))(__VA_ARGS__)
#define SHARED_ATOMIC_CAS(...)                                                          \
  CUBERT_PP_PICK_(3, CUBERT_CUBE_SHARED_CAS_, __sync_val_compare_and_swap, __VA_ARGS__) \
  (__VA_ARGS__)
#define CUBERT_CUBE_SHARED_CAS_(p, e, d) CUBERT_CUBE_SHARED_GENERIC_(cas, p)((p), (e), (d))

/* Float atomics on shared memory, the same plain updates. min and max follow fmin/fmax: a NaN
   loses to a number (a NaN in memory is replaced by v, a NaN v changes nothing); -0 and +0
   compare equal, so the zero already stored stays. cube_prelude.cl has the OpenCL side. */
CUBERT_CUBE_INLINE_ float cubert_shared_atomic_add_f32_(float *p, float v) {
  float old, next;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  next = old + v;
  __atomic_store(p, &next, __ATOMIC_RELAXED);
  return old;
}
CUBERT_CUBE_INLINE_ float cubert_shared_atomic_min_f32_(float *p, float v) {
  float old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  if (v < old || old != old) __atomic_store(p, &v, __ATOMIC_RELAXED);
  return old;
}
CUBERT_CUBE_INLINE_ float cubert_shared_atomic_max_f32_(float *p, float v) {
  float old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  if (v > old || old != old) __atomic_store(p, &v, __ATOMIC_RELAXED);
  return old;
}
/* Float atomics on shared memory; return the old value. */
#define SHARED_ATOMIC_ADD_F32(...) cubert_shared_atomic_add_f32_(__VA_ARGS__)
#define SHARED_ATOMIC_MIN_F32(...) cubert_shared_atomic_min_f32_(__VA_ARGS__)
#define SHARED_ATOMIC_MAX_F32(...) cubert_shared_atomic_max_f32_(__VA_ARGS__)

/* ---- cube-level reduce and scan (the OpenCL side's block mirrors this one) ----
   The same steps in both cube forms: every unit writes its value to the scratch; after a
   barrier, one serial pass over the scratch (a tree buys nothing where a cube's units share a
   thread) by the cube's first unit, which in a PHASED_KERNEL is the body itself; after another
   barrier every unit reads its result; a last barrier lets the scratch be reused at once.
   CUBERT_CUBE_EACH_UNIT_ is a loop valid in both forms: over the cube's units in a
   PHASED_KERNEL, over the calling unit alone in a CUBE_KERNEL (its variables then shadow the
   body's own, with the same values), so `value` and `dst` may be MY(x) in the first form and
   plain variables in the second. The scratch must be an array (its size is the capacity); a
   cube with more units fails the launch. */
/* (count >= 1: the first trip is unconditional, so the compiler sees `dst` written.) */
#define CUBERT_CUBE_EACH_UNIT_(first, count)                                               \
  for (CUBERT_CUBE_UNUSED_ uint64_t cubert_ul_ = (first), cubert_end_ = (first) + (count), \
                                    cubert_id_ = cubert_ctx_->unit_begin,                  \
                                    cubert_rid_ = cubert_id_, cubert_go_ = 1;              \
       cubert_go_; cubert_go_ = ++cubert_ul_ < cubert_end_, cubert_rid_ = ++cubert_id_)
#if defined(__GNUC__) || defined(__clang__)
#define CUBERT_CUBE_SCRATCH_IS_ARRAY_(scratch)                                              \
  _Static_assert(                                                                           \
      !__builtin_types_compatible_p(__typeof__(scratch), __typeof__(&(scratch)[0])),        \
      "the scratch of CUBE_REDUCE_* and CUBE_SCAN_* must be an array of the shared struct " \
      "(its size is the capacity), not a pointer")
#else
#define CUBERT_CUBE_SCRATCH_IS_ARRAY_(scratch) _Static_assert(1, "")
#endif
/* The helpers' first step: the capacity check, then every unit's value into the scratch. A
   cube larger than the scratch fails the launch; its units still finish the helper, touching
   only the scratch (every unit's `dst` is written, so that no path leaves it unset). */
#define CUBERT_CUBE_RED_BEGIN_(value, scratch)                                                \
  CUBERT_CUBE_SCRATCH_IS_ARRAY_(scratch);                                                     \
  const uint32_t cubert_rall_ = CUBE_DIM;                                                     \
  const uint32_t cubert_rcap_ = (uint32_t)(sizeof(scratch) / sizeof((scratch)[0]));           \
  const uint32_t cubert_rn_ = cubert_rall_ < cubert_rcap_ ? cubert_rall_ : cubert_rcap_;      \
  const uint32_t cubert_r0_ = (uint32_t)(cubert_ctx_->unit_begin % cubert_rall_);             \
  const uint32_t cubert_rc_ = cubert_form_ == CUBERT_CUBE_FORM_PHASED_ ? cubert_rall_ : 1;    \
  if (cubert_rall_ > cubert_rcap_ && cubert_r0_ == 0)                                         \
    cubert_cpu_fail(cubert_ctx_,                                                              \
                    "CUBE_REDUCE_* or CUBE_SCAN_*: the cube has more units than the scratch " \
                    "array has elements");                                                    \
  CUBERT_CUBE_EACH_UNIT_(cubert_r0_, cubert_rc_) {                                            \
    if (cubert_ul_ < cubert_rn_) (scratch)[cubert_ul_] = (value);                             \
  }                                                                                           \
  SYNC_CUBE()
#define CUBERT_CUBE_REDUCE_(OP, value, scratch, dst)                    \
  do {                                                                  \
    CUBERT_CUBE_RED_BEGIN_(value, scratch);                             \
    if (cubert_r0_ == 0)                                                \
      for (uint32_t cubert_i_ = 1; cubert_i_ < cubert_rn_; ++cubert_i_) \
        (scratch)[0] = OP((scratch)[0], (scratch)[cubert_i_]);          \
    SYNC_CUBE();                                                        \
    CUBERT_CUBE_EACH_UNIT_(cubert_r0_, cubert_rc_)(dst) = (scratch)[0]; \
    SYNC_CUBE();                                                        \
  } while (0)
#define CUBERT_CUBE_SCAN_(exclusive, value, scratch, dst)                               \
  do {                                                                                  \
    CUBERT_CUBE_RED_BEGIN_(value, scratch);                                             \
    if (cubert_r0_ == 0)                                                                \
      for (uint32_t cubert_i_ = 1; cubert_i_ < cubert_rn_; ++cubert_i_)                 \
        (scratch)[cubert_i_] += (scratch)[cubert_i_ - 1];                               \
    SYNC_CUBE();                                                                        \
    CUBERT_CUBE_EACH_UNIT_(cubert_r0_, cubert_rc_) {                                    \
      const uint64_t cubert_k_ = cubert_ul_ < cubert_rn_ ? cubert_ul_ : cubert_rn_ - 1; \
      if (!(exclusive))                                                                 \
        (dst) = (scratch)[cubert_k_];                                                   \
      else                                                                              \
        (dst) = cubert_k_ > 0 ? (scratch)[cubert_k_ - 1] : 0;                           \
    }                                                                                   \
    SYNC_CUBE();                                                                        \
  } while (0)
/* fmin/fmax's rule (a NaN loses to a number) for floats, plain comparisons for integers. */
#define CUBERT_CUBE_RED_MINMAX_(T, sfx, nan_loses)          \
  CUBERT_CUBE_INLINE_ T cubert_red_min_##sfx##_(T a, T b) { \
    return (b < a || (nan_loses && a != a)) ? b : a;        \
  }                                                         \
  CUBERT_CUBE_INLINE_ T cubert_red_max_##sfx##_(T a, T b) { \
    return (b > a || (nan_loses && a != a)) ? b : a;        \
  }
CUBERT_CUBE_RED_MINMAX_(float, f32, 1)
CUBERT_CUBE_RED_MINMAX_(double, f64, 1)
CUBERT_CUBE_RED_MINMAX_(int32_t, i32, 0)
CUBERT_CUBE_RED_MINMAX_(uint32_t, u32, 0)
CUBERT_CUBE_RED_MINMAX_(int64_t, i64, 0)
CUBERT_CUBE_RED_MINMAX_(uint64_t, u64, 0)
#define CUBERT_CUBE_OP_MIN_(a, b) CUBERT_CUBE_GENERIC_(cubert_red_min_, a)((a), (b))
#define CUBERT_CUBE_OP_MAX_(a, b) CUBERT_CUBE_GENERIC_(cubert_red_max_, a)((a), (b))

/* clamp and VFMA choose their function by an argument's type, which no construct of C11 or GCC
   takes from a list whose commas only the C parser can place (the type of a comma expression
   flags its other operands as unused): where a compound literal splits their arguments, the
   build stops with this message at the kernel's line. */
#define CUBERT_CUBE_SPLIT_REFUSED_(what)                                         \
  ((void)sizeof(struct {                                                         \
     _Static_assert(0, what                                                      \
                    ": put a compound literal with commas in parentheses, e.g. " \
                    "VFMA(a, b, ((f32x4){1, 2, 3, 4})), or name it first");      \
     char cubert_ok_;                                                            \
   }),                                                                           \
   0)

/* ---- math: OpenCL's names and meanings (tgmath.h gives the floating-point ones) ---- */
#define CUBERT_CUBE_MINMAX_(T, sfx)                              \
  CUBERT_CUBE_INLINE_ T cubert_min_##sfx##_(T a, T b) {          \
    return b < a ? b : a;                                        \
  }                                                              \
  CUBERT_CUBE_INLINE_ T cubert_max_##sfx##_(T a, T b) {          \
    return a < b ? b : a;                                        \
  }                                                              \
  CUBERT_CUBE_INLINE_ T cubert_clamp_##sfx##_(T x, T lo, T hi) { \
    return cubert_min_##sfx##_(cubert_max_##sfx##_(x, lo), hi);  \
  }
CUBERT_CUBE_MINMAX_(float, f32)
CUBERT_CUBE_MINMAX_(double, f64)
CUBERT_CUBE_MINMAX_(int32_t, i32)
CUBERT_CUBE_MINMAX_(uint32_t, u32)
CUBERT_CUBE_MINMAX_(int64_t, i64)
CUBERT_CUBE_MINMAX_(uint64_t, u64)
#define CUBERT_CUBE_GENERIC_(prefix, x) \
  _Generic((x), float                   \
           : prefix##f32_, double       \
           : prefix##f64_, int32_t      \
           : prefix##i32_, uint32_t     \
           : prefix##u32_, int64_t      \
           : prefix##i64_, uint64_t     \
           : prefix##u64_)
/* Split arguments (cube.h, "Whole arguments"): min and max take the two as the C parser sees
   them, exactly as whole ones; clamp refuses them (CUBERT_CUBE_SPLIT_REFUSED_). */
#define min(...) CUBERT_CUBE_MINMAX2_(cubert_min_, __VA_ARGS__)
#define max(...) CUBERT_CUBE_MINMAX2_(cubert_max_, __VA_ARGS__)
#define CUBERT_CUBE_MINMAX2_(fn, ...)                                                \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_MINMAX_AT_, CUBERT_CUBE_MINMAX_SPLIT_, __VA_ARGS__) \
  (fn, __VA_ARGS__)
#define CUBERT_CUBE_MINMAX_AT_(fn, a, b) CUBERT_CUBE_GENERIC_(fn, (a) + (b))((a), (b))
#define CUBERT_CUBE_MINMAX_SPLIT_(fn, ...) \
  CUBERT_CUBE_MINMAX_AT_(fn, CUBERT_PP_ARG1_OF_2_(__VA_ARGS__), CUBERT_PP_ARG2_OF_2_(__VA_ARGS__))
#define clamp(...) \
  CUBERT_PP_PICK_(3, CUBERT_CUBE_CLAMP_, CUBERT_CUBE_CLAMP_SPLIT_, __VA_ARGS__)(__VA_ARGS__)
#define CUBERT_CUBE_CLAMP_(x, lo, hi) CUBERT_CUBE_GENERIC_(cubert_clamp_, x)((x), (lo), (hi))
#define CUBERT_CUBE_CLAMP_SPLIT_(...) CUBERT_CUBE_SPLIT_REFUSED_("clamp")
CUBERT_CUBE_INLINE_ uint32_t cubert_abs_i32_(int32_t x) {
  return x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
}
CUBERT_CUBE_INLINE_ uint64_t cubert_abs_i64_(int64_t x) {
  return x < 0 ? 0u - (uint64_t)x : (uint64_t)x;
}
CUBERT_CUBE_INLINE_ uint32_t cubert_abs_u32_(uint32_t x) {
  return x;
}
CUBERT_CUBE_INLINE_ uint64_t cubert_abs_u64_(uint64_t x) {
  return x;
}
#define abs(...)                       \
  _Generic((__VA_ARGS__), int32_t      \
           : cubert_abs_i32_, int64_t  \
           : cubert_abs_i64_, uint32_t \
           : cubert_abs_u32_, uint64_t \
           : cubert_abs_u64_)(__VA_ARGS__)
#define rsqrt(...) (1 / sqrt((__VA_ARGS__)))
/* The floating-point names of the language: <tgmath.h>'s macros name their parameters, so a
   compound literal with commas split them ("passed 2 arguments, but takes just 1"). They are
   redefined to take `...` and to call the function <tgmath.h> calls for real arguments (float
   arguments: the float function; long double: the long double one; else the double one):
   - GCC 8 and later: over __builtin_tgmath, the builtin glibc's <tgmath.h> expands to, which
     takes the arguments as the C parser splits them and chooses by all of them;
   - clang: by _Generic over the argument, or over the promoted sum of the two (the rule of
     clang's <tgmath.h>), found by CUBERT_PP_ARG1_OF_2_ / ARG2_OF_2_ and never evaluated; fma
     keeps clang's macro, which takes a literal with commas only in parentheses. */
#if defined(__clang__)
#define CUBERT_CUBE_TG1_(fn, ...) \
  _Generic((__VA_ARGS__), float : fn##f, long double : fn##l, default : fn)(__VA_ARGS__)
#define CUBERT_CUBE_TG_PROMOTED_(x) _Generic((x), float : 0.0f, long double : 0.0L, default : 0.0)
#define CUBERT_CUBE_TG2_(fn, ...)                                           \
  _Generic(CUBERT_CUBE_TG_PROMOTED_(CUBERT_PP_ARG1_OF_2_(__VA_ARGS__)) +    \
               CUBERT_CUBE_TG_PROMOTED_(CUBERT_PP_ARG2_OF_2_(__VA_ARGS__)), \
           float                                                            \
           : fn##f, long double                                             \
           : fn##l, default                                                 \
           : fn)(__VA_ARGS__)
#undef sqrt
#undef exp
#undef exp2
#undef log
#undef log2
#undef sin
#undef cos
#undef tan
#undef tanh
#undef fabs
#undef floor
#undef ceil
#undef round
#undef trunc
#undef pow
#undef fmin
#undef fmax
#undef copysign
#define sqrt(...) CUBERT_CUBE_TG1_(sqrt, __VA_ARGS__)
#define exp(...) CUBERT_CUBE_TG1_(exp, __VA_ARGS__)
#define exp2(...) CUBERT_CUBE_TG1_(exp2, __VA_ARGS__)
#define log(...) CUBERT_CUBE_TG1_(log, __VA_ARGS__)
#define log2(...) CUBERT_CUBE_TG1_(log2, __VA_ARGS__)
#define sin(...) CUBERT_CUBE_TG1_(sin, __VA_ARGS__)
#define cos(...) CUBERT_CUBE_TG1_(cos, __VA_ARGS__)
#define tan(...) CUBERT_CUBE_TG1_(tan, __VA_ARGS__)
#define tanh(...) CUBERT_CUBE_TG1_(tanh, __VA_ARGS__)
#define fabs(...) CUBERT_CUBE_TG1_(fabs, __VA_ARGS__)
#define floor(...) CUBERT_CUBE_TG1_(floor, __VA_ARGS__)
#define ceil(...) CUBERT_CUBE_TG1_(ceil, __VA_ARGS__)
#define round(...) CUBERT_CUBE_TG1_(round, __VA_ARGS__)
#define trunc(...) CUBERT_CUBE_TG1_(trunc, __VA_ARGS__)
#define pow(...) CUBERT_CUBE_TG2_(pow, __VA_ARGS__)
#define fmin(...) CUBERT_CUBE_TG2_(fmin, __VA_ARGS__)
#define fmax(...) CUBERT_CUBE_TG2_(fmax, __VA_ARGS__)
#define copysign(...) CUBERT_CUBE_TG2_(copysign, __VA_ARGS__)
#elif defined(__GNUC__) && __GNUC__ >= 8
#define CUBERT_CUBE_TG_(fn, ...) __builtin_tgmath(fn##f, fn, fn##l, __VA_ARGS__)
#undef sqrt
#undef exp
#undef exp2
#undef log
#undef log2
#undef sin
#undef cos
#undef tan
#undef tanh
#undef fabs
#undef floor
#undef ceil
#undef round
#undef trunc
#undef pow
#undef fmin
#undef fmax
#undef copysign
#undef fma
#define sqrt(...) CUBERT_CUBE_TG_(sqrt, __VA_ARGS__)
#define exp(...) CUBERT_CUBE_TG_(exp, __VA_ARGS__)
#define exp2(...) CUBERT_CUBE_TG_(exp2, __VA_ARGS__)
#define log(...) CUBERT_CUBE_TG_(log, __VA_ARGS__)
#define log2(...) CUBERT_CUBE_TG_(log2, __VA_ARGS__)
#define sin(...) CUBERT_CUBE_TG_(sin, __VA_ARGS__)
#define cos(...) CUBERT_CUBE_TG_(cos, __VA_ARGS__)
#define tan(...) CUBERT_CUBE_TG_(tan, __VA_ARGS__)
#define tanh(...) CUBERT_CUBE_TG_(tanh, __VA_ARGS__)
#define fabs(...) CUBERT_CUBE_TG_(fabs, __VA_ARGS__)
#define floor(...) CUBERT_CUBE_TG_(floor, __VA_ARGS__)
#define ceil(...) CUBERT_CUBE_TG_(ceil, __VA_ARGS__)
#define round(...) CUBERT_CUBE_TG_(round, __VA_ARGS__)
#define trunc(...) CUBERT_CUBE_TG_(trunc, __VA_ARGS__)
#define pow(...) CUBERT_CUBE_TG_(pow, __VA_ARGS__)
#define fmin(...) CUBERT_CUBE_TG_(fmin, __VA_ARGS__)
#define fmax(...) CUBERT_CUBE_TG_(fmax, __VA_ARGS__)
#define copysign(...) CUBERT_CUBE_TG_(copysign, __VA_ARGS__)
#define fma(...) CUBERT_CUBE_TG_(fma, __VA_ARGS__)
#endif

/* ---- vectors of float: GCC/clang vector extensions ---- */
/* Passing a 32- or 64-byte vector by value in a build without AVX would have another ABI; these
   functions are always inlined and never cross an ABI boundary. The warning is off for the rest
   of the kernel file (clang warns at each call, GCC still prints a one-time note). */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
/* Loads and stores go through memcpy: any alignment, and no aliasing assumptions. VFMA is a
   lane loop of fmaf, which GCC and clang turn into vector FMA instructions where the build has
   FMA; without it fmaf would be a library call per lane, so it is a * b + c there (as MM_FMA in
   kernels/matmul_common.h). */
#if defined(__FMA__)
#define CUBERT_CUBE_VFMA_LANE_(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define CUBERT_CUBE_VFMA_LANE_(a, b, c) ((a) * (b) + (c))
#endif
#define CUBERT_CUBE_VEC_F32_(n)                                                         \
  typedef float f32x##n __attribute__((vector_size(4 * (n))));                          \
  CUBERT_CUBE_INLINE_ f32x##n cubert_vload_f32x##n##_(const float *p) {                 \
    f32x##n v;                                                                          \
    memcpy(&v, p, sizeof v);                                                            \
    return v;                                                                           \
  }                                                                                     \
  CUBERT_CUBE_INLINE_ void cubert_vstore_f32x##n##_(f32x##n v, float *p) {              \
    memcpy(p, &v, sizeof v);                                                            \
  }                                                                                     \
  CUBERT_CUBE_INLINE_ f32x##n cubert_vsplat_f32x##n##_(float s) {                       \
    return (f32x##n){0} + s;                                                            \
  }                                                                                     \
  CUBERT_CUBE_INLINE_ f32x##n cubert_vfma_f32x##n##_(f32x##n a, f32x##n b, f32x##n c) { \
    f32x##n r;                                                                          \
    for (int i = 0; i < (n); ++i) r[i] = CUBERT_CUBE_VFMA_LANE_(a[i], b[i], c[i]);      \
    return r;                                                                           \
  }
CUBERT_CUBE_VEC_F32_(4)
CUBERT_CUBE_VEC_F32_(8)
CUBERT_CUBE_VEC_F32_(16)
#define VLOAD_F32X4(...) cubert_vload_f32x4_(__VA_ARGS__)
#define VLOAD_F32X8(...) cubert_vload_f32x8_(__VA_ARGS__)
#define VLOAD_F32X16(...) cubert_vload_f32x16_(__VA_ARGS__)
#define VSTORE_F32X4(...) cubert_vstore_f32x4_(__VA_ARGS__)
#define VSTORE_F32X8(...) cubert_vstore_f32x8_(__VA_ARGS__)
#define VSTORE_F32X16(...) cubert_vstore_f32x16_(__VA_ARGS__)
#define VSPLAT_F32X4(...) cubert_vsplat_f32x4_(__VA_ARGS__)
#define VSPLAT_F32X8(...) cubert_vsplat_f32x8_(__VA_ARGS__)
#define VSPLAT_F32X16(...) cubert_vsplat_f32x16_(__VA_ARGS__)
/* Split arguments: refused (CUBERT_CUBE_SPLIT_REFUSED_). */
#define VFMA(...) \
  CUBERT_PP_PICK_(3, CUBERT_CUBE_VFMA_, CUBERT_CUBE_VFMA_SPLIT_, __VA_ARGS__)(__VA_ARGS__)
#define CUBERT_CUBE_VFMA_(a, b, c) CUBERT_CUBE_VFMA_FN_(a)((a), (b), (c))
#define CUBERT_CUBE_VFMA_SPLIT_(...) CUBERT_CUBE_SPLIT_REFUSED_("VFMA")
#define CUBERT_CUBE_VFMA_FN_(a)         \
  _Generic((a), f32x4                   \
           : cubert_vfma_f32x4_, f32x8  \
           : cubert_vfma_f32x8_, f32x16 \
           : cubert_vfma_f32x16_)

/* ---- the generated code ---- */

typedef struct cubert_no_shared_ {
  char unused;
} cubert_no_shared_;

/* Body parameters: the context, compile-time constants (mode, whether LOAD_UNIT/STORE_UNIT are
   known in range, the form), then the unit's position variables. */
/* Every parameter is marked unused: a body uses only some of them, and a user's kernel file
   must build without warnings under -Wall -Wextra -Wpedantic. */
#define CUBERT_CUBE_UNIT_PARAMS_                                                                  \
  CUBERT_CUBE_UNUSED_ const cubert_cpu_ctx *cubert_ctx_,                                          \
      CUBERT_CUBE_UNUSED_ const int cubert_mode_, CUBERT_CUBE_UNUSED_ const int cubert_own_safe_, \
      CUBERT_CUBE_UNUSED_ const int cubert_form_,                                                 \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_in_phase_,                                        \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_id_,                                              \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_rid_,                                             \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_cl_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_ul_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_ux_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_uy_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_uz_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cx_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cy_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cz_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_ax_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_ay_, CUBERT_CUBE_UNUSED_ const uint32_t cubert_az_
#define CUBERT_CUBE_PHASED_PARAMS_                                                                \
  CUBERT_CUBE_UNUSED_ const cubert_cpu_ctx *cubert_ctx_,                                          \
      CUBERT_CUBE_UNUSED_ const int cubert_mode_, CUBERT_CUBE_UNUSED_ const int cubert_own_safe_, \
      CUBERT_CUBE_UNUSED_ const int cubert_form_,                                                 \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_in_phase_,                                        \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_idb_,                                             \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_rid_,                                             \
      CUBERT_CUBE_UNUSED_ const uint64_t cubert_cl_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cx_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cy_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_cz_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_dx_,                                              \
      CUBERT_CUBE_UNUSED_ const uint32_t cubert_dy_, CUBERT_CUBE_UNUSED_ const uint32_t cubert_dz_

#define CUBERT_CUBE_BPARAM_0(i, T, n)                                               \
  , CUBERT_CUBE_UNUSED_ T *restrict n, CUBERT_CUBE_UNUSED_ const uint64_t n##_len_, \
      CUBERT_CUBE_UNUSED_ const uint32_t n##_idx_
#define CUBERT_CUBE_BPARAM_1(i, T, n)
/* A named scalar is a parameter of its type; the dynamic shared array a pointer and its length
   in elements (LEN). */
#define CUBERT_CUBE_BPARAM_2(i, kw, T, n) , CUBERT_CUBE_UNUSED_ T n
#define CUBERT_CUBE_BPARAM_3(i, kw, T, n) \
  , CUBERT_CUBE_UNUSED_ T *n, CUBERT_CUBE_UNUSED_ const uint64_t n##_len_
#define CUBERT_CUBE_BARG_0(i, T, n) , (T *)cubert_b_[i], cubert_n_[i], (uint32_t)(i)
#define CUBERT_CUBE_BARG_2(i, kw, T, n) , n##_sv_
#define CUBERT_CUBE_BARG_3(i, kw, T, n) , n##_dp_, n##_dl_
#define CUBERT_CUBE_BARG_1(i, T, n)
#define CUBERT_CUBE_BLEN_0(i, T, n) \
  cubert_n_[i] = cubert_ctx_->buffer_bytes ? cubert_ctx_->buffer_bytes[i] / sizeof(T) : 0;
#define CUBERT_CUBE_BLEN_1(i, T, n)
/* Scalars from their info words (the client checked that the launch has them all); the dynamic
   shared array after the cube's shared struct (cubert_cpu_ctx). */
#define CUBERT_CUBE_BLEN_2(i, kw, T, n) \
  T n##_sv_ = CUBERT_CUBE_SCALAR_FROM_(T, cubert_ctx_->info[(i)-cubert_lead_]);
#define CUBERT_CUBE_BLEN_3(i, kw, T, n)                                                \
  T *const n##_dp_ =                                                                   \
      (T *)(void *)((char *)cubert_ctx_->shared + cubert_ctx_->dynamic_shared_offset); \
  const uint64_t n##_dl_ = cubert_ctx_->dynamic_shared_bytes / sizeof(T);
#define CUBERT_CUBE_BDECL_0(i, T, n) {#n, #T, (uint32_t)sizeof(T)},
#define CUBERT_CUBE_BDECL_1(i, T, n)
#define CUBERT_CUBE_BDECL_2(i, kw, T, n)
#define CUBERT_CUBE_BDECL_3(i, kw, T, n)
#define CUBERT_CUBE_SDECL_0(i, T, n)
#define CUBERT_CUBE_SDECL_1(i, T, n)
#define CUBERT_CUBE_SDECL_2(i, kw, T, n) {#n, #T, CUBERT_CUBE_SCALAR_KIND_(T), (uint32_t)sizeof(T)},
#define CUBERT_CUBE_SDECL_3(i, kw, T, n)
#define CUBERT_CUBE_DDECL_0(i, T, n)
#define CUBERT_CUBE_DDECL_1(i, T, n)
#define CUBERT_CUBE_DDECL_2(i, kw, T, n)
#define CUBERT_CUBE_DDECL_3(i, kw, T, n) {#n, #T, (uint32_t)sizeof(T)},
/* A named scalar's type: one of the <stdint.h> integers, float or double (kernel.h). */
#define CUBERT_CUBE_SCALAR_KIND_(T)      \
  _Generic((T)0, int8_t                  \
           : CUBERT_SCALAR_I8, uint8_t   \
           : CUBERT_SCALAR_U8, int16_t   \
           : CUBERT_SCALAR_I16, uint16_t \
           : CUBERT_SCALAR_U16, int32_t  \
           : CUBERT_SCALAR_I32, uint32_t \
           : CUBERT_SCALAR_U32, int64_t  \
           : CUBERT_SCALAR_I64, uint64_t \
           : CUBERT_SCALAR_U64, float    \
           : CUBERT_SCALAR_F32, double   \
           : CUBERT_SCALAR_F64, default  \
           : CUBERT_SCALAR_NONE)
#define CUBERT_CUBE_SCHECK_0(i, T, n)
#define CUBERT_CUBE_SCHECK_1(i, T, n)
#define CUBERT_CUBE_SCHECK_2(i, kw, T, n)                             \
  _Static_assert(CUBERT_CUBE_SCALAR_KIND_(T) != CUBERT_SCALAR_NONE,   \
                 "(scalar, " #T ", " #n                               \
                 "): the type of a named scalar is one of int8_t .. " \
                 "uint64_t, float or double");
#define CUBERT_CUBE_SCHECK_3(i, kw, T, n)
/* Shared memory: restrict only in the phased form, whose one call runs the whole cube, so the
   object is reached through this pointer alone; a fiber's other units write it inside
   SYNC_CUBE(), which restrict would let the compiler ignore (cube_opencl.h says the same). */
#define CUBERT_CUBE_SHARED_PARAM_(T, n) , CUBERT_CUBE_UNUSED_ T *n
#define CUBERT_CUBE_SHARED_PARAM_PHASED_(T, n) , CUBERT_CUBE_UNUSED_ T *restrict n
#define CUBERT_CUBE_SHARED_TYPE_(T, n) T

/* Buffer pointers and lengths in elements, read once per call. A launch whose buffer count
   differs from the declaration never gets here (the client refuses it). */
#define CUBERT_CUBE_PROLOGUE_(...)                       \
  enum {                                                 \
    cubert_nb_ = CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__), \
    cubert_lead_ = CUBERT_CUBE_LEAD_COUNT_(__VA_ARGS__)  \
  };                                                     \
  void *const *cubert_b_ = cubert_ctx_->buffers;         \
  uint64_t cubert_n_[cubert_nb_ + 1] = {0};              \
  (void)cubert_b_;                                       \
  (void)cubert_n_;                                       \
  CUBERT_PP_EACH(CUBERT_CUBE_BLEN_, __VA_ARGS__)

/* Hand-written CPU overrides. A kernel file may replace the CPU function of kernel K by one of
   its own, where a benchmark shows it clearly faster, by defining before K:
     #define CUBERT_CPU_OVERRIDE_K ~, 1, my_function
   The definition then runs my_function on the CPU server, and the portable body stays
   reachable as a second definition `<PREFIX>K_portable` (same OpenCL code), which a test
   must cross-check against the override. */
#define CUBERT_PP_SECOND_X_(...) CUBERT_PP_SECOND_(__VA_ARGS__)
#define CUBERT_PP_THIRD_(a, b, c, ...) c
#define CUBERT_PP_THIRD_X_(...) CUBERT_PP_THIRD_(__VA_ARGS__)
#define CUBERT_CUBE_CPU_IMPL_(kname) \
  CUBERT_PP_THIRD_X_(CUBERT_PP_CAT(CUBERT_CPU_OVERRIDE_, kname), ~, kname##_cpu_, ~)
#define CUBERT_CUBE_PORTABLE_DEF_(kname, form_flags, shared_bytes_)                    \
  CUBERT_PP_CAT(CUBERT_CUBE_PORTABLE_DEF_,                                             \
                CUBERT_PP_SECOND_X_(CUBERT_PP_CAT(CUBERT_CPU_OVERRIDE_, kname), 0, ~)) \
  (kname, form_flags, shared_bytes_)
#define CUBERT_CUBE_PORTABLE_DEF_0(kname, form_flags, shared_bytes_)
#define CUBERT_CUBE_PORTABLE_DEF_1(kname, form_flags, shared_bytes_)                      \
  CUBERT_KERNEL_EXPORT extern const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, \
                                                                    kname##_portable);    \
  CUBERT_KERNEL_EXPORT const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX,        \
                                                             kname##_portable) = {        \
      .name = #kname,                                                                     \
      .opencl_source = CUBERT_CUBE_SOURCE_PTR_,                                           \
      .opencl_entry = #kname,                                                             \
      .opencl_options = CUBERT_CUBE_OPENCL_OPTIONS_,                                      \
      .cpu = kname##_cpu_,                                                                \
      .flags = (form_flags) | CUBERT_CUBE_FILE_FLAGS_,                                    \
      .shared_bytes = (shared_bytes_),                                                    \
      .signature = &kname##_signature_,                                                   \
      .cpu_sanitize = CUBERT_CUBE_SAN_REF_(kname),                                        \
      .cpu_sanitize_zero = CUBERT_CUBE_SAN_ZERO_REF_(kname),                              \
  };

/* The signature and the definition object. */
#define CUBERT_CUBE_DEF_(kname, form_flags, shared_bytes_, ...)                                   \
  _Static_assert(CUBERT_CUBE_ORDER_OK_(__VA_ARGS__),                                              \
                 "kernel " #kname                                                                 \
                 ": the parameters come in this order: the (type, name) "                         \
                 "buffers (or NO_BUFFERS), then the (scalar, type, name) entries, then at most "  \
                 "one (dynamic_shared, type, name), last");                                       \
  CUBERT_PP_EACH(CUBERT_CUBE_SCHECK_, __VA_ARGS__)                                                \
  static const cubert_kernel_buffer_decl kname##_decls_[] = {                                     \
      CUBERT_PP_EACH(CUBERT_CUBE_BDECL_, __VA_ARGS__){0, 0, 0}};                                  \
  static const cubert_kernel_scalar_decl kname##_scalars_[] = {                                   \
      CUBERT_PP_EACH(CUBERT_CUBE_SDECL_, __VA_ARGS__){0, 0, 0, 0}};                               \
  static const cubert_kernel_buffer_decl kname##_dynamic_[] = {                                   \
      CUBERT_PP_EACH(CUBERT_CUBE_DDECL_, __VA_ARGS__){0, 0, 0}};                                  \
  CUBERT_CUBE_SAN_DECL_(kname)                                                                    \
  static const cubert_kernel_signature kname##_signature_ = {                                     \
      .buffer_count = CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__),                                     \
      .buffers = kname##_decls_,                                                                  \
      .file = __FILE__,                                                                           \
      .line = __LINE__,                                                                           \
      .scalar_count = CUBERT_CUBE_SCALAR_COUNT_(__VA_ARGS__),                                     \
      .scalars = kname##_scalars_,                                                                \
      .dynamic_shared = CUBERT_CUBE_DYNAMIC_COUNT_(__VA_ARGS__) ? kname##_dynamic_ : 0,           \
  };                                                                                              \
  CUBERT_KERNEL_EXPORT extern const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname); \
  CUBERT_KERNEL_EXPORT const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname) = {     \
      .name = #kname,                                                                             \
      .opencl_source = CUBERT_CUBE_SOURCE_PTR_,                                                   \
      .opencl_entry = #kname,                                                                     \
      .opencl_options = CUBERT_CUBE_OPENCL_OPTIONS_,                                              \
      .cpu = CUBERT_CUBE_CPU_IMPL_(kname),                                                        \
      .flags = (form_flags) | CUBERT_CUBE_FILE_FLAGS_,                                            \
      .shared_bytes = (shared_bytes_),                                                            \
      .signature = &kname##_signature_,                                                           \
      .cpu_sanitize = CUBERT_CUBE_SAN_REF_(kname),                                                \
      .cpu_sanitize_zero = CUBERT_CUBE_SAN_ZERO_REF_(kname),                                      \
  };                                                                                              \
  CUBERT_CUBE_PORTABLE_DEF_(kname, form_flags, shared_bytes_)

/* The last parameter of a UNIT_KERNEL's body (always 0): its type tells SYNC_CUBE() that it is in
   a unit kernel. */
#define CUBERT_CUBE_UNIT_TAG_PARAM_ , CUBERT_CUBE_UNUSED_ struct cubert_form_unit_ *cubert_form_tag_

/* Runs the body over units [begin, end) of a call, in one of three loops:
   - 1-D launches (one row of units per cube, one row of cubes): UNIT_ID is the induction
     variable and x positions are a division away;
   - cubes with short rows (under CUBERT_CUBE_ROW_MIN units along x, e.g. the CPU heuristic's
     (1, cores)): also one flat loop, every position computed from UNIT_ID by divisions that the
     compiler drops when the body does not use them (elementwise kernels use only UNIT_ID);
   - other launches: rows of units along x, the other positions kept as counters.
   Each loop is `omp simd`, so a body of arithmetic and LOAD_UNIT/STORE_UNIT vectorises. */
#define CUBERT_CUBE_ROW_MIN 8
#define CUBERT_CUBE_RUN_(name, mode, safe, begin, end, ...)                                        \
  do {                                                                                             \
    const uint32_t dx_ = cubert_ctx_->cube_dim[0];                                                 \
    if (cubert_flat_) {                                                                            \
      CUBERT_CUBE_PRAGMA_SIMD_                                                                     \
      for (uint64_t id_ = (begin); id_ < (end); ++id_) {                                           \
        CUBERT_CUBE_UNIT_AT_(id_);                                                                 \
        name##_body_(cubert_ctx_, mode, safe, CUBERT_CUBE_FORM_UNIT_, 0, id_, id_, id_ / dx_,      \
                     (uint32_t)(id_ % dx_), (uint32_t)(id_ % dx_), 0, 0, (uint32_t)(id_ / dx_), 0, \
                     0, (uint32_t)id_, 0, 0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), 0);    \
      }                                                                                            \
    } else if (dx_ < CUBERT_CUBE_ROW_MIN) {                                                        \
      const uint32_t *d_ = cubert_ctx_->cube_dim;                                                  \
      CUBERT_CUBE_PRAGMA_SIMD_                                                                     \
      for (uint64_t id_ = (begin); id_ < (end); ++id_) {                                           \
        cubert_cpu_unit_walk p_;                                                                   \
        cubert_cpu_unit_walk_start(cubert_ctx_, id_, &p_);                                         \
        CUBERT_CUBE_UNIT_AT_(id_);                                                                 \
        name##_body_(cubert_ctx_, mode, safe, CUBERT_CUBE_FORM_UNIT_, 0, id_, id_, p_.cl, p_.ul,   \
                     p_.ux, p_.uy, p_.uz, p_.cx, p_.cy, p_.cz, p_.cx *d_[0] + p_.ux,               \
                     p_.cy * d_[1] + p_.uy,                                                        \
                     p_.cz * d_[2] + p_.uz CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), 0);     \
      }                                                                                            \
    } else {                                                                                       \
      cubert_cpu_unit_walk w_;                                                                     \
      cubert_cpu_unit_walk_start(cubert_ctx_, (begin), &w_);                                       \
      for (uint64_t id0_ = (begin); id0_ < (end);) {                                               \
        uint64_t row_ = dx_ - w_.ux;                                                               \
        if (row_ > (end)-id0_) row_ = (end)-id0_;                                                  \
        const uint32_t ux0_ = w_.ux, ul0_ = w_.ul, ax0_ = w_.cx * dx_ + w_.ux;                     \
        CUBERT_CUBE_PRAGMA_SIMD_                                                                   \
        for (uint32_t k_ = 0; k_ < (uint32_t)row_; ++k_) {                                         \
          CUBERT_CUBE_UNIT_AT_(id0_ + k_);                                                         \
          name##_body_(cubert_ctx_, mode, safe, CUBERT_CUBE_FORM_UNIT_, 0, id0_ + k_, id0_ + k_,   \
                       w_.cl, ul0_ + k_, ux0_ + k_, w_.uy, w_.uz, w_.cx, w_.cy, w_.cz, ax0_ + k_,  \
                       w_.cy * cubert_ctx_->cube_dim[1] + w_.uy,                                   \
                       w_.cz * cubert_ctx_->cube_dim[2] +                                          \
                           w_.uz CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__),                   \
                       0);                                                                         \
        }                                                                                          \
        id0_ += row_;                                                                              \
        cubert_cpu_unit_walk_advance(cubert_ctx_, (uint32_t)row_, &w_);                            \
      }                                                                                            \
    }                                                                                              \
  } while (0)

#define UNIT_KERNEL(name, active, ...)                                                             \
  _Static_assert(CUBERT_CUBE_DYNAMIC_COUNT_(__VA_ARGS__) == 0,                                     \
                 "(dynamic_shared, ...) in a UNIT_KERNEL: unit kernels have no shared memory "     \
                 "(use CUBE_KERNEL or PHASED_KERNEL)");                                            \
  CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_UNIT_PARAMS_ CUBERT_PP_EACH(                   \
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_UNIT_TAG_PARAM_);                              \
  CUBERT_CUBE_INLINE_ uint64_t name##_active_(                                                     \
      CUBERT_CUBE_UNUSED_ const cubert_cpu_ctx *cubert_ctx_,                                       \
      CUBERT_CUBE_UNUSED_ const int cubert_mode_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_,               \
                                                                __VA_ARGS__)) {                    \
    return (uint64_t)(active);                                                                     \
  }                                                                                                \
  static void name##_cpu_(const cubert_cpu_ctx *cubert_ctx_) {                                     \
    CUBERT_CUBE_PROLOGUE_(__VA_ARGS__)                                                             \
    const int mode_ = (int)cubert_ctx_->mode;                                                      \
    uint64_t end_ = cubert_ctx_->unit_end, begin_ = cubert_ctx_->unit_begin;                       \
    const uint64_t active_ =                                                                       \
        mode_ == CUBERT_CUBE_UNCHECKED                                                             \
            ? name##_active_(cubert_ctx_,                                                          \
                             CUBERT_CUBE_UNCHECKED CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__)) \
        : mode_ == CUBERT_CUBE_VALIDATE                                                            \
            ? name##_active_(cubert_ctx_,                                                          \
                             CUBERT_CUBE_VALIDATE CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__))  \
            : name##_active_(cubert_ctx_,                                                          \
                             CUBERT_CUBE_CHECKED CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__));  \
    if (end_ > active_) end_ = active_;                                                            \
    if (begin_ >= end_) return;                                                                    \
    const int cubert_flat_ = cubert_cpu_ctx_is_flat(cubert_ctx_);                                  \
    if (mode_ == CUBERT_CUBE_UNCHECKED) {                                                          \
      CUBERT_CUBE_RUN_(name, CUBERT_CUBE_UNCHECKED, 1, begin_, end_, __VA_ARGS__);                 \
      return;                                                                                      \
    }                                                                                              \
    /* Units below the shortest buffer's length cannot take LOAD_UNIT/STORE_UNIT out of            \
       range: they run with those checks removed (and vectorise); the rest check everything. */    \
    uint64_t safe_ = end_;                                                                         \
    for (int i_ = 0; i_ < cubert_nb_; ++i_)                                                        \
      if (cubert_n_[i_] < safe_) safe_ = cubert_n_[i_];                                            \
    if (safe_ < begin_) safe_ = begin_;                                                            \
    if (mode_ == CUBERT_CUBE_VALIDATE) {                                                           \
      CUBERT_CUBE_RUN_(name, CUBERT_CUBE_VALIDATE, 1, begin_, safe_, __VA_ARGS__);                 \
      CUBERT_CUBE_RUN_(name, CUBERT_CUBE_VALIDATE, 0, safe_, end_, __VA_ARGS__);                   \
    } else {                                                                                       \
      CUBERT_CUBE_RUN_(name, CUBERT_CUBE_CHECKED, 1, begin_, safe_, __VA_ARGS__);                  \
      CUBERT_CUBE_RUN_(name, CUBERT_CUBE_CHECKED, 0, safe_, end_, __VA_ARGS__);                    \
    }                                                                                              \
  }                                                                                                \
  CUBERT_CUBE_DEF_(name, 0, 0, __VA_ARGS__)                                                        \
  CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_UNIT_PARAMS_ CUBERT_PP_EACH(                   \
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_UNIT_TAG_PARAM_)

/* Bytes of a shared-memory declaration: 0 for NO_SHARED. */
#define CUBERT_CUBE_SHARED_BYTES_(T, n) ((1 - CUBERT_PP_IS_NONE_(n)) * sizeof(T))

/* The body with the mode as a constant, once per mode, so each copy folds its checks. */
#define CUBERT_CUBE_SWITCH_MODE_(CALL, name, ...)     \
  switch ((int)cubert_ctx_->mode) {                   \
    case CUBERT_CUBE_UNCHECKED:                       \
      CALL(name, CUBERT_CUBE_UNCHECKED, __VA_ARGS__); \
      break;                                          \
    case CUBERT_CUBE_VALIDATE:                        \
      CALL(name, CUBERT_CUBE_VALIDATE, __VA_ARGS__);  \
      break;                                          \
    default:                                          \
      CALL(name, CUBERT_CUBE_CHECKED, __VA_ARGS__);   \
      break;                                          \
  }

/* What both cube forms' CPU functions start with: buffers, the positions of unit_begin (the
   unit, or the cube's first unit), the cube's shared memory and its dims. */
#define CUBERT_CUBE_CUBE_PROLOGUE_(shdecl, ...)                                                  \
  CUBERT_CUBE_PROLOGUE_(__VA_ARGS__)                                                             \
  cubert_cpu_unit_walk w_;                                                                       \
  const uint64_t id_ = cubert_ctx_->unit_begin;                                                  \
  cubert_cpu_unit_walk_start(cubert_ctx_, id_, &w_);                                             \
  CUBERT_CUBE_SHARED_TYPE_ shdecl *sh_ = (CUBERT_CUBE_SHARED_TYPE_ shdecl *)cubert_ctx_->shared; \
  const uint32_t *d_ = cubert_ctx_->cube_dim;

/* Fiber form: the CPU server calls the function once per unit (unit_begin is the unit), each
   unit on its own fiber so that SYNC_CUBE() can switch to the next. */
#define CUBERT_CUBE_FIBER_CALL_(name, mode, ...)                                                \
  name##_body_(cubert_ctx_, mode, 0, CUBERT_CUBE_FORM_FIBER_, 0, id_, id_, w_.cl, w_.ul, w_.ux, \
               w_.uy, w_.uz, w_.cx, w_.cy, w_.cz, w_.cx *d_[0] + w_.ux, w_.cy * d_[1] + w_.uy,  \
               w_.cz * d_[2] + w_.uz CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), sh_)
#define CUBE_KERNEL(name, shdecl, ...)                                                  \
  CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_UNIT_PARAMS_ CUBERT_PP_EACH(        \
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_ shdecl);              \
  static void name##_cpu_(const cubert_cpu_ctx *cubert_ctx_){                           \
      CUBERT_CUBE_CUBE_PROLOGUE_(shdecl, __VA_ARGS__) CUBERT_CUBE_SWITCH_MODE_(         \
          CUBERT_CUBE_FIBER_CALL_, name,                                                \
          __VA_ARGS__)} CUBERT_CUBE_DEF_(name, CUBERT_KERNEL_SYNC_CUBE,                 \
                                         CUBERT_CUBE_SHARED_BYTES_ shdecl, __VA_ARGS__) \
      CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_UNIT_PARAMS_ CUBERT_PP_EACH(    \
          CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_ shdecl)

/* Phased form: the CPU server calls the function once per cube ([unit_begin, unit_begin +
   CUBE_DIM) is the cube); the body runs once, its PHASE blocks loop over the units. */
#define CUBERT_CUBE_PHASED_CALL_(name, mode, ...)                                                \
  name##_body_(cubert_ctx_, mode, 0, CUBERT_CUBE_FORM_PHASED_, 0, id_, id_, w_.cl, w_.cx, w_.cy, \
               w_.cz, d_[0], d_[1], d_[2] CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), sh_)
#define PHASED_KERNEL(name, shdecl, ...)                                                        \
  CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_PHASED_PARAMS_ CUBERT_PP_EACH(              \
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_PHASED_ shdecl);               \
  static void name##_cpu_(const cubert_cpu_ctx *cubert_ctx_) {                                  \
    CUBERT_CUBE_CUBE_PROLOGUE_(shdecl, __VA_ARGS__)                                             \
    /* EXCLUSIVE arrays hold CUBERT_CUBE_MAX_UNITS values (the server's max units per cube). */ \
    if ((uint64_t)d_[0] * d_[1] * d_[2] > CUBERT_CUBE_MAX_UNITS) {                              \
      cubert_cpu_fail(cubert_ctx_, "a phased kernel's cube has more than 1024 units");          \
      return;                                                                                   \
    }                                                                                           \
    CUBERT_CUBE_SWITCH_MODE_(CUBERT_CUBE_PHASED_CALL_, name, __VA_ARGS__)                       \
  }                                                                                             \
  CUBERT_CUBE_DEF_(name, CUBERT_KERNEL_PHASED, CUBERT_CUBE_SHARED_BYTES_ shdecl, __VA_ARGS__)   \
  CUBERT_CUBE_INLINE_ void name##_body_(CUBERT_CUBE_PHASED_PARAMS_ CUBERT_PP_EACH(              \
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_PHASED_ shdecl)

/* ---- the kernel sanitizer (validate mode on the CPU server; docs/debugging.md) ---------------
   cubert_add_kernels compiles every kernel file once more with CUBERT_CUBE_SANITIZE defined and
   GCC's -fsanitize=thread,bounds-strict, whose per-access callbacks it renames to cubert_san_*
   (implemented by the CPU server: backends/cpu/sanitize.c). That copy defines, per kernel, only
   `<prefix><kernel>_sanitize_cpu_`, which the main copy's definition carries as cpu_sanitize
   (CUBERT_CUBE_HAVE_SANITIZE); a second one whose private memory starts zeroed
   (CUBERT_CUBE_SANITIZE_ZERO) defines `<prefix><kernel>_sanitize_zero_cpu_`, carried as
   cpu_sanitize_zero (CUBERT_CUBE_HAVE_SANITIZE_ZERO: the build makes it only for a file that
   declares a private variable without an initialiser). Here the variant tells the sanitizer which
   unit runs: at a fiber's start and after each barrier, and at each unit of a PHASE loop. */
#if defined(CUBERT_CUBE_HAVE_SANITIZE) && !defined(CUBERT_CUBE_SANITIZE)
#ifndef CUBERT_CUBE_SANITIZE_PREFIX
#define CUBERT_CUBE_SANITIZE_PREFIX CUBERT_KERNEL_PREFIX
#endif
#define CUBERT_CUBE_SAN_NAME_(kname) \
  CUBERT_PP_CAT(CUBERT_CUBE_SANITIZE_PREFIX, kname##_sanitize_cpu_)
#define CUBERT_CUBE_SAN_ZERO_NAME_(kname) \
  CUBERT_PP_CAT(CUBERT_CUBE_SANITIZE_PREFIX, kname##_sanitize_zero_cpu_)
#define CUBERT_CUBE_SAN_REF_(kname) CUBERT_CUBE_SAN_NAME_(kname)
#ifdef CUBERT_CUBE_HAVE_SANITIZE_ZERO
#define CUBERT_CUBE_SAN_DECL_(kname)                         \
  void CUBERT_CUBE_SAN_NAME_(kname)(const cubert_cpu_ctx *); \
  void CUBERT_CUBE_SAN_ZERO_NAME_(kname)(const cubert_cpu_ctx *);
#define CUBERT_CUBE_SAN_ZERO_REF_(kname) CUBERT_CUBE_SAN_ZERO_NAME_(kname)
#else
#define CUBERT_CUBE_SAN_DECL_(kname) void CUBERT_CUBE_SAN_NAME_(kname)(const cubert_cpu_ctx *);
#define CUBERT_CUBE_SAN_ZERO_REF_(kname) 0
#endif
#else
#define CUBERT_CUBE_SAN_DECL_(kname)
#define CUBERT_CUBE_SAN_REF_(kname) 0
#define CUBERT_CUBE_SAN_ZERO_REF_(kname) 0
#endif

#if defined(CUBERT_CUBE_SANITIZE)
#include "cubert/sanitize.h"

/* Only validate mode runs this copy. */
#undef CUBERT_CUBE_SWITCH_MODE_
#define CUBERT_CUBE_SWITCH_MODE_(CALL, name, ...) CALL(name, CUBERT_CUBE_VALIDATE, __VA_ARGS__);

/* A PHASE tells where it starts and ends (a unit that returns inside it leaves it open), and
   each unit of its loop. Its units run in the order the sanitizer gives (with
   CUBERT_VALIDATE_SEED a seeded one, so a phased kernel whose result depends on the order of
   its units changes too): one loop over the cube's units, each position derived from the
   unit's linear one. */
#undef PHASE
#define PHASE                                                                            \
  for (int cubert_san_phase_ = (cubert_san_phase_begin(__LINE__), 1); cubert_san_phase_; \
       cubert_san_phase_ = 0, cubert_san_phase_end())                                    \
  CUBERT_CUBE_SAN_PHASE_LOOPS_
#define CUBERT_CUBE_SAN_PHASE_LOOPS_                                                          \
  for (uint32_t cubert_k_ = 0; cubert_k_ < cubert_dx_ * cubert_dy_ * cubert_dz_; ++cubert_k_) \
    for (uint32_t cubert_pl_ = cubert_san_phase_order(cubert_k_),                             \
                  cubert_ux_ = cubert_pl_ % cubert_dx_,                                       \
                  cubert_uy_ = cubert_pl_ / cubert_dx_ % cubert_dy_,                          \
                  cubert_uz_ = cubert_pl_ / cubert_dx_ / cubert_dy_, cubert_po_ = 1;          \
         cubert_po_; cubert_po_ = 0)                                                          \
      for (CUBERT_CUBE_UNUSED_ uint64_t cubert_ul_ = cubert_pl_,                              \
                                        cubert_id_ = cubert_idb_ + cubert_ul_,                \
                                        cubert_rid_ = cubert_id_, cubert_once_ = 1;           \
           cubert_once_; cubert_once_ = 0)                                                    \
        for (CUBERT_CUBE_UNUSED_ uint32_t cubert_ax_ = cubert_cx_ * cubert_dx_ + cubert_ux_,  \
                                          cubert_ay_ = cubert_cy_ * cubert_dy_ + cubert_uy_,  \
                                          cubert_az_ = cubert_cz_ * cubert_dz_ + cubert_uz_,  \
                                          cubert_in_phase_ = CUBERT_CUBE_PU_(cubert_ul_);     \
             cubert_in_phase_; cubert_in_phase_ = 0)
#undef CUBERT_CUBE_PU_
#define CUBERT_CUBE_PU_(ul) cubert_san_phase_unit((uint32_t)(ul))
/* A unit kernel's chunk is one call: each unit starts a new interval of its own. */
#undef CUBERT_CUBE_UNIT_AT_
#define CUBERT_CUBE_UNIT_AT_(id) cubert_san_unit(id)
/* Every unit of the cube, in the sanitizer's order: the body's own test skips the others. */
#undef CUBERT_CUBE_PHASE_BELOW_X_
#define CUBERT_CUBE_PHASE_BELOW_X_(limit) PHASE
#undef CUBERT_CUBE_PHASE_RANGE_
#define CUBERT_CUBE_PHASE_RANGE_(xb, xe, yb, ye) PHASE
#undef CUBERT_CUBE_VERSIONS_
#define CUBERT_CUBE_VERSIONS_ 0

/* A barrier closes the current interval of the sanitizer's race check. */
#undef SYNC_CUBE
#define SYNC_CUBE() cubert_san_sync_(cubert_ctx_, cubert_form_, cubert_in_phase_, __LINE__)
CUBERT_CUBE_INLINE_ void cubert_san_sync_(const cubert_cpu_ctx *ctx, int form, uint64_t in_phase,
                                          uint32_t line) {
  cubert_san_barrier(ctx, line);
  cubert_sync_(ctx, form, in_phase, line);
  cubert_san_resume(ctx);
}

/* A store declared with STORE_SAME or SHARED_STORE_SAME: the sanitizer compares its value with
   what the memory holds and stores it. */
#undef CUBERT_CUBE_BUFFER_SAME_STORE_
#define CUBERT_CUBE_BUFFER_SAME_STORE_(p, v) CUBERT_CUBE_SAME_STORE_(p, v)
#undef CUBERT_CUBE_SAME_STORE_
#define CUBERT_CUBE_SAME_STORE_(p, v)                                    \
  do {                                                                   \
    __typeof__(p) cubert_same_p_ = (p);                                  \
    __typeof__(*cubert_same_p_) cubert_same_v_ = (v);                    \
    cubert_san_store_same(cubert_same_p_, (const void *)&cubert_same_v_, \
                          (uint32_t)sizeof cubert_same_v_);              \
  } while (0)

/* Atomics stay atomic here whatever the main copy makes of them, so the sanitizer sees them. */
#undef SHARED_ATOMIC_ADD
#undef SHARED_ATOMIC_SUB
#undef SHARED_ATOMIC_XCHG
#define SHARED_ATOMIC_ADD(...) __atomic_fetch_add(__VA_ARGS__, __ATOMIC_RELAXED)
#define SHARED_ATOMIC_SUB(...) __atomic_fetch_sub(__VA_ARGS__, __ATOMIC_RELAXED)
#define SHARED_ATOMIC_XCHG(...) __atomic_exchange_n(__VA_ARGS__, __ATOMIC_RELAXED)

/* The definition objects stay in the main copy; this one gives the sanitized CPU function (the
   copy whose private memory starts zeroed, CUBERT_CUBE_SANITIZE_ZERO, another name). */
#ifdef CUBERT_CUBE_SANITIZE_ZERO
#define CUBERT_CUBE_SAN_OWN_(kname) CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname##_sanitize_zero_cpu_)
#else
#define CUBERT_CUBE_SAN_OWN_(kname) CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname##_sanitize_cpu_)
#endif
#undef CUBERT_CUBE_DEF_
#define CUBERT_CUBE_DEF_(kname, form_flags, shared_bytes_, ...) \
  void CUBERT_CUBE_SAN_OWN_(kname)(const cubert_cpu_ctx *);     \
  void CUBERT_CUBE_SAN_OWN_(kname)(const cubert_cpu_ctx *c) {   \
    cubert_san_run(c, kname##_cpu_, (form_flags));              \
  }
#undef CUBERT_CUBE_PORTABLE_DEF_1
#define CUBERT_CUBE_PORTABLE_DEF_1(kname, form_flags, shared_bytes_)
#endif /* CUBERT_CUBE_SANITIZE */

/* Names that are not part of the language are poisoned for the rest of the kernel file, so
   that using one fails the C build at the user's line (with GCC and clang: "attempt to use
   poisoned"), not only when an OpenCL compiler meets the flattened text: `size_t`/`ptrdiff_t`
   (their widths differ between the sides), the C library's I/O and allocation, and `double` in
   a file that has not declared CUBE_NEEDS_FP64. (Variable-length arrays are rejected by
   -Werror=vla, which cubert_add_kernels sets.) Macros defined above may still use them. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC poison size_t ptrdiff_t printf fprintf sprintf snprintf puts malloc calloc realloc
#ifndef CUBE_NEEDS_FP64
#pragma GCC poison double
#endif
#endif
/* The literal rule (docs/kernels.md, "Rules the build enforces"): in a file without
   CUBE_NEEDS_FP64 a floating literal carries the f suffix, since `x * 0.5` computes in double on
   both sides (PoCL and NVIDIA's OpenCL too, silently). GCC rejects every unsuffixed literal of
   the kernel file, and float values promoted to double; clang, which has no warning for the
   literal itself, the promotion (cube_opencl.h sets the same for clang-based OpenCL
   compilers). */
#ifndef CUBE_NEEDS_FP64
#if defined(__clang__)
#pragma clang diagnostic error "-Wdouble-promotion"
#elif defined(__GNUC__)
#pragma GCC diagnostic error "-Wunsuffixed-float-constants"
#pragma GCC diagnostic error "-Wdouble-promotion"
#endif
#endif

#endif /* CUBERT_CUBE_CPU_H */
