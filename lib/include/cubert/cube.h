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
   (INVALID_ARGUMENT naming the kernel, what it expects and what it got); an element type is a
   number or a plain struct typedef (LOAD out of range gives the struct with every member 0).
   Shared memory is one struct type with compile-time sizes; the CPU's per-cube allocation is
   sizeof that type. After the buffers the list may hold:
     (scalar, T, name)          a named scalar: `name` is a T in the body and in `active` (T one
                                of int8_t .. uint64_t, float, double); scalar k is info word k,
                                set on the host by cubert_kernel_scalar_set_* (kernel_scalars.h)
     (dynamic_shared, T, name)  last, CUBE_KERNEL and PHASED_KERNEL only: `name` is a T * into
                                the cube's shared memory, LEN(name) elements, sized in bytes by
                                the launch (cubert_launch_options.dynamic_shared_bytes); checked
                                with the struct against the device's shared memory
   The order (buffers, scalars, dynamic array) and the scalar types are static assertions.

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
     STORE_SAME(buf, i, v)              STORE, declared as one of several units' stores of one
                                        value to element i in a launch (a "found" flag): the
                                        kernel sanitizer then reports it only if the values differ
     LEN(buf)                            elements in the bound buffer (uint64_t)
   Scalars, from the launch's info words: INFO_U64(k), INFO_I64, INFO_U32 / INFO_I32 (low 32
     bits), INFO_F32 (IEEE bits in the low 32 bits: cubert_kernel_info_f32), INFO_F64.
   Barriers: SYNC_CUBE().
   SHARED_STORE_SAME(p, v): `*p = v` in shared memory, declared like STORE_SAME (p evaluated once).
   Atomics on buffer elements (int32_t, uint32_t, int64_t, uint64_t; checked like LOAD; return
   the old value): ATOMIC_ADD(buf, i, v), ATOMIC_SUB, ATOMIC_MIN, ATOMIC_MAX, ATOMIC_XCHG,
     ATOMIC_CAS(buf, i, expected, desired), ATOMIC_ADD_F32(buf, i, v) (float add by
     compare-exchange), ATOMIC_ADD_F64 (double, the same). 64-bit ones on OpenCL need
     cl_khr_int64_base_atomics (MIN/MAX: _extended_atomics): without it a kernel using one fails
     to build with a message naming the extension (cube_prelude.cl).
   Atomics on shared memory through a pointer (int32_t, uint32_t, int64_t or uint64_t, the 64-bit
   ones on OpenCL with the extensions above; return the old value):
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
   Arguments: every macro takes any expression a function call takes, compound literals with
     commas included (`STORE(y, (uint32_t[2]){i, j}[k], v)`; "Whole arguments" below), except
     where it refuses one at the kernel's line: clamp and VFMA (a literal with commas goes in
     parentheses there), UNIT_KERNEL's `active` (in parentheses: the buffer pairs follow it),
     CUBE_REDUCE_* / CUBE_SCAN_*'s scratch and dst (an array and an lvalue), and fma where the
     C side is built with clang (cube_cpu.h redefines the other math names of <tgmath.h>).
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
   A file may define CUBE_OPENCL_OPTIONS as a string literal before including this header: its
     definitions carry it as their opencl_options (kernel.h), added to the build options of the
     file's program. Options that start with -cl-nv- reach NVIDIA's compiler only (the OpenCL
     server drops them elsewhere), e.g. "-cl-nv-maxrregcount=128" for a file whose kernels run
     faster with two cubes per multiprocessor than with more registers per unit.

   ---- Execution modes (cubert_client_launch_mode, CUBERT_CHECK_MODE) -----------------------------
     checked (default): LOAD/STORE/atomics never leave the buffer: out-of-range reads give 0,
       writes and atomics are dropped; INFO_* past the info words give 0.
     validate: the same, and the first violation is an error at the next sync naming the kernel,
       the buffer, the unit and cube position, the index and the buffer length (on OpenCL through
       a small record the kernel writes and the server reads); on the CPU units of a CUBE_KERNEL
       that reach different barriers (or return while others wait) are reported too.
     unchecked: plain accesses, for kernels whose indices are known good.
   Shared memory and private arrays are not checked by these modes (the CPU server's kernel
   sanitizer checks them in validate mode, the dynamic shared array included).

   ---- Not part of the language (compiles on one side at best, or differs) -------------------
     vector types other than the f32x<n> above (float4 ..., lane access, swizzles), recursion,
     function pointers, variable-length arrays, mutable globals (file-scope variables other
     than `const`), libc and other headers' functions, pointers to pointers in buffers,
     `size_t`/`long` (their widths differ: use the <stdint.h> names), 64-bit shared atomics,
   barriers that not every unit of a cube reaches (divergent barriers), and side effects inside
     LOAD/STORE index expressions.
   The build rejects what it can at the file's line (docs/kernels.md, "Rules the build
   enforces"): SYNC_CUBE() in a UNIT_KERNEL or inside a PHASE (static assertions), size_t,
   ptrdiff_t, printf, malloc and, without CUBE_NEEDS_FP64, double (poisoned at the end of this
   header) and floating literals without the f suffix (GCC; clang and clang-based OpenCL
   compilers: floats promoted to double), variable-length arrays (-Werror=vla), the order and
   types of the parameter list, and with CUBERT_CHECK_KERNELS whatever an OpenCL compiler
   rejects.

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
    pairs or NO_BUFFERS; the body follows in braces. Units with UNIT_ID < `active` run it (an
    `active` holding a compound literal with commas goes in parentheses). */
