/* cubert kernel language: the OpenCL C 1.2 prelude placed in front of every flattened kernel
   file (cubert/cube.h describes the language; docs/kernels.md the calling convention).

   The OpenCL server builds the program with -DCUBERT_MODE=0|1|2 (checked, validate, unchecked)
   and -DCUBERT_OWN_SAFE=1 for launches whose units all lie below every buffer's length.
   Kernels receive:
     cubert_info_  ulong[2 + buffers + user words]: [0] the user's info word count in the low
                   32 bits, the index of the first user word (2 + buffers) in the high 32 bits,
                   [1] the launch's validate tag, [2 .. 2+buffers) each buffer's size in bytes,
                   then the user's words;
     cubert_rec_   uint[16], the validate record of the stream: the first violation wins word 0
                   (atomic_cmpxchg 0 -> 1) and fills the rest:
                   [1] kind (1 buffer, 2 info word, 3 info word above a limit: [2] the word,
                   index the value, length the limit), [2] buffer index, [3..5] unit position,
                   [6..8] cube position, [9..10] index (lo, hi), [11..12] length (lo, hi),
                   [13] the tag of the launch (which kernel). */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef CUBERT_MODE
#define CUBERT_MODE 0
#endif
#define CUBERT_MODE_ CUBERT_MODE
/* 1 in the variant the server builds for launches whose units all lie below every buffer's
   length: LOAD_UNIT/STORE_UNIT are then compiled without their check. */
#ifndef CUBERT_OWN_SAFE
#define CUBERT_OWN_SAFE 0
#endif
#define CUBERT_OWN_SAFE_ CUBERT_OWN_SAFE
/* The bodies' pointer parameters are restrict (cube.h, CUBERT_CL_RESTRICT_), which lets the
   compiler keep values in registers across stores. The server builds with
   -DCUBERT_NO_RESTRICT=1 where the driver cannot take it: Oclgrind 21.10 fails every kernel at
   clCreateKernel ("Undefined external function: llvm.experimental.noalias.scope.decl", the
   intrinsic LLVM's inliner emits when it inlines a function with restrict parameters; only
   -cl-opt-disable, which stops the inlining, avoided it). */
/* UNROLL (cube.h): `#pragma unroll` where the server builds with -DCUBERT_UNROLL_HINTS=1
   (NVIDIA), nothing elsewhere. */
#ifdef CUBERT_UNROLL_HINTS
#define CUBERT_CL_UNROLL_ _Pragma("unroll")
#else
#define CUBERT_CL_UNROLL_
#endif
#ifdef CUBERT_NO_RESTRICT
#define CUBERT_CL_RESTRICT_
#else
#define CUBERT_CL_RESTRICT_ restrict
#endif

typedef uchar uint8_t;
typedef char int8_t;
typedef ushort uint16_t;
typedef short int16_t;
typedef uint uint32_t;
typedef int int32_t;
typedef ulong uint64_t;
typedef long int64_t;
#define UINT8_MAX 0xff
#define UINT16_MAX 0xffff
#define UINT32_MAX 0xffffffffu
#define UINT64_MAX 0xfffffffffffffffful
#define INT32_MAX 0x7fffffff
#define INT32_MIN (-INT32_MAX - 1)
#define INT64_MAX 0x7fffffffffffffffl
#define INT64_MIN (-INT64_MAX - 1)

typedef struct cubert_no_shared_ {
  char unused;
} cubert_no_shared_;

