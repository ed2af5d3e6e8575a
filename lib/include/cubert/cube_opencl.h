/** @file
    The kernel language's OpenCL side (cubert/cube.h, which documents every name and includes
    this half when CUBERT_CUBE_OPENCL is defined, as flattening does): everything here expands
    to OpenCL C 1.2; cube_prelude.cl provides the types and helper functions named below.
    Include cubert/cube.h, never this header. */
#ifndef CUBERT_CUBE_H
#error "include cubert/cube.h, which includes this half"
#endif
#ifndef CUBERT_CUBE_OPENCL_H
#define CUBERT_CUBE_OPENCL_H

#ifdef CUBE_NEEDS_FP64
typedef int cubert_needs_fp64_; /* the marker cubert-kernel-check looks for */
#endif

#define CUBE_FN static inline
#define CUBE_GLOBAL __global
#define CUBE_SHARED __local

#define UNIT_POS_X ((uint32_t)get_local_id(0))
#define UNIT_POS_Y ((uint32_t)get_local_id(1))
#define UNIT_POS_Z ((uint32_t)get_local_id(2))
#define UNIT_POS cubert_unit_pos_()
#define CUBE_POS_X ((uint32_t)get_group_id(0))
#define CUBE_POS_Y ((uint32_t)get_group_id(1))
#define CUBE_POS_Z ((uint32_t)get_group_id(2))
#define CUBE_POS cubert_cube_pos_()
#define CUBE_DIM_X ((uint32_t)get_local_size(0))
#define CUBE_DIM_Y ((uint32_t)get_local_size(1))
#define CUBE_DIM_Z ((uint32_t)get_local_size(2))
#define CUBE_DIM (CUBE_DIM_X * CUBE_DIM_Y * CUBE_DIM_Z)
#define CUBE_COUNT_X ((uint32_t)get_num_groups(0))
#define CUBE_COUNT_Y ((uint32_t)get_num_groups(1))
#define CUBE_COUNT_Z ((uint32_t)get_num_groups(2))
#define CUBE_COUNT ((uint64_t)CUBE_COUNT_X * CUBE_COUNT_Y * CUBE_COUNT_Z)
#define ABSOLUTE_POS_X ((uint32_t)get_global_id(0))
#define ABSOLUTE_POS_Y ((uint32_t)get_global_id(1))
#define ABSOLUTE_POS_Z ((uint32_t)get_global_id(2))
#define UNIT_ID cubert_unit_id_()

#define SYNC_CUBE() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define PHASE
/* The prelude defines CUBERT_CL_UNROLL_ (`#pragma unroll` where the server asks for it). */
#define UNROLL CUBERT_CL_UNROLL_
#define EXCLUSIVE(T, name) T name
#define MY(name) (name)
#define EXCLUSIVE_ARRAY(T, name, ...) T name[__VA_ARGS__]
#define MY_AT(name, ...) ((name)[__VA_ARGS__])

/* Macros over one function take `...` and pass it on whole (cube.h, "Whole arguments"). */
/* Shared-memory atomics: cube_prelude.cl's overloads on __local values of 32 bits (atomic_*)
   and 64 bits (atom_*: cl_khr_int64_base/extended_atomics). */
#define SHARED_ATOMIC_ADD(...) cubert_satomic_add_(__VA_ARGS__)
#define SHARED_ATOMIC_SUB(...) cubert_satomic_sub_(__VA_ARGS__)
#define SHARED_ATOMIC_MIN(...) cubert_satomic_min_(__VA_ARGS__)
#define SHARED_ATOMIC_MAX(...) cubert_satomic_max_(__VA_ARGS__)
#define SHARED_ATOMIC_XCHG(...) cubert_satomic_xchg_(__VA_ARGS__)
#define SHARED_ATOMIC_CAS(...) cubert_satomic_cas_(__VA_ARGS__)

/* ---- buffer atomics (ATOMIC_*): OpenCL's atomics on __global memory, overloaded for 32- and
   64-bit elements in cube_prelude.cl (64-bit: cl_khr_int64_base/extended_atomics) ---- */
#define CUBERT_CUBE_GATOMIC_ADD_(p, v) cubert_gatomic_add_((p), (v))
#define CUBERT_CUBE_GATOMIC_SUB_(p, v) cubert_gatomic_sub_((p), (v))
#define CUBERT_CUBE_GATOMIC_MIN_(p, v) cubert_gatomic_min_((p), (v))
#define CUBERT_CUBE_GATOMIC_MAX_(p, v) cubert_gatomic_max_((p), (v))
#define CUBERT_CUBE_GATOMIC_XCHG_(p, v) cubert_gatomic_xchg_((p), (v))
#define CUBERT_CUBE_GATOMIC_CAS_(p, e, d) cubert_gatomic_cas_((p), (e), (d))