/** @def CUBE_KERNEL(name, shared, buffers...)
    Defines the cube kernel `name`, whose body runs once per unit and may call SYNC_CUBE();
    `shared` is `(SharedType, shared_name)` or NO_SHARED. */
/** @def CUBE_KERNEL_FIBERS(name, shared, buffers...)
    CUBE_KERNEL, kept in the fiber form on the CPU server: the build's phase transform
    (docs/kernels.md, "Natural kernels are phased by the build") leaves this kernel alone. */
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
    Elements in the buffer bound to `buf` (uint64_t), or in the dynamic shared array `buf`. */
/** @def INFO_U64(k)
    Info word `k` (uint64_t); 0 past the launch's words (checked, validate). */
/** @def INFO_AT_MOST(k, limit)
    1 when info word `k` is at most `limit`, else 0; in validate mode a word above its limit is
    the launch's violation (the word, its value and the limit), as an out-of-range access is,
    so that a kernel's own guard on a launch parameter does not hide a bad launch. */
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
/** @def UNROLL
    Placed before a `for` loop of a constant trip count: asks the compiler to write the loop
    out. A hint for speed, never for results: the OpenCL server gives it to NVIDIA's compiler
    (which does not unroll such loops itself, so it cannot load a later iteration's shared
    operands while an earlier one computes) and not to PoCL (whose LLVM 15 crashes on some
    unrolled barrier kernels for CPUs); the CPU server's compilers unroll on their own. */
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
/** @def ATOMIC_ADD_F64(buf, i, v)
    Atomically adds `v` to element `i` of a double buffer (compare-exchange; OpenCL: fp64 and
    cl_khr_int64_base_atomics); returns the old value. */
/** @def STORE_SAME(buf, i, v)
    STORE, declared as a store that several units of a launch may make to element `i` with the
    same value (a "found" flag): a plain store on OpenCL, a relaxed atomic store of an element of
    1, 2, 4 or 8 bytes on the CPU server (the same instruction; cubes on other threads may store
    there at once); the kernel sanitizer (validate mode) reports it only if two units store
    different values, where plain STORE gets a same-value race report. */
/** @def SHARED_STORE_SAME(p, v)
    `*p = v` in shared memory (p evaluated once), declared as STORE_SAME is. */