static inline uint cubert_unit_pos_(void) {
  return (uint)(get_local_id(0) +
                get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}
static inline ulong cubert_cube_pos_(void) {
  return (ulong)get_group_id(0) +
         (ulong)get_num_groups(0) *
             ((ulong)get_group_id(1) + (ulong)get_num_groups(1) * (ulong)get_group_id(2));
}
static inline ulong cubert_unit_id_(void) {
  return cubert_cube_pos_() * (ulong)(get_local_size(0) * get_local_size(1) * get_local_size(2)) +
         cubert_unit_pos_();
}

static void cubert_report_(__global const ulong *info, __global uint *rec, uint kind, uint buffer,
                           ulong index, ulong length) {
  if (atomic_cmpxchg(&rec[0], 0u, 1u) != 0u) return;
  rec[13] = (uint)info[1];
  rec[1] = kind;
  rec[2] = buffer;
  rec[3] = (uint)get_local_id(0);
  rec[4] = (uint)get_local_id(1);
  rec[5] = (uint)get_local_id(2);
  rec[6] = (uint)get_group_id(0);
  rec[7] = (uint)get_group_id(1);
  rec[8] = (uint)get_group_id(2);
  rec[9] = (uint)index;
  rec[10] = (uint)(index >> 32);
  rec[11] = (uint)length;
  rec[12] = (uint)(length >> 32);
}

static inline int cubert_chk_(__global const ulong *info, __global uint *rec, int mode, ulong i,
                              ulong len, uint buffer, int rid) {
  if (mode == 2 || i < len) return 1;
  if (mode == 1) cubert_report_(info, rec, 1u, buffer, i, len);
  return 0;
}
static inline ulong cubert_info_word_(__global const ulong *info, __global uint *rec, int mode,
                                      uint k) {
  ulong count = info[0] & 0xffffffffu, base = info[0] >> 32;
  if (mode == 2 || k < count) return info[base + k];
  if (mode == 1) cubert_report_(info, rec, 2u, 0xffffffffu, k, count);
  return 0;
}
/* 1 when info word k is at most `limit`; else 0, and in validate mode a record of kind 3 (for
   a kernel's own guard on its info words, e.g. copy_strided's rank). */
static inline int cubert_info_at_most_(__global const ulong *info, __global uint *rec, int mode,
                                       uint k, ulong limit) {
  ulong v = cubert_info_word_(info, rec, mode, k);
  if (v <= limit) return 1;
  if (mode == 1) cubert_report_(info, rec, 3u, k, v, limit);
  return 0;
}
static inline float cubert_bits_f32_(uint bits) {
  return as_float(bits);
}
#ifdef cl_khr_fp64
static inline double cubert_bits_f64_(ulong bits) {
  return as_double(bits);
}
#endif
/* Buffer and shared-memory atomics (cube.h's ATOMIC_* and SHARED_ATOMIC_*), one overloaded
   name per operation and address space (cubert_gatomic_* on __global, cubert_satomic_* on
   __local): OpenCL 1.2's atomic_* for 32-bit values, the cl_khr_int64_base_atomics /
   _extended_atomics atom_* for 64-bit ones (min and max are the extended ones; the extensions
   cover both address spaces). Where the device lacks an extension the 64-bit overloads are
   declared unavailable, so a kernel that uses one fails to build with this message at its line
   (the server's COMPILATION error names the kernel); a kernel that does not still builds.
   -DCUBERT_NO_INT64_ATOMICS takes them away as on such a device (the tests' way to see the
   error on any device). */
#define CUBERT_CL_OVL_ static inline __attribute__((overloadable))
/* add, sub, xchg and cas on a T in address space AS, named cubert_<pfx>atomic_*_, by OpenCL's
   fn-prefixed functions (atomic_ for 32-bit values, atom_ for 64-bit ones); min and max apart. */
#define CUBERT_CL_BASE_OPS_(T, AS, pfx, fn)                                              \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_add_(volatile AS T *p, T v) {                    \
    return fn##add(p, v);                                                                \
  }                                                                                      \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_sub_(volatile AS T *p, T v) {                    \
    return fn##sub(p, v);                                                                \
  }                                                                                      \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_xchg_(volatile AS T *p, T v) {                   \
    return fn##xchg(p, v);                                                               \
  }                                                                                      \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_cas_(volatile AS T *p, T e, T d) {               \
    return fn##cmpxchg(p, e, d);                                                         \
  }
#define CUBERT_CL_MINMAX_OPS_(T, AS, pfx, fn)                                            \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_min_(volatile AS T *p, T v) {                    \
    return fn##min(p, v);                                                                \
  }                                                                                      \
  CUBERT_CL_OVL_ T cubert_##pfx##atomic_max_(volatile AS T *p, T v) {                    \
    return fn##max(p, v);                                                                \
  }
#define CUBERT_CL_ATOMIC32_(T, AS, pfx) \
  CUBERT_CL_BASE_OPS_(T, AS, pfx, atomic_) CUBERT_CL_MINMAX_OPS_(T, AS, pfx, atomic_)
CUBERT_CL_ATOMIC32_(int, __global, g)
CUBERT_CL_ATOMIC32_(uint, __global, g)
CUBERT_CL_ATOMIC32_(int, __local, s)
CUBERT_CL_ATOMIC32_(uint, __local, s)
#if defined(cl_khr_int64_base_atomics) && !defined(CUBERT_NO_INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define CUBERT_CL_BASE64_(T, AS, pfx, what) CUBERT_CL_BASE_OPS_(T, AS, pfx, atom_)
#define CUBERT_CL_HAVE_BASE64_ 1
#else
#define CUBERT_CL_NO_BASE64_(what)                                                                 \
  __attribute__((overloadable,                                                                     \
                 unavailable(what " needs the OpenCL extension "                                   \
                                  "cl_khr_int64_base_atomics, which this device does not have")))
