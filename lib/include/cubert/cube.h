/** @file
   cubert — the kernel language: one C file of kernels for the CPU server and every OpenCL device.
   @verbatim
   A kernel file (`*.cube.c`) includes only this header (and headers of its own that follow the
   same rules). The build uses it twice (cubert_add_kernels in CMake, docs/kernels.md):
   - compiled as C11 for the CPU server, where every kernel becomes a C function over a range of
     units and a `cubert_kernel_def` object carrying both implementations;
   - flattened by the C preprocessor with CUBERT_CUBE_OPENCL defined (`#line` directives kept,
     so OpenCL build errors name this file and line) and prefixed with cubert/cube_prelude.cl,
     which gives OpenCL C 1.2 that is embedded in the binary for the OpenCL server.
   The kernel's body is the same text on both sides; only this header's macros differ.

   ---- Three forms ----------------------------------------------------------------------------

     UNIT_KERNEL(name, active, buffers...) { body }
       No barrier, no shared memory. Units with UNIT_ID < active run the body (`active` is an
       expression of INFO_* and LEN(buffer), evaluated once per call on the CPU and once per unit
       on OpenCL). On the CPU the units of a call are one `#pragma omp simd` loop, so a body of
       arithmetic and LOAD_UNIT/STORE_UNIT vectorises.

     CUBE_KERNEL(name, (SharedType, shared_name) | NO_SHARED, buffers...) { body }
       CUDA-style: the body runs once per unit and may call SYNC_CUBE(). On the CPU a cube's
       units are fibers (cooperative contexts on one thread) switched at each barrier: any body
       is correct, at a few nanoseconds per unit per barrier.

     PHASED_KERNEL(name, (SharedType, shared_name) | NO_SHARED, buffers...) { body }
       The body runs once per *cube*; the work of the units is written in PHASE { ... } blocks,
       separated by SYNC_CUBE(). On the CPU a PHASE is a loop over the cube's units (vectorised
       where the compiler can), so a barrier costs nothing; on OpenCL PHASE is a plain block and
       every unit runs the whole body. Code outside PHASE blocks must be the same for every unit
       of a cube (loop counters, INFO_*, CUBE_POS*); UNIT_* and LOAD/STORE exist only inside
       PHASE blocks. A value a unit keeps across a barrier is declared EXCLUSIVE(type, name) at
       the top of the body and used as MY(name) inside phases (on the CPU an array with one
       element per unit, on OpenCL a private variable).

   `buffers` are `(type, name)` pairs, declared once: `(const float, x), (float, y)`, or
   NO_BUFFERS. Their count and element sizes are checked at every launch on both servers
   (INVALID_ARGUMENT naming the kernel, what it expects and what it got). Shared memory is one
   struct type with compile-time sizes; the CPU's per-cube allocation is sizeof that type.

   ---- Inside a body ----------------------------------------------------------------------------

   Positions (uint32_t unless noted), per axis _X, _Y, _Z, as in cubecl / CUDA / OpenCL:
     UNIT_POS_X..    position in the cube         (OpenCL get_local_id)
     UNIT_POS        linear position in the cube  (x + y*dx + z*dx*dy)
     CUBE_POS_X..    position of the cube         (get_group_id); CUBE_POS: linear, uint64_t
     CUBE_DIM_X..    units per cube per axis      (get_local_size); CUBE_DIM: units per cube
     CUBE_COUNT_X..  cubes per axis               (get_num_groups); CUBE_COUNT: uint64_t
     ABSOLUTE_POS_X.. CUBE_POS_X * CUBE_DIM_X + UNIT_POS_X   (get_global_id)
     UNIT_ID         uint64_t: CUBE_POS * CUBE_DIM + UNIT_POS, the "one unit per element" index
                     that stays dense for any cube count (equals ABSOLUTE_POS_X in 1-D launches)
   Buffers (the execution mode decides what an out-of-range index does, see below):
     LOAD(buf, i) / STORE(buf, i, v)    element i (evaluated more than once: no side effects)
     LOAD_UNIT(buf) / STORE_UNIT(buf, v) element UNIT_ID (the CPU hoists their checks)
     LEN(buf)                            elements in the bound buffer (uint64_t)
   Scalars, from the launch's info words: INFO_U64(k), INFO_I64, INFO_U32 / INFO_I32 (low 32
     bits), INFO_F32 (IEEE bits in the low 32 bits: cubert_kernel_info_f32), INFO_F64.
   Barriers: SYNC_CUBE().
   Atomics on 32-bit buffer elements (int32_t, uint32_t; checked like LOAD; return the old value):
     ATOMIC_ADD(buf, i, v), ATOMIC_SUB, ATOMIC_MIN, ATOMIC_MAX, ATOMIC_XCHG, ATOMIC_CAS(buf, i,
     expected, desired), ATOMIC_ADD_F32(buf, i, v) (float add by compare-exchange).
   Atomics on shared memory through a pointer (int32_t or uint32_t; return the old value):
     SHARED_ATOMIC_ADD(p, v), _SUB, _MIN, _MAX, _XCHG, _CAS(p, expected, desired); on floats
     SHARED_ATOMIC_ADD_F32(p, v), _MIN_F32, _MAX_F32 (min/max follow fmin/fmax: a NaN loses to a
     number; -0 and +0 compare equal, so the zero already stored stays). Atomic on OpenCL (the
     float ones by atomic_cmpxchg on the bits); on the CPU server a cube's units share one thread,
     so they are plain read-modify-writes there, several times cheaper. Shared memory only: a
     pointer into a buffer needs ATOMIC_*.
   Cube-level helpers (CUBE_KERNEL and PHASED_KERNEL, outside any PHASE: they contain barriers
     that every unit of the cube must reach; UNIT_KERNEL has no barriers and cannot use them):
       CUBE_REDUCE_SUM(value, scratch, dst), CUBE_REDUCE_MIN, CUBE_REDUCE_MAX
                                     every unit's dst = the sum / min / max of the cube's values
       CUBE_SCAN_INCLUSIVE_SUM(value, scratch, dst), CUBE_SCAN_EXCLUSIVE_SUM
                                     dst = the sum of the values of units 0 .. UNIT_POS (or
                                     UNIT_POS - 1; 0 for unit 0), in UNIT_POS order
     `value` is the unit's value (evaluated once, before dst is written, so dst may be the same
     variable), `scratch` an array in the shared struct with at least CUBE_DIM elements of the
     element type (float, int32_t, uint32_t, ...; its size is the capacity: a larger cube fails
     the launch on the CPU server, and gives unspecified results on OpenCL), `dst` an lvalue of
     that type. In a PHASED_KERNEL `value` and `dst` are per-unit values: MY(x) of EXCLUSIVE
     variables; in a CUBE_KERNEL ordinary variables: the same kernel text works in both forms.
     The scratch is free for reuse when a helper returns. min/max of floats follow fmin/fmax
     (NaNs lose); integer sums wrap as C's do (undefined for int32_t overflow). On OpenCL a
     work-group tree (reduce) and a Hillis-Steele scan with barriers; on the CPU server one
     serial pass over the scratch per helper.
   Math, same name and meaning on both sides (type-generic like OpenCL's built-ins): sqrt, rsqrt,
     exp, exp2, log, log2, pow, sin, cos, tan, tanh, fabs, floor, ceil, round, trunc, fmin, fmax,
     fma, copysign; min, max, clamp (integers and floats); abs (integers, unsigned result, as
     OpenCL). Floating-point contraction is off on both sides (FP_CONTRACT OFF, -ffp-contract=off),
     so `a * b + c` rounds twice everywhere; write fma() to fuse.
   Helper functions: CUBE_FN in front (static inline); pointer parameters into buffers are
     CUBE_GLOBAL T *, into shared memory CUBE_SHARED T *.
   Types: the <stdint.h> names (int8_t .. uint64_t), float, double (devices with fp64), bool.
   Vectors of float (f32x4, f32x8, f32x16: OpenCL's float4/8/16; GCC/clang vector extensions on
     the C side), for register blocks that a compiler vectorising only inside a unit (PoCL's
     LLVM around inner loops) keeps in vector registers:
       VLOAD_F32X<n>(p), VSTORE_F32X<n>(v, p)  n consecutive floats at p (a buffer, shared or
                                               private pointer; any alignment; unchecked:
                                               bound the range first, as for buf[i])
       VSPLAT_F32X<n>(s)                       every lane s
       VFMA(a, b, c)                           a * b + c per lane, fused on OpenCL and where
                                               the C side is built for a CPU with FMA (else
                                               rounded twice, as `a * b + c`)
     and the operators + - * / between vectors of one type or a vector and a float. No lane
     access (v.s0 / v[0] differ between the sides): store to a private array instead.
   A file whose kernels use double defines CUBE_NEEDS_FP64 before including this header: its
     definitions then carry CUBERT_KERNEL_NEEDS_FP64, so the OpenCL server never builds the
     file's program on a device without cl_khr_fp64 (a launch there is COMPILATION naming the
     kernel; check CUBERT_FEATURE_FP64 first), and cubert-kernel-check skips the file on such
     a device (the flattened text carries the marker `cubert_needs_fp64_`). Keep such kernels
     in a file of their own, apart from kernels every device must run.

   ---- Execution modes (cubert_client_launch_mode, CUBERT_CHECK_MODE) -----------------------------
     checked (default): LOAD/STORE/atomics never leave the buffer: out-of-range reads give 0,
       writes and atomics are dropped; INFO_* past the info words give 0.
     validate: the same, and the first violation is an error at the next sync naming the kernel,
       the buffer, the unit and cube position, the index and the buffer length (on OpenCL through
       a small record the kernel writes and the server reads); on the CPU units of a CUBE_KERNEL
       that reach different barriers (or return while others wait) are reported too.
     unchecked: plain accesses, for kernels whose indices are known good.
   Shared memory and private arrays are not checked: size them with compile-time constants.

   ---- Not part of the language (compiles on one side at best, or differs) -------------------
     vector types other than the f32x<n> above (float4 ..., lane access, swizzles), recursion,
     function pointers, variable-length arrays, mutable globals (file-scope variables other
     than `const`), libc and other headers' functions, pointers to pointers in buffers,
     `size_t`/`long` (their widths differ: use the <stdint.h> names), 64-bit atomics, barriers
     that not every unit of a cube reaches (divergent barriers), and side effects inside
     LOAD/STORE index expressions.
   The build rejects what it can at the file's line (docs/kernels.md, "Rules the build
   enforces"): SYNC_CUBE() in a UNIT_KERNEL or inside a PHASE (static assertions), size_t,
   ptrdiff_t, printf, malloc and, without CUBE_NEEDS_FP64, double (poisoned at the end of this
   header), variable-length arrays (-Werror=vla), and with CUBERT_CHECK_KERNELS whatever an
   OpenCL compiler rejects.

   This header defines short upper-case names (UNIT_POS_X, LOAD, PHASE, ...) and the math names
   above; include it only in kernel files.
   @endverbatim */