/** Float atomics on shared memory: compare-exchange loops (cube_prelude.cl). */
#define SHARED_ATOMIC_ADD_F32(...) cubert_shared_atomic_add_f32_(__VA_ARGS__)
#define SHARED_ATOMIC_MIN_F32(...) cubert_shared_atomic_min_f32_(__VA_ARGS__)
#define SHARED_ATOMIC_MAX_F32(...) cubert_shared_atomic_max_f32_(__VA_ARGS__)

/* ---- cube-level reduce and scan (the C side's block mirrors this one) ----
   Trees over the scratch array with barriers. The reduce folds slots [s, n) onto [0, s) from s
   = the largest power of two below n, so any n works; the scan is Hillis-Steele (log2 n steps
   of two barriers), with the caller's `dst` as each step's temporary, so that the macros need
   no type name (OpenCL C 1.2 has no typeof). Units at or past the scratch's capacity take no
   part: the C side fails such a launch; here its results are unspecified, but nothing outside
   the scratch is touched. */
#define CUBERT_CUBE_RED_SYNC_ barrier(CLK_LOCAL_MEM_FENCE)
#define CUBERT_CUBE_RED_BEGIN_(value, scratch)                                        \
  const uint cubert_cap_ = (uint)(sizeof(scratch) / sizeof((scratch)[0]));            \
  const uint cubert_u_ = cubert_unit_pos_(), cubert_rn_ = min(CUBE_DIM, cubert_cap_); \
  if (cubert_u_ < cubert_rn_) (scratch)[cubert_u_] = (value);                         \
  CUBERT_CUBE_RED_SYNC_
#define CUBERT_CUBE_REDUCE_(OP, value, scratch, dst)                                       \
  do {                                                                                     \
    CUBERT_CUBE_RED_BEGIN_(value, scratch);                                                \
    uint cubert_s_ = 1;                                                                    \
    while (cubert_s_ * 2 < cubert_rn_) cubert_s_ *= 2;                                     \
    for (; cubert_rn_ > 1 && cubert_s_ > 0; cubert_s_ /= 2) {                              \
      if (cubert_u_ < cubert_s_ && cubert_u_ + cubert_s_ < cubert_rn_)                     \
        (scratch)[cubert_u_] = OP((scratch)[cubert_u_], (scratch)[cubert_u_ + cubert_s_]); \
      CUBERT_CUBE_RED_SYNC_;                                                               \
    }                                                                                      \
    (dst) = (scratch)[0];                                                                  \
    CUBERT_CUBE_RED_SYNC_;                                                                 \
  } while (0)
#define CUBERT_CUBE_SCAN_(exclusive, value, scratch, dst)                        \
  do {                                                                           \
    CUBERT_CUBE_RED_BEGIN_(value, scratch);                                      \
    for (uint cubert_o_ = 1; cubert_o_ < cubert_rn_; cubert_o_ *= 2) {           \
      const int cubert_take_ = cubert_u_ >= cubert_o_ && cubert_u_ < cubert_rn_; \
      if (cubert_take_) (dst) = (scratch)[cubert_u_ - cubert_o_];                \
      CUBERT_CUBE_RED_SYNC_;                                                     \
      if (cubert_take_) (scratch)[cubert_u_] += (dst);                           \
      CUBERT_CUBE_RED_SYNC_;                                                     \
    }                                                                            \
    if (cubert_u_ < cubert_rn_) {                                                \
      if (!(exclusive))                                                          \
        (dst) = (scratch)[cubert_u_];                                            \
      else                                                                       \
        (dst) = cubert_u_ > 0 ? (scratch)[cubert_u_ - 1] : 0;                    \
    }                                                                            \
    CUBERT_CUBE_RED_SYNC_;                                                       \
  } while (0)
/* fmin/fmax's rule for every type (a NaN loses to a number), spelled with comparisons because
   OpenCL C 1.2 cannot choose fmin or min by the scratch's type. `a != a + 0` is the NaN test
   (false for every integer) that compilers do not flag as a self-comparison. */
#define CUBERT_CUBE_OP_MIN_(a, b) (((b) < (a) || (a) != (a) + 0) ? (b) : (a))
#define CUBERT_CUBE_OP_MAX_(a, b) (((b) > (a) || (a) != (a) + 0) ? (b) : (a))