#define CUBERT_CL_BASE64_(T, AS, pfx, what)                                             \
  T cubert_##pfx##atomic_add_(volatile AS T *p, T v) CUBERT_CL_NO_BASE64_(what);        \
  T cubert_##pfx##atomic_sub_(volatile AS T *p, T v) CUBERT_CL_NO_BASE64_(what);        \
  T cubert_##pfx##atomic_xchg_(volatile AS T *p, T v) CUBERT_CL_NO_BASE64_(what);       \
  T cubert_##pfx##atomic_cas_(volatile AS T *p, T e, T d) CUBERT_CL_NO_BASE64_(what);
#endif
CUBERT_CL_BASE64_(long, __global, g, "ATOMIC_* on 64-bit elements")
CUBERT_CL_BASE64_(ulong, __global, g, "ATOMIC_* on 64-bit elements")
CUBERT_CL_BASE64_(long, __local, s, "SHARED_ATOMIC_* on 64-bit values")
CUBERT_CL_BASE64_(ulong, __local, s, "SHARED_ATOMIC_* on 64-bit values")
#if defined(cl_khr_int64_extended_atomics) && !defined(CUBERT_NO_INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define CUBERT_CL_EXT64_(T, AS, pfx, what) CUBERT_CL_MINMAX_OPS_(T, AS, pfx, atom_)
#else
#define CUBERT_CL_NO_EXT64_(what)                                                                  \
  __attribute__((overloadable,                                                                     \
                 unavailable(what " need the OpenCL extension "                                    \
                                  "cl_khr_int64_extended_atomics, which this device does not "     \
                                  "have")))
#define CUBERT_CL_EXT64_(T, AS, pfx, what)                                              \
  T cubert_##pfx##atomic_min_(volatile AS T *p, T v) CUBERT_CL_NO_EXT64_(what);         \
  T cubert_##pfx##atomic_max_(volatile AS T *p, T v) CUBERT_CL_NO_EXT64_(what);
#endif
CUBERT_CL_EXT64_(long, __global, g, "ATOMIC_MIN / ATOMIC_MAX on 64-bit elements")
CUBERT_CL_EXT64_(ulong, __global, g, "ATOMIC_MIN / ATOMIC_MAX on 64-bit elements")
CUBERT_CL_EXT64_(long, __local, s, "SHARED_ATOMIC_MIN / SHARED_ATOMIC_MAX on 64-bit values")
CUBERT_CL_EXT64_(ulong, __local, s, "SHARED_ATOMIC_MIN / SHARED_ATOMIC_MAX on 64-bit values")
/* ATOMIC_ADD_F64: a compare-exchange loop on the bits (fp64 and 64-bit base atomics). */
#ifdef cl_khr_fp64
#ifdef CUBERT_CL_HAVE_BASE64_
static inline double cubert_atomic_add_f64_(volatile __global double *p, double v) {
  volatile __global ulong *bits = (volatile __global ulong *)p;
  ulong old = *bits, seen;
  while ((seen = atom_cmpxchg(bits, old, as_ulong(as_double(old) + v))) != old) old = seen;
  return as_double(old);
}
#else
double cubert_atomic_add_f64_(volatile __global double *p, double v)
    __attribute__((unavailable("ATOMIC_ADD_F64 needs the OpenCL extension "
                               "cl_khr_int64_base_atomics, which this device does not have")));
#endif
#endif
static inline float cubert_atomic_add_f32_(volatile __global float *p, float v) {
  volatile __global uint *bits = (volatile __global uint *)p;
  uint old = *bits, seen;
  while ((seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v))) != old) old = seen;
  return as_float(old);
}

/* Float atomics on shared memory (SHARED_ATOMIC_*_F32): compare-exchange loops on the bits.
   min and max follow fmin/fmax: a NaN loses to a number (a NaN in memory is replaced by v, a
   NaN v changes nothing); -0 and +0 compare equal, so the zero already stored stays. A value
   that would not change memory is not written (the read it came from is the atomic step). */
static inline float cubert_shared_atomic_add_f32_(volatile __local float *p, float v) {
  volatile __local uint *bits = (volatile __local uint *)p;
  uint old = *bits, seen;
  while ((seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v))) != old) old = seen;
  return as_float(old);
}
static inline float cubert_shared_atomic_min_f32_(volatile __local float *p, float v) {
  volatile __local uint *bits = (volatile __local uint *)p;
  uint old = *bits, seen;
  for (;;) {
    const float f = as_float(old);
    if (!(v < f || f != f)) break;
    if ((seen = atomic_cmpxchg(bits, old, as_uint(v))) == old) break;
    old = seen;
  }
  return as_float(old);
}
static inline float cubert_shared_atomic_max_f32_(volatile __local float *p, float v) {
  volatile __local uint *bits = (volatile __local uint *)p;
  uint old = *bits, seen;
  for (;;) {
    const float f = as_float(old);
    if (!(v > f || f != f)) break;
    if ((seen = atomic_cmpxchg(bits, old, as_uint(v))) == old) break;
    old = seen;
  }
  return as_float(old);
}