#ifndef CUBERT_CUBE_H
#define CUBERT_CUBE_H

/* ---- reference: one entry per name of the language -------------------------------------------
   The macros below are defined twice, once per side (OpenCL and C); each is documented here once
   for the API reference (docs/api.md). */

/** @def UNIT_KERNEL(name, active, buffers...)
    Defines the unit kernel `name` (no barrier, no shared memory) over `buffers`, `(type, name)`
    pairs or NO_BUFFERS; the body follows in braces. Units with UNIT_ID < `active` run it. */
/** @def CUBE_KERNEL(name, shared, buffers...)
    Defines the cube kernel `name`, whose body runs once per unit and may call SYNC_CUBE();
    `shared` is `(SharedType, shared_name)` or NO_SHARED. */
/** @def PHASED_KERNEL(name, shared, buffers...)
    Defines the phased kernel `name`, whose body runs once per cube; the units' work is written
    in PHASE blocks separated by SYNC_CUBE(). `shared` as for CUBE_KERNEL. */
/** @def NO_BUFFERS
    The buffer list of a kernel without buffers. */
/** @def NO_SHARED
    The shared-memory declaration of a kernel without shared memory. */
/** @def CUBERT_KERNEL_PREFIX
    Prefix of the definitions' names: `const cubert_kernel_def <PREFIX><name>` (default: none;
    the library uses `cubert_kernel_`). Define before including this header. */
/** @def CUBERT_KERNEL_EXPORT
    Storage decoration of the definitions (default: none, the target's default visibility). */

/** @def UNIT_POS_X
    Position of the unit in its cube along x (uint32_t; OpenCL get_local_id(0)). */
/** @def UNIT_POS_Y
    Position of the unit in its cube along y. */
/** @def UNIT_POS_Z
    Position of the unit in its cube along z. */
/** @def UNIT_POS
    Linear position of the unit in its cube: x + y*dx + z*dx*dy. */
/** @def CUBE_POS_X
    Position of the cube along x (uint32_t; OpenCL get_group_id(0)). */
/** @def CUBE_POS_Y
    Position of the cube along y. */
/** @def CUBE_POS_Z
    Position of the cube along z. */
/** @def CUBE_POS
    Linear position of the cube (uint64_t). */
/** @def CUBE_DIM_X
    Units per cube along x (uint32_t; OpenCL get_local_size(0)). */
/** @def CUBE_DIM_Y
    Units per cube along y. */
/** @def CUBE_DIM_Z
    Units per cube along z. */
/** @def CUBE_DIM
    Units per cube. */
/** @def CUBE_COUNT_X
    Cubes of the launch along x (uint32_t; OpenCL get_num_groups(0)). */