/** @def SHARED_ATOMIC_ADD(p, v)
    Atomically adds `v` to the int32_t, uint32_t, int64_t or uint64_t at `p` (shared memory;
    64-bit on OpenCL: cl_khr_int64_base_atomics, MIN/MAX _extended_atomics); returns the old
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
    min(max(x, lo), hi), as OpenCL's clamp (a compound literal with commas goes in parentheses:
    the C side picks the function by x's type). */
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
    built with FMA, else rounded twice (a compound literal with commas goes in parentheses: the
    C side picks the function by a's type). */

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
/* The entry's kind picks M0_ .. M3_: 0 a buffer (T, n), 1 NO_BUFFERS, 2 a named scalar
   (scalar, T, n), 3 the dynamic shared array (dynamic_shared, T, n); M2_ and M3_ take
   (i, keyword, T, n). */
#define CUBERT_PP_ONE3_(M, i, T, ...) \
  CUBERT_PP_CAT(M, CUBERT_PP_KIND_(T, __VA_ARGS__))(i, T, __VA_ARGS__)
#define CUBERT_PP_KIND_(T, ...)                        \
  CUBERT_PP_KIND2_(CUBERT_PP_CAT(CUBERT_PP_ENTRY_, T), \
                   CUBERT_PP_IS_NONE_(CUBERT_PP_FIRST_(__VA_ARGS__, ~)))
#define CUBERT_PP_KIND2_(probe, otherwise) CUBERT_PP_SECOND_(probe, otherwise, ~)
#define CUBERT_PP_ENTRY_scalar ~, 2
#define CUBERT_PP_ENTRY_dynamic_shared ~, 3
#define CUBERT_PP_FIRST_(a, ...) a
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

/* Whole arguments. The preprocessor splits an argument at every comma outside parentheses, so a
   compound literal `(f32x4){a, b, c, d}` or `(uint32_t[2]){1, 0}[k]` reaches a macro as several
   arguments; every macro of the language takes any expression a function call takes, by one of:
   - a variadic last parameter, used as `(__VA_ARGS__)` or passed to a function whole;
   - CUBERT_PP_PICK_(n, exact, split, ...): `exact` when the preprocessor sees exactly the n
     arguments (the macro's own expansion, so the code of every kernel without such literals is
     unchanged), `split` otherwise, which leaves the splitting to the compiler:
     CUBERT_PP_ARG1_OF_2_ / CUBERT_PP_ARG2_OF_2_ are the first and the second of two arguments
     as the C parser sees them (__builtin_choose_expr: GCC, clang and every clang-based OpenCL
     compiler; evaluates only the chosen one);
   - CUBERT_PP_ROT2_<count>: the last two arguments first, for CUBE_REDUCE_* and CUBE_SCAN_*,
     whose scratch and dst are lvalues written without such literals.
   Vector literals of OpenCL C, `(float4)(a, b, c, d)`, are parenthesised and never split. */
#define CUBERT_PP_PICK_(n, exact, split, ...) \
  CUBERT_PP_PICK2_(CUBERT_PP_ARGS_ARE_##n##_(__VA_ARGS__), exact, split)
#define CUBERT_PP_PICK2_(is_n, exact, split) CUBERT_PP_PICK3_(is_n, exact, split)
#define CUBERT_PP_PICK3_(is_n, exact, split) CUBERT_PP_PICK_IF##is_n##_(exact, split)
#define CUBERT_PP_PICK_IF1_(exact, split) exact
#define CUBERT_PP_PICK_IF0_(exact, split) split
/* 1 when ... is exactly n arguments, else 0: the (n+1)-th of `..., CUBERT_PP_END_()` is the end
   marker only then, and only the marker expands to two items, the second 1. */
#define CUBERT_PP_ARGS_ARE_2_(...) \
  CUBERT_PP_IS_PROBE_(CUBERT_PP_ARG3_(__VA_ARGS__, CUBERT_PP_END_(), ~, ~))
#define CUBERT_PP_ARGS_ARE_3_(...) \
  CUBERT_PP_IS_PROBE_(CUBERT_PP_ARG4_(__VA_ARGS__, CUBERT_PP_END_(), ~, ~))
#define CUBERT_PP_ARG3_(a, b, c, ...) c
#define CUBERT_PP_ARG4_(a, b, c, d, ...) d
#define CUBERT_PP_END_() ~, 1
#define CUBERT_PP_ARG1_OF_2_(...) __builtin_choose_expr(1, __VA_ARGS__)
#define CUBERT_PP_ARG2_OF_2_(...) __builtin_choose_expr(0, __VA_ARGS__)
/* M(X, p[n-1], p[n], p1, ..., p[n-2]) for n = 3 .. 32 arguments. */
#define CUBERT_PP_ROT2_(M, X, ...) \
  CUBERT_PP_CAT(CUBERT_PP_ROT2_, CUBERT_PP_NARGS32_(__VA_ARGS__))(M, X, __VA_ARGS__)
#define CUBERT_PP_NARGS32_(...)                                                                    \
  CUBERT_PP_NARGS32X_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, \
                      16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CUBERT_PP_NARGS32X_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
                            _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30,  \
                            _31, _32, n, ...)                                                      \
  n
#define CUBERT_PP_ROT2_3(M, X, p1, p2, p3) M(X, p2, p3, p1)
#define CUBERT_PP_ROT2_4(M, X, p1, p2, p3, p4) M(X, p3, p4, p1, p2)
#define CUBERT_PP_ROT2_5(M, X, p1, p2, p3, p4, p5) M(X, p4, p5, p1, p2, p3)
#define CUBERT_PP_ROT2_6(M, X, p1, p2, p3, p4, p5, p6) M(X, p5, p6, p1, p2, p3, p4)
#define CUBERT_PP_ROT2_7(M, X, p1, p2, p3, p4, p5, p6, p7) M(X, p6, p7, p1, p2, p3, p4, p5)
#define CUBERT_PP_ROT2_8(M, X, p1, p2, p3, p4, p5, p6, p7, p8) M(X, p7, p8, p1, p2, p3, p4, p5, p6)
#define CUBERT_PP_ROT2_9(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9) \
  M(X, p8, p9, p1, p2, p3, p4, p5, p6, p7)
#define CUBERT_PP_ROT2_10(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10) \
  M(X, p9, p10, p1, p2, p3, p4, p5, p6, p7, p8)
#define CUBERT_PP_ROT2_11(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11) \
  M(X, p10, p11, p1, p2, p3, p4, p5, p6, p7, p8, p9)
#define CUBERT_PP_ROT2_12(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12) \
  M(X, p11, p12, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10)
#define CUBERT_PP_ROT2_13(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13) \
  M(X, p12, p13, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11)
#define CUBERT_PP_ROT2_14(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14) \
  M(X, p13, p14, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12)
#define CUBERT_PP_ROT2_15(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15) \
  M(X, p14, p15, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13)
#define CUBERT_PP_ROT2_16(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16)                                                                    \
  M(X, p15, p16, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14)
#define CUBERT_PP_ROT2_17(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17)                                                               \
  M(X, p16, p17, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15)
#define CUBERT_PP_ROT2_18(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18)                                                          \
  M(X, p17, p18, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16)
#define CUBERT_PP_ROT2_19(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19)                                                     \
  M(X, p18, p19, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17)
#define CUBERT_PP_ROT2_20(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20)                                                \
  M(X, p19, p20, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18)
#define CUBERT_PP_ROT2_21(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21)                                           \
  M(X, p20, p21, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19)
#define CUBERT_PP_ROT2_22(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22)                                      \
  M(X, p21, p22, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20)
#define CUBERT_PP_ROT2_23(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23)                                 \
  M(X, p22, p23, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21)
#define CUBERT_PP_ROT2_24(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24)                            \
  M(X, p23, p24, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22)
#define CUBERT_PP_ROT2_25(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25)                       \
  M(X, p24, p25, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23)
#define CUBERT_PP_ROT2_26(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26)                  \
  M(X, p25, p26, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24)
#define CUBERT_PP_ROT2_27(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27)             \
  M(X, p26, p27, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25)
#define CUBERT_PP_ROT2_28(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28)        \
  M(X, p27, p28, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25, p26)
#define CUBERT_PP_ROT2_29(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29)   \
  M(X, p28, p29, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25, p26, p27)
#define CUBERT_PP_ROT2_30(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29,   \
                          p30)                                                                    \
  M(X, p29, p30, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25, p26, p27, p28)