/* Vectors of float: OpenCL's own types and built-ins. */
typedef float4 f32x4;
typedef float8 f32x8;
typedef float16 f32x16;
#define VLOAD_F32X4(...) vload4(0, (__VA_ARGS__))
#define VLOAD_F32X8(...) vload8(0, (__VA_ARGS__))
#define VLOAD_F32X16(...) vload16(0, (__VA_ARGS__))
/* vstore puts the offset between the value and the pointer: split arguments go through
   CUBERT_PP_ARG1_OF_2_ / ARG2_OF_2_ (cube.h). */
#define VSTORE_F32X4(...) CUBERT_CUBE_VSTORE_(vstore4, __VA_ARGS__)
#define VSTORE_F32X8(...) CUBERT_CUBE_VSTORE_(vstore8, __VA_ARGS__)
#define VSTORE_F32X16(...) CUBERT_CUBE_VSTORE_(vstore16, __VA_ARGS__)
#define CUBERT_CUBE_VSTORE_(fn, ...)                                                 \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_VSTORE_AT_, CUBERT_CUBE_VSTORE_SPLIT_, __VA_ARGS__) \
  (fn, __VA_ARGS__)
#define CUBERT_CUBE_VSTORE_AT_(fn, v, p) fn((v), 0, (p))
#define CUBERT_CUBE_VSTORE_SPLIT_(fn, ...) \
  fn(CUBERT_PP_ARG1_OF_2_(__VA_ARGS__), 0, CUBERT_PP_ARG2_OF_2_(__VA_ARGS__))
#define VSPLAT_F32X4(...) ((float4)(__VA_ARGS__))
#define VSPLAT_F32X8(...) ((float8)(__VA_ARGS__))
#define VSPLAT_F32X16(...) ((float16)(__VA_ARGS__))
#define VFMA(...) fma(__VA_ARGS__)

/* Every body gets the info words, the validate record, the mode (CUBERT_CL_RESTRICT_: prelude). */
#define CUBERT_CUBE_ENV_ cubert_info_, cubert_rec_
#define CUBERT_CUBE_ENV_PARAMS_                                               \
  __global const ulong *CUBERT_CL_RESTRICT_ cubert_info_,                     \
      __global uint *CUBERT_CL_RESTRICT_ cubert_rec_, const int cubert_mode_, \
      const int cubert_own_safe_
#define CUBERT_CUBE_RID_ const int cubert_rid_

/* Entry parameters: a buffer's pointer; for the dynamic shared array a __local pointer (sized
   by the server's clSetKernelArg) and its size in bytes. Named scalars are info words. */
#define CUBERT_CUBE_KPARAM_0(i, T, n) , __global T *n
#define CUBERT_CUBE_KPARAM_1(i, T, n)
#define CUBERT_CUBE_KPARAM_2(i, kw, T, n)
#define CUBERT_CUBE_KPARAM_3(i, kw, T, n) , __local T *n##_dyn_, const ulong n##_dynb_
/* Body parameters: a buffer's pointer, length, index and its element type's zero (LOAD's value
   out of range: OpenCL C has no typeof to build it from the pointer); a named scalar as a value
   of its type; the dynamic shared array's pointer and length (LEN). */
#define CUBERT_CUBE_BPARAM_0(i, T, n) \
  , __global T *CUBERT_CL_RESTRICT_ n, const uint64_t n##_len_, const uint32_t n##_idx_, T n##_zero_
#define CUBERT_CUBE_BPARAM_1(i, T, n)
#define CUBERT_CUBE_BPARAM_2(i, kw, T, n) , T n
#define CUBERT_CUBE_BPARAM_3(i, kw, T, n) , __local T *n, const uint64_t n##_len_
#define CUBERT_CUBE_BARG_0(i, T, n)                            \
  , n, cubert_info_[2 + (i)] / sizeof(T), (uint32_t)(i), (T) { \
    0                                                          \
  }
#define CUBERT_CUBE_BARG_1(i, T, n)
#define CUBERT_CUBE_BARG_2(i, kw, T, n) \
  , CUBERT_CUBE_SCALAR_FROM_(T, cubert_info_[(cubert_info_[0] >> 32) + (i)-cubert_lead_])