/** @def CUBE_COUNT_Y
    Cubes of the launch along y. */
/** @def CUBE_COUNT_Z
    Cubes of the launch along z. */
/** @def CUBE_COUNT
    Cubes of the launch (uint64_t). */
/** @def ABSOLUTE_POS_X
    CUBE_POS_X * CUBE_DIM_X + UNIT_POS_X (uint32_t; OpenCL get_global_id(0)). */
/** @def ABSOLUTE_POS_Y
    CUBE_POS_Y * CUBE_DIM_Y + UNIT_POS_Y. */
/** @def ABSOLUTE_POS_Z
    CUBE_POS_Z * CUBE_DIM_Z + UNIT_POS_Z. */
/** @def UNIT_ID
    The unit's global id, CUBE_POS * CUBE_DIM + UNIT_POS (uint64_t): the "one unit per element"
    index, dense for any cube count (ABSOLUTE_POS_X in 1-D launches). */

/** @def LOAD(buf, i)
    Element `i` of buffer `buf`; out of range: 0 (checked, validate), undefined (unchecked).
    `i` is evaluated more than once. */
/** @def STORE(buf, i, v)
    Writes `v` to element `i` of buffer `buf`; dropped out of range (checked, validate). */
/** @def LOAD_UNIT(buf)
    LOAD(buf, UNIT_ID), with the range check hoisted out of the CPU loop. */
/** @def STORE_UNIT(buf, v)
    STORE(buf, UNIT_ID, v), with the range check hoisted out of the CPU loop. */
/** @def LEN(buf)
    Elements in the buffer bound to `buf` (uint64_t). */
/** @def INFO_U64(k)
    Info word `k` (uint64_t); 0 past the launch's words (checked, validate). */
/** @def INFO_I64(k)
    Info word `k` as int64_t. */
/** @def INFO_U32(k)
    Low 32 bits of info word `k` (uint32_t). */
/** @def INFO_I32(k)
    Low 32 bits of info word `k` as int32_t. */
/** @def INFO_F32(k)
    Info word `k` as a float: IEEE bits in the low 32 bits (cubert_kernel_info_f32). */
/** @def INFO_F64(k)
    Info word `k` as a double (its IEEE bits). */

/** @def SYNC_CUBE()
    Cube barrier: every unit of the cube reaches it before any goes on (CUBE_KERNEL; between
    the PHASE blocks of a PHASED_KERNEL). */
/** @def PHASE
    Runs the block that follows once per unit of the cube (PHASED_KERNEL only). */
/** @def EXCLUSIVE(T, name)
    Declares a value of type `T` that each unit keeps across barriers (PHASED_KERNEL, at the
    top of the body); used as MY(name) inside phases. */
/** @def MY(name)
    The calling unit's value of EXCLUSIVE `name`. */
/** @def EXCLUSIVE_ARRAY(T, name, n)
    `n` values of type `T` per unit (n a compile-time constant), for register blocks. */
/** @def MY_AT(name, i)
    The calling unit's element `i` of EXCLUSIVE_ARRAY `name`. */

/** @def ATOMIC_ADD(buf, i, v)
    Atomically adds `v` to element `i` of a 32-bit integer buffer; returns the old value
    (checked like LOAD: 0 and no effect out of range). */
/** @def ATOMIC_SUB(buf, i, v)
    As ATOMIC_ADD, subtracting. */
/** @def ATOMIC_MIN(buf, i, v)
    As ATOMIC_ADD, keeping the minimum. */
/** @def ATOMIC_MAX(buf, i, v)
    As ATOMIC_ADD, keeping the maximum. */
/** @def ATOMIC_XCHG(buf, i, v)
    As ATOMIC_ADD, replacing the element by `v`. */
/** @def ATOMIC_CAS(buf, i, e, d)
    As ATOMIC_ADD, writing `d` where the element equals `e`. */
/** @def ATOMIC_ADD_F32(buf, i, v)
    Atomically adds `v` to element `i` of a float buffer (compare-exchange); returns the old
    value. */
/** @def SHARED_ATOMIC_ADD(p, v)
    Atomically adds `v` to the int32_t or uint32_t at `p` (shared memory); returns the old
    value. */
/** @def SHARED_ATOMIC_SUB(p, v)
    As SHARED_ATOMIC_ADD, subtracting. */
/** @def SHARED_ATOMIC_MIN(p, v)
    As SHARED_ATOMIC_ADD, keeping the minimum. */
/** @def SHARED_ATOMIC_MAX(p, v)
    As SHARED_ATOMIC_ADD, keeping the maximum. */
/** @def SHARED_ATOMIC_XCHG(p, v)
    As SHARED_ATOMIC_ADD, replacing the value by `v`. */
/** @def SHARED_ATOMIC_CAS(p, e, d)
    As SHARED_ATOMIC_ADD, writing `d` where the value equals `e`. */
/** @def SHARED_ATOMIC_ADD_F32(p, v)
    Atomically adds `v` to the float at `p` (shared memory); returns the old value. On the CPU
    server a plain read-modify-write (a cube's units share one thread), on OpenCL a
    compare-exchange loop. */
/** @def SHARED_ATOMIC_MIN_F32(p, v)
    As SHARED_ATOMIC_ADD_F32, keeping fmin of the two (a NaN loses to a number). */
/** @def SHARED_ATOMIC_MAX_F32(p, v)
    As SHARED_ATOMIC_ADD_F32, keeping fmax of the two (a NaN loses to a number). */
/** @def CUBE_REDUCE_SUM(value, scratch, dst)
    Every unit of the cube gets the sum of all units' `value` in `dst` (CUBE_KERNEL: plain
    variables; PHASED_KERNEL: MY(x), outside PHASE blocks). `scratch` is a shared array of at
    least CUBE_DIM elements of the value's type; f32, i32, u32 (and 64-bit integers). A barrier:
    every unit must reach it. docs/kernels.md, "Cube-level helpers". */
/** @def CUBE_REDUCE_MIN(value, scratch, dst)
    As CUBE_REDUCE_SUM, the minimum. */
/** @def CUBE_REDUCE_MAX(value, scratch, dst)
    As CUBE_REDUCE_SUM, the maximum. */
/** @def CUBE_SCAN_INCLUSIVE_SUM(value, scratch, dst)
    Unit u gets the sum of `value` over units 0..u (by UNIT_POS) in `dst`; as CUBE_REDUCE_SUM
    otherwise. */
/** @def CUBE_SCAN_EXCLUSIVE_SUM(value, scratch, dst)
    Unit u gets the sum of `value` over units 0..u-1 (0 for unit 0) in `dst`. */

/** @def min(a, b)
    The smaller of two numbers of one type (integers or floats), as OpenCL's min. */
/** @def max(a, b)
    The larger of two numbers of one type, as OpenCL's max. */
/** @def clamp(x, lo, hi)
    min(max(x, lo), hi), as OpenCL's clamp. */