#define CUBERT_PP_ROT2_31(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29,   \
                          p30, p31)                                                               \
  M(X, p30, p31, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29)
#define CUBERT_PP_ROT2_32(M, X, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, \
                          p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29,   \
                          p30, p31, p32)                                                          \
  M(X, p31, p32, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, \
    p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p30)

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
#define CUBERT_CUBE_COUNT1_2(i, kw, T, n)
#define CUBERT_CUBE_COUNT1_3(i, kw, T, n)
#define CUBERT_CUBE_BUFFER_COUNT_(...) (0 CUBERT_PP_EACH(CUBERT_CUBE_COUNT1_, __VA_ARGS__))
/* Named scalars (scalar, T, n): how many, and how many entries precede them (the buffers, or
   NO_BUFFERS), so that scalar k, entry i, is info word k = i - CUBERT_CUBE_LEAD_COUNT_. */
#define CUBERT_CUBE_SCOUNT_0(i, T, n)
#define CUBERT_CUBE_SCOUNT_1(i, T, n)
#define CUBERT_CUBE_SCOUNT_2(i, kw, T, n) +1
#define CUBERT_CUBE_SCOUNT_3(i, kw, T, n)
#define CUBERT_CUBE_SCALAR_COUNT_(...) (0 CUBERT_PP_EACH(CUBERT_CUBE_SCOUNT_, __VA_ARGS__))
#define CUBERT_CUBE_LEAD_0(i, T, n) +1
#define CUBERT_CUBE_LEAD_1(i, T, n) +1
#define CUBERT_CUBE_LEAD_2(i, kw, T, n)
#define CUBERT_CUBE_LEAD_3(i, kw, T, n)
#define CUBERT_CUBE_LEAD_COUNT_(...) (0 CUBERT_PP_EACH(CUBERT_CUBE_LEAD_, __VA_ARGS__))
/* The dynamic shared array (dynamic_shared, T, n): 1 when declared. */
#define CUBERT_CUBE_DCOUNT_0(i, T, n)
#define CUBERT_CUBE_DCOUNT_1(i, T, n)
#define CUBERT_CUBE_DCOUNT_2(i, kw, T, n)
#define CUBERT_CUBE_DCOUNT_3(i, kw, T, n) +1
#define CUBERT_CUBE_DYNAMIC_COUNT_(...) (0 CUBERT_PP_EACH(CUBERT_CUBE_DCOUNT_, __VA_ARGS__))
/* Sums of the entries' positions per kind, for the order check (buffers, then scalars, then the
   dynamic shared array: each kind's positions are then consecutive from where the last ended). */