#define CUBERT_CUBE_BARG_3(i, kw, T, n) , n##_dyn_, n##_dynb_ / sizeof(T)
#define CUBERT_CUBE_ZERO_(buf) (buf##_zero_)
/* The entries before the named scalars (cube.h): at the top of every entry point. */
#define CUBERT_CUBE_LEAD_DECL_(...) enum { cubert_lead_ = CUBERT_CUBE_LEAD_COUNT_(__VA_ARGS__) };
/* The shared pointer is never restrict: the cube's other units write the object between
   barriers, which restrict rules out, and NVIDIA's compiler took it at its word (a load of
   shared memory after a barrier read the value from before it: examples/scan.cube.c lost the
   carry between tiles on an H200). Shared memory cannot alias the __global buffers anyway. */
#define CUBERT_CUBE_SHARED_PARAM_(T, n) , __local T *n
#define CUBERT_CUBE_SHARED_DECL_(T, n) \
  __local T cubert_shared_storage_;    \
  __local T *const n = &cubert_shared_storage_;

/* The kernel's entry point: info words, validate record, then the buffers in declaration
   order. The server passes the buffer sizes in bytes in front of the user's info words
   (cube_prelude.cl gives the layout). */
#define CUBERT_CUBE_ENTRY_(name, ...)                    \
  __kernel void name(__global const ulong *cubert_info_, \
                     __global uint *cubert_rec_ CUBERT_PP_EACH(CUBERT_CUBE_KPARAM_, __VA_ARGS__))

#define UNIT_KERNEL(name, active, ...)                                                             \
  static inline void name##_body_(                                                                 \
      CUBERT_CUBE_ENV_PARAMS_, CUBERT_CUBE_RID_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__)); \
  static inline uint64_t name##_active_(                                                           \
      CUBERT_CUBE_ENV_PARAMS_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__)) {                  \
    return (uint64_t)(active);                                                                     \
  }                                                                                                \
  CUBERT_CUBE_ENTRY_(name, __VA_ARGS__) {                                                          \
    CUBERT_CUBE_LEAD_DECL_(__VA_ARGS__)                                                            \
    if (cubert_unit_id_() >= name##_active_(cubert_info_, cubert_rec_, CUBERT_MODE_,               \
                                            0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__)))     \
      return;                                                                                      \
    /* CUBERT_OWN_SAFE: the server built this variant for a launch whose units all lie below       \
       every buffer's length, so LOAD_UNIT/STORE_UNIT need no check (one body, no branch: a        \
       second, checked copy in the same kernel keeps PoCL from vectorising it). */                 \
    name##_body_(cubert_info_, cubert_rec_, CUBERT_MODE_, CUBERT_OWN_SAFE_,                        \
                 0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__));                                \
  }                                                                                                \
  static inline void name##_body_(                                                                 \
      CUBERT_CUBE_ENV_PARAMS_, CUBERT_CUBE_RID_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__))

#define CUBERT_CUBE_KERNEL_OCL_(name, shared, ...)                                               \
  static inline void name##_body_(                                                               \
      CUBERT_CUBE_ENV_PARAMS_, CUBERT_CUBE_RID_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__) \
                                   CUBERT_CUBE_SHARED_PARAM_ shared);                            \
  CUBERT_CUBE_ENTRY_(name, __VA_ARGS__) {                                                        \
    CUBERT_CUBE_LEAD_DECL_(__VA_ARGS__)                                                          \
    CUBERT_CUBE_SHARED_DECL_ shared name##_body_(                                                \
        cubert_info_, cubert_rec_, CUBERT_MODE_, CUBERT_OWN_SAFE_,                               \
        0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), &cubert_shared_storage_);              \
  }                                                                                              \
  static inline void name##_body_(                                                               \
      CUBERT_CUBE_ENV_PARAMS_, CUBERT_CUBE_RID_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__) \
                                   CUBERT_CUBE_SHARED_PARAM_ shared)
#define CUBE_KERNEL(name, shared, ...) CUBERT_CUBE_KERNEL_OCL_(name, shared, __VA_ARGS__)
#define PHASED_KERNEL(name, shared, ...) CUBERT_CUBE_KERNEL_OCL_(name, shared, __VA_ARGS__)

/* The literal rule (cube_cpu.h says why): float values promoted to double are errors in a file
   without CUBE_NEEDS_FP64, for clang-based OpenCL compilers (PoCL, Oclgrind; others ignore
   the pragma, and the C build has checked the same text). */
#ifndef CUBE_NEEDS_FP64
#pragma clang diagnostic error "-Wdouble-promotion"
#endif

#endif /* CUBERT_CUBE_OPENCL_H */