/** @def abs(x)
    Absolute value of an integer, as an unsigned integer of its width (as OpenCL). */
/** @def rsqrt(x)
    1 / sqrt(x). */

/** @def CUBE_FN
    Put in front of a helper function (static inline). */
/** @def CUBE_GLOBAL
    Qualifies a helper's pointer parameter into a buffer (OpenCL __global). */
/** @def CUBE_SHARED
    Qualifies a helper's pointer parameter into shared memory (OpenCL __local). */

/** @def VLOAD_F32X4(p)
    4 consecutive floats at `p` as an f32x4 (any alignment; unchecked). */
/** @def VLOAD_F32X8(p)
    8 consecutive floats at `p` as an f32x8. */
/** @def VLOAD_F32X16(p)
    16 consecutive floats at `p` as an f32x16. */
/** @def VSTORE_F32X4(v, p)
    Stores the f32x4 `v` to 4 consecutive floats at `p` (any alignment; unchecked). */
/** @def VSTORE_F32X8(v, p)
    Stores the f32x8 `v` to 8 consecutive floats at `p`. */
/** @def VSTORE_F32X16(v, p)
    Stores the f32x16 `v` to 16 consecutive floats at `p`. */
/** @def VSPLAT_F32X4(s)
    An f32x4 with every lane `s`. */
/** @def VSPLAT_F32X8(s)
    An f32x8 with every lane `s`. */
/** @def VSPLAT_F32X16(s)
    An f32x16 with every lane `s`. */
/** @def VFMA(a, b, c)
    a * b + c per lane of three vectors of one type; fused on OpenCL and where the C side is
    built with FMA, else rounded twice. */

/* ---- preprocessor plumbing (both sides) ----------------------------------------------------- */

#define CUBERT_PP_CAT(a, b) CUBERT_PP_CAT_(a, b)
#define CUBERT_PP_CAT_(a, b) a##b
#define CUBERT_PP_STR(x) CUBERT_PP_STR_(x)
#define CUBERT_PP_STR_(x) #x
#define CUBERT_PP_UNPAREN_(...) __VA_ARGS__
#define CUBERT_PP_NARGS(...) \
  CUBERT_PP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CUBERT_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, \
                         ...)                                                                      \
  n