#define CUBERT_CUBE_BSUM_0(i, T, n) +(i)
#define CUBERT_CUBE_BSUM_1(i, T, n)
#define CUBERT_CUBE_BSUM_2(i, kw, T, n)
#define CUBERT_CUBE_BSUM_3(i, kw, T, n)
#define CUBERT_CUBE_SSUM_0(i, T, n)
#define CUBERT_CUBE_SSUM_1(i, T, n)
#define CUBERT_CUBE_SSUM_2(i, kw, T, n) +(i)
#define CUBERT_CUBE_SSUM_3(i, kw, T, n)
#define CUBERT_CUBE_DSUM_0(i, T, n)
#define CUBERT_CUBE_DSUM_1(i, T, n)
#define CUBERT_CUBE_DSUM_2(i, kw, T, n)
#define CUBERT_CUBE_DSUM_3(i, kw, T, n) +(i)
/* True when the entries come in the language's order: buffers at 0 .. B-1 (or NO_BUFFERS), the
   S scalars right after them, then at most one dynamic shared array, last. */
#define CUBERT_CUBE_ORDER_OK_(...)                                                                 \
  ((0 CUBERT_PP_EACH(CUBERT_CUBE_BSUM_, __VA_ARGS__)) ==                                           \
       CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__) * (CUBERT_CUBE_BUFFER_COUNT_(__VA_ARGS__) - 1) /     \
           2 &&                                                                                    \
   (0 CUBERT_PP_EACH(CUBERT_CUBE_SSUM_, __VA_ARGS__)) ==                                           \
       CUBERT_CUBE_SCALAR_COUNT_(__VA_ARGS__) * CUBERT_CUBE_LEAD_COUNT_(__VA_ARGS__) +             \
           CUBERT_CUBE_SCALAR_COUNT_(__VA_ARGS__) * (CUBERT_CUBE_SCALAR_COUNT_(__VA_ARGS__) - 1) / \
               2 &&                                                                                \
   CUBERT_CUBE_DYNAMIC_COUNT_(__VA_ARGS__) <= 1 &&                                                 \
   (0 CUBERT_PP_EACH(CUBERT_CUBE_DSUM_, __VA_ARGS__)) ==                                           \
       CUBERT_CUBE_DYNAMIC_COUNT_(__VA_ARGS__) *                                                   \
           (CUBERT_CUBE_LEAD_COUNT_(__VA_ARGS__) + CUBERT_CUBE_SCALAR_COUNT_(__VA_ARGS__)))