/* M(index, type, name) for each (type, name) pair; NO_BUFFERS pairs produce nothing. */
#define CUBERT_PP_EACH(M, ...) \
  CUBERT_PP_CAT(CUBERT_PP_EACH_, CUBERT_PP_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define CUBERT_PP_ONE_(M, i, pair) CUBERT_PP_ONE2_(M, i, CUBERT_PP_UNPAREN_ pair)
#define CUBERT_PP_ONE2_(M, i, ...) CUBERT_PP_ONE3_(M, i, __VA_ARGS__)
#define CUBERT_PP_ONE3_(M, i, T, n) CUBERT_PP_CAT(M, CUBERT_PP_IS_NONE_(n))(i, T, n)
#define CUBERT_PP_SECOND_(a, b, ...) b
#define CUBERT_PP_IS_PROBE_(...) CUBERT_PP_SECOND_(__VA_ARGS__, 0, ~)
#define CUBERT_PP_PROBE_cubert_none_ ~, 1
#define CUBERT_PP_PROBE_cubert_no_shared_ptr_ ~, 1
#define CUBERT_PP_IS_NONE_(n) CUBERT_PP_IS_PROBE_(CUBERT_PP_CAT(CUBERT_PP_PROBE_, n))
#define CUBERT_PP_EACH_1(M, a) CUBERT_PP_ONE_(M, 0, a)
#define CUBERT_PP_EACH_2(M, a, b) CUBERT_PP_ONE_(M, 0, a) CUBERT_PP_ONE_(M, 1, b)
#define CUBERT_PP_EACH_3(M, a, b, c) CUBERT_PP_EACH_2(M, a, b) CUBERT_PP_ONE_(M, 2, c)
#define CUBERT_PP_EACH_4(M, a, b, c, d) CUBERT_PP_EACH_3(M, a, b, c) CUBERT_PP_ONE_(M, 3, d)
#define CUBERT_PP_EACH_5(M, a, b, c, d, e) CUBERT_PP_EACH_4(M, a, b, c, d) CUBERT_PP_ONE_(M, 4, e)
#define CUBERT_PP_EACH_6(M, a, b, c, d, e, f) \
  CUBERT_PP_EACH_5(M, a, b, c, d, e) CUBERT_PP_ONE_(M, 5, f)
#define CUBERT_PP_EACH_7(M, a, b, c, d, e, f, g) \
  CUBERT_PP_EACH_6(M, a, b, c, d, e, f) CUBERT_PP_ONE_(M, 6, g)
#define CUBERT_PP_EACH_8(M, a, b, c, d, e, f, g, h) \
  CUBERT_PP_EACH_7(M, a, b, c, d, e, f, g) CUBERT_PP_ONE_(M, 7, h)
#define CUBERT_PP_EACH_9(M, a, b, c, d, e, f, g, h, i) \
  CUBERT_PP_EACH_8(M, a, b, c, d, e, f, g, h) CUBERT_PP_ONE_(M, 8, i)
#define CUBERT_PP_EACH_10(M, a, b, c, d, e, f, g, h, i, j) \
  CUBERT_PP_EACH_9(M, a, b, c, d, e, f, g, h, i) CUBERT_PP_ONE_(M, 9, j)
#define CUBERT_PP_EACH_11(M, a, b, c, d, e, f, g, h, i, j, k) \
  CUBERT_PP_EACH_10(M, a, b, c, d, e, f, g, h, i, j) CUBERT_PP_ONE_(M, 10, k)
#define CUBERT_PP_EACH_12(M, a, b, c, d, e, f, g, h, i, j, k, l) \
  CUBERT_PP_EACH_11(M, a, b, c, d, e, f, g, h, i, j, k) CUBERT_PP_ONE_(M, 11, l)
#define CUBERT_PP_EACH_13(M, a, b, c, d, e, f, g, h, i, j, k, l, m) \
  CUBERT_PP_EACH_12(M, a, b, c, d, e, f, g, h, i, j, k, l) CUBERT_PP_ONE_(M, 12, m)
#define CUBERT_PP_EACH_14(M, a, b, c, d, e, f, g, h, i, j, k, l, m, n) \
  CUBERT_PP_EACH_13(M, a, b, c, d, e, f, g, h, i, j, k, l, m) CUBERT_PP_ONE_(M, 13, n)
#define CUBERT_PP_EACH_15(M, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o) \
  CUBERT_PP_EACH_14(M, a, b, c, d, e, f, g, h, i, j, k, l, m, n) CUBERT_PP_ONE_(M, 14, o)
#define CUBERT_PP_EACH_16(M, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
  CUBERT_PP_EACH_15(M, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o) CUBERT_PP_ONE_(M, 15, p)

/* The buffer list of a kernel without buffers. */
#define NO_BUFFERS (cubert_none_, cubert_none_)
/* The shared-memory declaration of a kernel without shared memory. */
#define NO_SHARED (cubert_no_shared_, cubert_no_shared_ptr_)

/* Execution modes as the kernels see them (the values of cubert_execution_mode). */
#define CUBERT_CUBE_CHECKED 0
#define CUBERT_CUBE_VALIDATE 1
#define CUBERT_CUBE_UNCHECKED 2

/* Number of (type, name) pairs, NO_BUFFERS counting 0. */
#define CUBERT_CUBE_COUNT1_0(i, T, n) +1
#define CUBERT_CUBE_COUNT1_1(i, T, n)
#define CUBERT_CUBE_BUFFER_COUNT_(...) (0 CUBERT_PP_EACH(CUBERT_CUBE_COUNT1_, __VA_ARGS__))

/* Checked accesses, spelled alike on both sides. cubert_chk_ is true when the access may go
   ahead; its arguments name the violation for validate mode. */
#define CUBERT_CUBE_OK_(buf, i) \
  cubert_chk_(CUBERT_CUBE_ENV_, cubert_mode_, (uint64_t)(i), buf##_len_, buf##_idx_, cubert_rid_)
#define LOAD(buf, i) (CUBERT_CUBE_OK_(buf, i) ? (buf)[i] : 0)
#define STORE(buf, i, v)                         \
  do {                                           \
    if (CUBERT_CUBE_OK_(buf, i)) (buf)[i] = (v); \
  } while (0)
#define LOAD_UNIT(buf) ((cubert_own_safe_ || CUBERT_CUBE_OK_(buf, UNIT_ID)) ? (buf)[UNIT_ID] : 0)
#define STORE_UNIT(buf, v)                                                       \
  do {                                                                           \
    if (cubert_own_safe_ || CUBERT_CUBE_OK_(buf, UNIT_ID)) (buf)[UNIT_ID] = (v); \
  } while (0)
#define LEN(buf) (buf##_len_)

#define INFO_U64(k) cubert_info_word_(CUBERT_CUBE_ENV_, cubert_mode_, (uint32_t)(k))
#define INFO_I64(k) ((int64_t)INFO_U64(k))
#define INFO_U32(k) ((uint32_t)INFO_U64(k))
#define INFO_I32(k) ((int32_t)(uint32_t)INFO_U64(k))
#define INFO_F32(k) cubert_bits_f32_((uint32_t)INFO_U64(k))
#define INFO_F64(k) cubert_bits_f64_(INFO_U64(k))

/* Buffer atomics are atomic on both sides (a launch's cubes run on several threads of the CPU
   server): CUBERT_CUBE_GATOMIC_*_, defined per side below. SHARED_ATOMIC_* are not the same
   operations on the CPU server (see "shared-memory atomics" on the C side). */
#define ATOMIC_ADD(buf, i, v) (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_ADD_(&(buf)[i], v) : 0)
#define ATOMIC_SUB(buf, i, v) (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_SUB_(&(buf)[i], v) : 0)
#define ATOMIC_MIN(buf, i, v) (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_MIN_(&(buf)[i], v) : 0)
#define ATOMIC_MAX(buf, i, v) (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_MAX_(&(buf)[i], v) : 0)
#define ATOMIC_XCHG(buf, i, v) \
  (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_XCHG_(&(buf)[i], v) : 0)
#define ATOMIC_CAS(buf, i, e, d) \
  (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_CAS_(&(buf)[i], e, d) : 0)
#define ATOMIC_ADD_F32(buf, i, v) \
  (CUBERT_CUBE_OK_(buf, i) ? cubert_atomic_add_f32_(&(buf)[i], (v)) : 0.0f)

/* =============================================================================================
   OpenCL side (flattening). Everything here expands to OpenCL C 1.2; cube_prelude.cl provides
   the types and helper functions named below.
   ============================================================================================= */
/* Flags every definition of this file carries (CUBE_NEEDS_FP64, above). */
#ifdef CUBE_NEEDS_FP64
#define CUBERT_CUBE_FILE_FLAGS_ CUBERT_KERNEL_NEEDS_FP64
#else
#define CUBERT_CUBE_FILE_FLAGS_ 0
#endif

#if defined(CUBERT_CUBE_OPENCL)

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
#define EXCLUSIVE(T, name) T name
#define MY(name) (name)
#define EXCLUSIVE_ARRAY(T, name, n) T name[n]
#define MY_AT(name, i) ((name)[i])

#define SHARED_ATOMIC_ADD(p, v) atomic_add((p), (v))
#define SHARED_ATOMIC_SUB(p, v) atomic_sub((p), (v))
#define SHARED_ATOMIC_MIN(p, v) atomic_min((p), (v))
#define SHARED_ATOMIC_MAX(p, v) atomic_max((p), (v))
#define SHARED_ATOMIC_XCHG(p, v) atomic_xchg((p), (v))
#define SHARED_ATOMIC_CAS(p, e, d) atomic_cmpxchg((p), (e), (d))

/* ---- buffer atomics (ATOMIC_*): OpenCL's atomics on __global memory ---- */
#define CUBERT_CUBE_GATOMIC_ADD_(p, v) atomic_add((p), (v))
#define CUBERT_CUBE_GATOMIC_SUB_(p, v) atomic_sub((p), (v))
#define CUBERT_CUBE_GATOMIC_MIN_(p, v) atomic_min((p), (v))
#define CUBERT_CUBE_GATOMIC_MAX_(p, v) atomic_max((p), (v))
#define CUBERT_CUBE_GATOMIC_XCHG_(p, v) atomic_xchg((p), (v))
#define CUBERT_CUBE_GATOMIC_CAS_(p, e, d) atomic_cmpxchg((p), (e), (d))

/** Float atomics on shared memory: compare-exchange loops (cube_prelude.cl). */
#define SHARED_ATOMIC_ADD_F32(p, v) cubert_shared_atomic_add_f32_((p), (v))
#define SHARED_ATOMIC_MIN_F32(p, v) cubert_shared_atomic_min_f32_((p), (v))
#define SHARED_ATOMIC_MAX_F32(p, v) cubert_shared_atomic_max_f32_((p), (v))

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
#define CUBERT_CUBE_OP_SUM_(a, b) ((a) + (b))
/* fmin/fmax's rule for every type (a NaN loses to a number), spelled with comparisons because
   OpenCL C 1.2 cannot choose fmin or min by the scratch's type. `a != a + 0` is the NaN test
   (false for every integer) that compilers do not flag as a self-comparison. */
#define CUBERT_CUBE_OP_MIN_(a, b) (((b) < (a) || (a) != (a) + 0) ? (b) : (a))
#define CUBERT_CUBE_OP_MAX_(a, b) (((b) > (a) || (a) != (a) + 0) ? (b) : (a))
/* Cube-level reduce and scan (docs/kernels.md, "Cube-level helpers"). */
#define CUBE_REDUCE_SUM(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_SUM_, value, scratch, dst)
#define CUBE_REDUCE_MIN(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_MIN_, value, scratch, dst)
#define CUBE_REDUCE_MAX(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_MAX_, value, scratch, dst)
#define CUBE_SCAN_INCLUSIVE_SUM(value, scratch, dst) CUBERT_CUBE_SCAN_(0, value, scratch, dst)
#define CUBE_SCAN_EXCLUSIVE_SUM(value, scratch, dst) CUBERT_CUBE_SCAN_(1, value, scratch, dst)

/* Vectors of float: OpenCL's own types and built-ins. */
typedef float4 f32x4;
typedef float8 f32x8;
typedef float16 f32x16;
#define VLOAD_F32X4(p) vload4(0, (p))
#define VLOAD_F32X8(p) vload8(0, (p))
#define VLOAD_F32X16(p) vload16(0, (p))
#define VSTORE_F32X4(v, p) vstore4((v), 0, (p))
#define VSTORE_F32X8(v, p) vstore8((v), 0, (p))
#define VSTORE_F32X16(v, p) vstore16((v), 0, (p))
#define VSPLAT_F32X4(s) ((float4)(s))
#define VSPLAT_F32X8(s) ((float8)(s))
#define VSPLAT_F32X16(s) ((float16)(s))
#define VFMA(a, b, c) fma((a), (b), (c))

/* Every body gets the info words, the validate record, the mode (CUBERT_CL_RESTRICT_: prelude). */
#define CUBERT_CUBE_ENV_ cubert_info_, cubert_rec_
#define CUBERT_CUBE_ENV_PARAMS_                                               \
  __global const ulong *CUBERT_CL_RESTRICT_ cubert_info_,                     \
      __global uint *CUBERT_CL_RESTRICT_ cubert_rec_, const int cubert_mode_, \
      const int cubert_own_safe_
#define CUBERT_CUBE_RID_ const int cubert_rid_

#define CUBERT_CUBE_KPARAM_0(i, T, n) , __global T *n
#define CUBERT_CUBE_KPARAM_1(i, T, n)
#define CUBERT_CUBE_BPARAM_0(i, T, n) \
  , __global T *CUBERT_CL_RESTRICT_ n, const uint64_t n##_len_, const uint32_t n##_idx_
#define CUBERT_CUBE_BPARAM_1(i, T, n)
#define CUBERT_CUBE_BARG_0(i, T, n) , n, cubert_info_[2 + (i)] / sizeof(T), (uint32_t)(i)
#define CUBERT_CUBE_BARG_1(i, T, n)
#define CUBERT_CUBE_SHARED_PARAM_(T, n) , __local T *CUBERT_CL_RESTRICT_ n
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
    CUBERT_CUBE_SHARED_DECL_ shared name##_body_(                                                \
        cubert_info_, cubert_rec_, CUBERT_MODE_, CUBERT_OWN_SAFE_,                               \
        0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), &cubert_shared_storage_);              \
  }                                                                                              \
  static inline void name##_body_(                                                               \
      CUBERT_CUBE_ENV_PARAMS_, CUBERT_CUBE_RID_ CUBERT_PP_EACH(CUBERT_CUBE_BPARAM_, __VA_ARGS__) \
                                   CUBERT_CUBE_SHARED_PARAM_ shared)