/* A named scalar's value from its info word: the value's bytes are the word's low bytes (as the
   host's cubert_kernel_scalar_set_* store them; both sides are little-endian). */
#define CUBERT_CUBE_SCALAR_FROM_(T, word) \
  (((union {                              \
     uint64_t w;                          \
     T v;                                 \
   }){.w = (word)})                       \
       .v)

/* Checked accesses, spelled alike on both sides. cubert_chk_ is true when the access may go
   ahead; its arguments name the violation for validate mode. */
#define CUBERT_CUBE_OK_(buf, i) \
  cubert_chk_(CUBERT_CUBE_ENV_, cubert_mode_, (uint64_t)(i), buf##_len_, buf##_idx_, cubert_rid_)
/* Out of range, LOAD gives the element type's zero (CUBERT_CUBE_ZERO_, per side): 0 for numbers,
   every member 0 for a struct. */
#define LOAD(buf, ...) \
  (CUBERT_CUBE_OK_(buf, (__VA_ARGS__)) ? (buf)[__VA_ARGS__] : CUBERT_CUBE_ZERO_(buf))
#define STORE(buf, ...) \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_STORE_, CUBERT_CUBE_STORE_SPLIT_, __VA_ARGS__)(buf, __VA_ARGS__)
#define CUBERT_CUBE_STORE_(buf, i, v)            \
  do {                                           \
    if (CUBERT_CUBE_OK_(buf, i)) (buf)[i] = (v); \
  } while (0)
#define CUBERT_CUBE_STORE_SPLIT_(buf, ...) \
  CUBERT_CUBE_STORE_(buf, CUBERT_PP_ARG1_OF_2_(__VA_ARGS__), CUBERT_PP_ARG2_OF_2_(__VA_ARGS__))
/* A store several units may make with one value (cube.h's header): a plain store, which the
   kernel sanitizer's copy hands to the sanitizer with its value instead (cube_cpu.h). */
#define CUBERT_CUBE_SAME_STORE_(p, v) \
  do {                                \
    *(p) = (v);                       \
  } while (0)
#define STORE_SAME(buf, ...)                                                              \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_STORE_SAME_, CUBERT_CUBE_STORE_SAME_SPLIT_, __VA_ARGS__) \
  (buf, __VA_ARGS__)
#define CUBERT_CUBE_STORE_SAME_(buf, i, v)          \
  do {                                              \
    if (CUBERT_CUBE_OK_(buf, i)) {                  \
      CUBERT_CUBE_BUFFER_SAME_STORE_(&(buf)[i], v); \
    }                                               \
  } while (0)
/* STORE_SAME's store into a buffer: SHARED_STORE_SAME's, unless a side makes it atomic
   (cube_cpu.h: cubes on other threads store there at once). */
#define CUBERT_CUBE_BUFFER_SAME_STORE_(p, v) CUBERT_CUBE_SAME_STORE_(p, v)
#define CUBERT_CUBE_STORE_SAME_SPLIT_(buf, ...) \
  CUBERT_CUBE_STORE_SAME_(buf, CUBERT_PP_ARG1_OF_2_(__VA_ARGS__), CUBERT_PP_ARG2_OF_2_(__VA_ARGS__))
#define SHARED_STORE_SAME(p, ...) CUBERT_CUBE_SAME_STORE_(p, (__VA_ARGS__))
#define LOAD_UNIT(buf) \
  ((cubert_own_safe_ || CUBERT_CUBE_OK_(buf, UNIT_ID)) ? (buf)[UNIT_ID] : CUBERT_CUBE_ZERO_(buf))
#define STORE_UNIT(buf, ...)                                                               \
  do {                                                                                     \
    if (cubert_own_safe_ || CUBERT_CUBE_OK_(buf, UNIT_ID)) (buf)[UNIT_ID] = (__VA_ARGS__); \
  } while (0)
#define LEN(buf) (buf##_len_)

#define INFO_U64(...) cubert_info_word_(CUBERT_CUBE_ENV_, cubert_mode_, (uint32_t)(__VA_ARGS__))
#define INFO_AT_MOST(...)                                                                     \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_INFO_AT_MOST_, CUBERT_CUBE_INFO_AT_MOST_SPLIT_, __VA_ARGS__) \
  (__VA_ARGS__)
#define CUBERT_CUBE_INFO_AT_MOST_(k, limit) \
  cubert_info_at_most_(CUBERT_CUBE_ENV_, cubert_mode_, (uint32_t)(k), (uint64_t)(limit))
/* The function's prototype converts k and limit as the casts above do. */
#define CUBERT_CUBE_INFO_AT_MOST_SPLIT_(...) \
  cubert_info_at_most_(CUBERT_CUBE_ENV_, cubert_mode_, __VA_ARGS__)
#define INFO_I64(...) ((int64_t)INFO_U64(__VA_ARGS__))
#define INFO_U32(...) ((uint32_t)INFO_U64(__VA_ARGS__))
#define INFO_I32(...) ((int32_t)(uint32_t)INFO_U64(__VA_ARGS__))
#define INFO_F32(...) cubert_bits_f32_((uint32_t)INFO_U64(__VA_ARGS__))
#define INFO_F64(...) cubert_bits_f64_(INFO_U64(__VA_ARGS__))

/* Buffer atomics are atomic on both sides (a launch's cubes run on several threads of the CPU
   server): CUBERT_CUBE_GATOMIC_*_, defined per side below. SHARED_ATOMIC_* are not the same
   operations on the CPU server (see "shared-memory atomics" on the C side). */
#define ATOMIC_ADD(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_GATOMIC_ADD_, buf, __VA_ARGS__)
#define ATOMIC_SUB(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_GATOMIC_SUB_, buf, __VA_ARGS__)
#define ATOMIC_MIN(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_GATOMIC_MIN_, buf, __VA_ARGS__)
#define ATOMIC_MAX(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_GATOMIC_MAX_, buf, __VA_ARGS__)
#define ATOMIC_XCHG(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_GATOMIC_XCHG_, buf, __VA_ARGS__)
#define ATOMIC_ADD_F32(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_ATOMIC_ADD_F32_, buf, __VA_ARGS__)
#define CUBERT_CUBE_ATOMIC_ADD_F32_(p, v) cubert_atomic_add_f32_((p), (v))
#define ATOMIC_ADD_F64(buf, ...) CUBERT_CUBE_ATOMIC2_(CUBERT_CUBE_ATOMIC_ADD_F64_, buf, __VA_ARGS__)
#define CUBERT_CUBE_ATOMIC_ADD_F64_(p, v) cubert_atomic_add_f64_((p), (v))
/* `G(&(buf)[i], v)` for element i in range, else 0 (0.0f for ATOMIC_ADD_F32). */
#define CUBERT_CUBE_ATOMIC2_(G, buf, ...)                                            \
  CUBERT_PP_PICK_(2, CUBERT_CUBE_ATOMIC_AT_, CUBERT_CUBE_ATOMIC_SPLIT_, __VA_ARGS__) \
  (G, buf, __VA_ARGS__)
#define CUBERT_CUBE_ATOMIC_AT_(G, buf, i, v) \
  (CUBERT_CUBE_OK_(buf, i) ? G(&(buf)[i], v) : CUBERT_CUBE_ATOMIC_NONE_##G)
#define CUBERT_CUBE_ATOMIC_SPLIT_(G, buf, ...)                      \
  CUBERT_CUBE_ATOMIC_AT_(G, buf, CUBERT_PP_ARG1_OF_2_(__VA_ARGS__), \
                         CUBERT_PP_ARG2_OF_2_(__VA_ARGS__))
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_GATOMIC_ADD_ 0
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_GATOMIC_SUB_ 0
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_GATOMIC_MIN_ 0
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_GATOMIC_MAX_ 0
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_GATOMIC_XCHG_ 0
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_ATOMIC_ADD_F32_ 0.0f
#define CUBERT_CUBE_ATOMIC_NONE_CUBERT_CUBE_ATOMIC_ADD_F64_ ((double)0)
/* Three expressions (i, e, d): beyond the exact count, a statement expression holds them as the
   C parser splits them, typed as the buffer's elements (32-bit integers: `+ 0` drops the
   qualifiers, OpenCL's address space among them). GCC, clang and clang-based OpenCL compilers. */
#define ATOMIC_CAS(buf, ...)                                                              \
  CUBERT_PP_PICK_(3, CUBERT_CUBE_ATOMIC_CAS_, CUBERT_CUBE_ATOMIC_CAS_SPLIT_, __VA_ARGS__) \
  (buf, __VA_ARGS__)
#define CUBERT_CUBE_ATOMIC_CAS_(buf, i, e, d) \
  (CUBERT_CUBE_OK_(buf, i) ? CUBERT_CUBE_GATOMIC_CAS_(&(buf)[i], e, d) : 0)
#define CUBERT_CUBE_ATOMIC_CAS_SPLIT_(buf, ...)                                \
  __extension__({                                                              \
    const struct {                                                             \
      uint64_t i;                                                              \
      __typeof__((buf)[0] + 0) e, d;                                           \
    } cubert_cas_ = {__VA_ARGS__};                                             \
    CUBERT_CUBE_ATOMIC_CAS_(buf, cubert_cas_.i, cubert_cas_.e, cubert_cas_.d); \
  })

/* Cube-level reduce and scan (docs/kernels.md, "Cube-level helpers"), spelled alike on both
   sides: each side defines its tree (CUBERT_CUBE_REDUCE_, CUBERT_CUBE_SCAN_) and its minimum and
   maximum (CUBERT_CUBE_OP_MIN_, CUBERT_CUBE_OP_MAX_: a NaN loses to a number) below. */
#define CUBERT_CUBE_OP_SUM_(a, b) ((a) + (b))
/* `value` may be any expression; scratch and dst (an array, an lvalue) are the last two
   arguments the preprocessor sees (CUBERT_PP_ROT2_). */
#define CUBE_REDUCE_SUM(...) \
  CUBERT_PP_ROT2_(CUBERT_CUBE_REDUCE_ROT_, CUBERT_CUBE_OP_SUM_, __VA_ARGS__)
#define CUBE_REDUCE_MIN(...) \
  CUBERT_PP_ROT2_(CUBERT_CUBE_REDUCE_ROT_, CUBERT_CUBE_OP_MIN_, __VA_ARGS__)
#define CUBE_REDUCE_MAX(...) \
  CUBERT_PP_ROT2_(CUBERT_CUBE_REDUCE_ROT_, CUBERT_CUBE_OP_MAX_, __VA_ARGS__)
#define CUBE_SCAN_INCLUSIVE_SUM(...) CUBERT_PP_ROT2_(CUBERT_CUBE_SCAN_ROT_, 0, __VA_ARGS__)
#define CUBE_SCAN_EXCLUSIVE_SUM(...) CUBERT_PP_ROT2_(CUBERT_CUBE_SCAN_ROT_, 1, __VA_ARGS__)
#define CUBERT_CUBE_REDUCE_ROT_(OP, scratch, dst, ...) \
  CUBERT_CUBE_REDUCE_(OP, (__VA_ARGS__), scratch, dst)
#define CUBERT_CUBE_SCAN_ROT_(exclusive, scratch, dst, ...) \
  CUBERT_CUBE_SCAN_(exclusive, (__VA_ARGS__), scratch, dst)

/* Flags every definition of this file carries (CUBE_NEEDS_FP64, above). */
#ifdef CUBE_NEEDS_FP64
#define CUBERT_CUBE_FILE_FLAGS_ CUBERT_KERNEL_NEEDS_FP64
#else
#define CUBERT_CUBE_FILE_FLAGS_ 0
#endif
/* The build options every definition of this file carries (CUBE_OPENCL_OPTIONS, above). */
#ifdef CUBE_OPENCL_OPTIONS
#define CUBERT_CUBE_OPENCL_OPTIONS_ CUBE_OPENCL_OPTIONS
#else
#define CUBERT_CUBE_OPENCL_OPTIONS_ 0
#endif

/* ---- the two sides ----------------------------------------------------------------------------
   A kernel file is compiled twice: as C for the CPU server (cube_cpu.h) and, flattened by the
   preprocessor with CUBERT_CUBE_OPENCL defined, as OpenCL C (cube_opencl.h). Each half defines
   every name of the reference above for its side. */
#if defined(CUBERT_CUBE_OPENCL)
#include "cubert/cube_opencl.h"
#else
#include "cubert/cube_cpu.h"
#endif

/* The per-kernel switch to the fiber form: the same kernel, a name the phase transform skips. */
#define CUBE_KERNEL_FIBERS(...) CUBE_KERNEL(__VA_ARGS__)

#endif /* CUBERT_CUBE_H */