#define CUBE_KERNEL(name, shared, ...) CUBERT_CUBE_KERNEL_OCL_(name, shared, __VA_ARGS__)
#define PHASED_KERNEL(name, shared, ...) CUBERT_CUBE_KERNEL_OCL_(name, shared, __VA_ARGS__)

/* =============================================================================================
   C side (the CPU server).
   ============================================================================================= */
#else

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
#define EXCLUSIVE_ARRAY(T, name, n) T name[n][CUBERT_CUBE_MAX_UNITS]
#define MY_AT(name, i) ((name)[i][cubert_ul_])
/* A PHASE runs the block once per unit of the cube: z and y rows, and a vectorisable loop over
   x. The innermost one-trip loop only declares the unit's other positions. */
#define PHASE CUBERT_CUBE_PHASE_LOOPS_
/* The sanitize variant (CUBERT_CUBE_SANITIZE, at the end of this file) learns each unit here. */
#define CUBERT_CUBE_PU_(ul) 1
#define CUBERT_CUBE_PHASE_LOOPS_                                                           \
  for (uint32_t cubert_uz_ = 0; cubert_uz_ < cubert_dz_; ++cubert_uz_)                     \
    for (uint32_t cubert_uy_ = 0, cubert_row_ = cubert_dx_ * cubert_dy_ * cubert_uz_;      \
         cubert_uy_ < cubert_dy_; ++cubert_uy_, cubert_row_ += cubert_dx_)                 \
      CUBERT_CUBE_PRAGMA_SIMD_                                                             \
  for (uint32_t cubert_ux_ = 0; cubert_ux_ < cubert_dx_; ++cubert_ux_)                     \
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
#define CUBERT_CUBE_GATOMIC_MIN_(p, v) \
  _Generic((p), int32_t * : cubert_atomic_min_i32_, uint32_t * : cubert_atomic_min_u32_)((p), (v))
#define CUBERT_CUBE_GATOMIC_MAX_(p, v) \
  _Generic((p), int32_t * : cubert_atomic_max_i32_, uint32_t * : cubert_atomic_max_u32_)((p), (v))
#define CUBERT_CUBE_GATOMIC_CAS_(p, e, d)       \
  _Generic((p), int32_t *                       \
           : cubert_atomic_cas_i32_, uint32_t * \
           : cubert_atomic_cas_u32_)((p), (e), (d))
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
#define CUBERT_CUBE_SHARED_FNS_(T, sfx)                                                       \
  CUBERT_CUBE_INLINE_ T cubert_shared_add_##sfx##_(T *p, T v) {                               \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    CUBERT_CUBE_ST_(p, (T)((uint32_t)old + (uint32_t)v)); /* wraps, as OpenCL's atomic_add */ \
    return old;                                                                               \
  }                                                                                           \
  CUBERT_CUBE_INLINE_ T cubert_shared_sub_##sfx##_(T *p, T v) {                               \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    CUBERT_CUBE_ST_(p, (T)((uint32_t)old - (uint32_t)v));                                     \
    return old;                                                                               \
  }                                                                                           \
  CUBERT_CUBE_INLINE_ T cubert_shared_min_##sfx##_(T *p, T v) {                               \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    if (v < old) CUBERT_CUBE_ST_(p, v);                                                       \
    return old;                                                                               \
  }                                                                                           \
  CUBERT_CUBE_INLINE_ T cubert_shared_max_##sfx##_(T *p, T v) {                               \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    if (v > old) CUBERT_CUBE_ST_(p, v);                                                       \
    return old;                                                                               \
  }                                                                                           \
  CUBERT_CUBE_INLINE_ T cubert_shared_xchg_##sfx##_(T *p, T v) {                              \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    CUBERT_CUBE_ST_(p, v);                                                                    \
    return old;                                                                               \
  }                                                                                           \
  CUBERT_CUBE_INLINE_ T cubert_shared_cas_##sfx##_(T *p, T expected, T desired) {             \
    const T old = CUBERT_CUBE_LD_(p);                                                         \
    if (old == expected) CUBERT_CUBE_ST_(p, desired);                                         \
    return old;                                                                               \
  }
CUBERT_CUBE_SHARED_FNS_(int32_t, i32)
CUBERT_CUBE_SHARED_FNS_(uint32_t, u32)
#define CUBERT_CUBE_SHARED_GENERIC_(op, p) \
  _Generic((p), int32_t * : cubert_shared_##op##_i32_, uint32_t * : cubert_shared_##op##_u32_)
#define SHARED_ATOMIC_ADD(p, v) CUBERT_CUBE_SHARED_GENERIC_(add, p)((p), (v))
#define SHARED_ATOMIC_SUB(p, v) CUBERT_CUBE_SHARED_GENERIC_(sub, p)((p), (v))
#define SHARED_ATOMIC_MIN(p, v) CUBERT_CUBE_SHARED_GENERIC_(min, p)((p), (v))
#define SHARED_ATOMIC_MAX(p, v) CUBERT_CUBE_SHARED_GENERIC_(max, p)((p), (v))
#define SHARED_ATOMIC_XCHG(p, v) CUBERT_CUBE_SHARED_GENERIC_(xchg, p)((p), (v))
#define SHARED_ATOMIC_CAS(p, e, d) CUBERT_CUBE_SHARED_GENERIC_(cas, p)((p), (e), (d))

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
#define SHARED_ATOMIC_ADD_F32(p, v) cubert_shared_atomic_add_f32_((p), (v))
#define SHARED_ATOMIC_MIN_F32(p, v) cubert_shared_atomic_min_f32_((p), (v))
#define SHARED_ATOMIC_MAX_F32(p, v) cubert_shared_atomic_max_f32_((p), (v))

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
#define CUBERT_CUBE_OP_SUM_(a, b) ((a) + (b))
#define CUBERT_CUBE_OP_MIN_(a, b) CUBERT_CUBE_GENERIC_(cubert_red_min_, a)((a), (b))
#define CUBERT_CUBE_OP_MAX_(a, b) CUBERT_CUBE_GENERIC_(cubert_red_max_, a)((a), (b))
/* Cube-level reduce and scan (docs/kernels.md, "Cube-level helpers"). */
#define CUBE_REDUCE_SUM(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_SUM_, value, scratch, dst)
#define CUBE_REDUCE_MIN(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_MIN_, value, scratch, dst)
#define CUBE_REDUCE_MAX(value, scratch, dst) \
  CUBERT_CUBE_REDUCE_(CUBERT_CUBE_OP_MAX_, value, scratch, dst)
#define CUBE_SCAN_INCLUSIVE_SUM(value, scratch, dst) CUBERT_CUBE_SCAN_(0, value, scratch, dst)
#define CUBE_SCAN_EXCLUSIVE_SUM(value, scratch, dst) CUBERT_CUBE_SCAN_(1, value, scratch, dst)

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
#define min(a, b) CUBERT_CUBE_GENERIC_(cubert_min_, (a) + (b))((a), (b))
#define max(a, b) CUBERT_CUBE_GENERIC_(cubert_max_, (a) + (b))((a), (b))
#define clamp(x, lo, hi) CUBERT_CUBE_GENERIC_(cubert_clamp_, x)((x), (lo), (hi))
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
#define abs(x)                         \
  _Generic((x), int32_t                \
           : cubert_abs_i32_, int64_t  \
           : cubert_abs_i64_, uint32_t \
           : cubert_abs_u32_, uint64_t \
           : cubert_abs_u64_)(x)
#define rsqrt(x) (1 / sqrt(x))

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
#define VLOAD_F32X4(p) cubert_vload_f32x4_(p)
#define VLOAD_F32X8(p) cubert_vload_f32x8_(p)
#define VLOAD_F32X16(p) cubert_vload_f32x16_(p)
#define VSTORE_F32X4(v, p) cubert_vstore_f32x4_((v), (p))
#define VSTORE_F32X8(v, p) cubert_vstore_f32x8_((v), (p))
#define VSTORE_F32X16(v, p) cubert_vstore_f32x16_((v), (p))
#define VSPLAT_F32X4(s) cubert_vsplat_f32x4_(s)
#define VSPLAT_F32X8(s) cubert_vsplat_f32x8_(s)
#define VSPLAT_F32X16(s) cubert_vsplat_f32x16_(s)
#define VFMA(a, b, c)                   \
  _Generic((a), f32x4                   \
           : cubert_vfma_f32x4_, f32x8  \
           : cubert_vfma_f32x8_, f32x16 \
           : cubert_vfma_f32x16_)((a), (b), (c))

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
#define CUBERT_CUBE_BARG_0(i, T, n) , (T *)cubert_b_[i], cubert_n_[i], (uint32_t)(i)
#define CUBERT_CUBE_BARG_1(i, T, n)
#define CUBERT_CUBE_BLEN_0(i, T, n) \
  cubert_n_[i] = cubert_ctx_->buffer_bytes ? cubert_ctx_->buffer_bytes[i] / sizeof(T) : 0;
#define CUBERT_CUBE_BLEN_1(i, T, n)
#define CUBERT_CUBE_BDECL_0(i, T, n) {#n, #T, (uint32_t)sizeof(T)},
#define CUBERT_CUBE_BDECL_1(i, T, n)
#define CUBERT_CUBE_SHARED_PARAM_(T, n) , CUBERT_CUBE_UNUSED_ T *restrict n
#define CUBERT_CUBE_SHARED_TYPE_(T, n) T

/* Buffer pointers and lengths in elements, read once per call. A launch whose buffer count
   differs from the declaration never gets here (the client refuses it). */
#define CUBERT_CUBE_PROLOGUE_(...)                              \
  enum { cubert_nb_ = CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__) }; \
  void *const *cubert_b_ = cubert_ctx_->buffers;                \
  uint64_t cubert_n_[cubert_nb_ + 1] = {0};                     \
  (void)cubert_b_;                                              \
  (void)cubert_n_;                                              \
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
      .cpu = kname##_cpu_,                                                                \
      .flags = (form_flags) | CUBERT_CUBE_FILE_FLAGS_,                                    \
      .shared_bytes = (shared_bytes_),                                                    \
      .signature = &kname##_signature_,                                                   \
      .cpu_sanitize = CUBERT_CUBE_SAN_REF_(kname),                                        \
  };

/* The signature and the definition object. */
#define CUBERT_CUBE_DEF_(kname, form_flags, shared_bytes_, ...)                                   \
  static const cubert_kernel_buffer_decl kname##_decls_[] = {                                     \
      CUBERT_PP_EACH(CUBERT_CUBE_BDECL_, __VA_ARGS__){0, 0, 0}};                                  \
  CUBERT_CUBE_SAN_DECL_(kname)                                                                    \
  static const cubert_kernel_signature kname##_signature_ = {                                     \
      .buffer_count = CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__),                                     \
      .buffers = kname##_decls_,                                                                  \
      .file = __FILE__,                                                                           \
      .line = __LINE__,                                                                           \
  };                                                                                              \
  CUBERT_KERNEL_EXPORT extern const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname); \
  CUBERT_KERNEL_EXPORT const cubert_kernel_def CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname) = {     \
      .name = #kname,                                                                             \
      .opencl_source = CUBERT_CUBE_SOURCE_PTR_,                                                   \
      .opencl_entry = #kname,                                                                     \
      .cpu = CUBERT_CUBE_CPU_IMPL_(kname),                                                        \
      .flags = (form_flags) | CUBERT_CUBE_FILE_FLAGS_,                                            \
      .shared_bytes = (shared_bytes_),                                                            \
      .signature = &kname##_signature_,                                                           \
      .cpu_sanitize = CUBERT_CUBE_SAN_REF_(kname),                                                \
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
      for (uint64_t id_ = (begin); id_ < (end); ++id_)                                             \
        name##_body_(cubert_ctx_, mode, safe, CUBERT_CUBE_FORM_UNIT_, 0, id_, id_, id_ / dx_,      \
                     (uint32_t)(id_ % dx_), (uint32_t)(id_ % dx_), 0, 0, (uint32_t)(id_ / dx_), 0, \
                     0, (uint32_t)id_, 0, 0 CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__), 0);    \
    } else if (dx_ < CUBERT_CUBE_ROW_MIN) {                                                        \
      const uint32_t *d_ = cubert_ctx_->cube_dim;                                                  \
      CUBERT_CUBE_PRAGMA_SIMD_                                                                     \
      for (uint64_t id_ = (begin); id_ < (end); ++id_) {                                           \
        cubert_cpu_unit_walk p_;                                                                   \
        cubert_cpu_unit_walk_start(cubert_ctx_, id_, &p_);                                         \
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
        for (uint32_t k_ = 0; k_ < (uint32_t)row_; ++k_)                                           \
          name##_body_(cubert_ctx_, mode, safe, CUBERT_CUBE_FORM_UNIT_, 0, id0_ + k_, id0_ + k_,   \
                       w_.cl, ul0_ + k_, ux0_ + k_, w_.uy, w_.uz, w_.cx, w_.cy, w_.cz, ax0_ + k_,  \
                       w_.cy * cubert_ctx_->cube_dim[1] + w_.uy,                                   \
                       w_.cz * cubert_ctx_->cube_dim[2] +                                          \
                           w_.uz CUBERT_PP_EACH(CUBERT_CUBE_BARG_, __VA_ARGS__),                   \
                       0);                                                                         \
        id0_ += row_;                                                                              \
        cubert_cpu_unit_walk_advance(cubert_ctx_, (uint32_t)row_, &w_);                            \
      }                                                                                            \
    }                                                                                              \
  } while (0)

#define UNIT_KERNEL(name, active, ...)                                                             \
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
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_ shdecl);                      \
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
      CUBERT_CUBE_BPARAM_, __VA_ARGS__) CUBERT_CUBE_SHARED_PARAM_ shdecl)

/* ---- the kernel sanitizer (validate mode on the CPU server; docs/debugging.md) ---------------
   cubert_add_kernels compiles every kernel file once more with CUBERT_CUBE_SANITIZE defined and
   GCC's -fsanitize=thread,bounds-strict, whose per-access callbacks it renames to cubert_san_*
   (implemented by the CPU server: backends/cpu/sanitize.c). That copy defines, per kernel, only
   `<prefix><kernel>_sanitize_cpu_`, which the main copy's definition carries as cpu_sanitize
   (CUBERT_CUBE_HAVE_SANITIZE). Here the variant tells the sanitizer which unit runs: at a
   fiber's start and after each barrier, and at each unit of a PHASE loop. */
#if defined(CUBERT_CUBE_HAVE_SANITIZE) && !defined(CUBERT_CUBE_SANITIZE)
#ifndef CUBERT_CUBE_SANITIZE_PREFIX
#define CUBERT_CUBE_SANITIZE_PREFIX CUBERT_KERNEL_PREFIX
#endif
#define CUBERT_CUBE_SAN_NAME_(kname) \
  CUBERT_PP_CAT(CUBERT_CUBE_SANITIZE_PREFIX, kname##_sanitize_cpu_)
#define CUBERT_CUBE_SAN_DECL_(kname) void CUBERT_CUBE_SAN_NAME_(kname)(const cubert_cpu_ctx *);
#define CUBERT_CUBE_SAN_REF_(kname) CUBERT_CUBE_SAN_NAME_(kname)
#else
#define CUBERT_CUBE_SAN_DECL_(kname)
#define CUBERT_CUBE_SAN_REF_(kname) 0
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

/* A barrier closes the current interval of the sanitizer's race check. */
#undef SYNC_CUBE
#define SYNC_CUBE() cubert_san_sync_(cubert_ctx_, cubert_form_, cubert_in_phase_, __LINE__)
CUBERT_CUBE_INLINE_ void cubert_san_sync_(const cubert_cpu_ctx *ctx, int form, uint64_t in_phase,
                                          uint32_t line) {
  cubert_san_barrier(ctx, line);
  cubert_sync_(ctx, form, in_phase, line);
  cubert_san_resume(ctx);
}

/* Atomics stay atomic here whatever the main copy makes of them, so the sanitizer sees them. */
#undef SHARED_ATOMIC_ADD
#undef SHARED_ATOMIC_SUB
#undef SHARED_ATOMIC_XCHG
#define SHARED_ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define SHARED_ATOMIC_SUB(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define SHARED_ATOMIC_XCHG(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)

/* The definition objects stay in the main copy; this one gives the sanitized CPU function. */
#undef CUBERT_CUBE_DEF_
#define CUBERT_CUBE_DEF_(kname, form_flags, shared_bytes_, ...)                              \
  void CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname##_sanitize_cpu_)(const cubert_cpu_ctx *);   \
  void CUBERT_PP_CAT(CUBERT_KERNEL_PREFIX, kname##_sanitize_cpu_)(const cubert_cpu_ctx *c) { \
    cubert_san_run(c, kname##_cpu_, (form_flags));                                           \
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

#endif /* CUBERT_CUBE_OPENCL */

#endif /* CUBERT_CUBE_H */
