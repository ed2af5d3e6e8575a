/* cubert_op_matmul: checks, then C = alpha * A B through an autotuned kernel, then the beta
   pass where beta != 0.

   Why beta is a separate pass: cubert_tune_execute runs the candidates several times on one
   scratch copy of what they write (tune/scratch.h), so a tuned launch that overwrites its output
   gives every run, and every candidate, the same result to compare. With beta == 0 the kernels
   write alpha * A B straight into c; otherwise they write it into a dense scratch tensor t and
   matmul_beta_<t> computes c = t + beta * c once (an extra O(M N) pass next to the O(M N K)
   product, and beta == 0 never reads c, so NaN there cannot propagate).

   The kernels (kernels/matmul.cube.c) take any strides: every view (transposed, column-major,
   pitched, broadcast batch) is passed as offsets and strides; the tiled kernels take fast,
   unguarded loads for whole tiles of operands with an inner stride of 1. The tune key holds
   the anchored M, N, K and batch count, the layout class of a and b (row-major, column-major
   or other) and the dtype. On the CPU server the f32 kernels come in up to three builds of
   their C side (baseline, x86-64-v3, x86-64-v4: CMake's cubert_add_kernel_cpu_variants); the
   widest the CPU runs is used. */
#include "ops/matmul.h"

#include <string.h>

#include "cubert/geometry.h"
#include "cubert/kernels.h"
#include "cubert/ops.h"
#include "cubert/tune.h"
#include "cubert_kernel_variants.h" /* CUBERT_KERNEL_VARIANT_*: the CPU variants built */
#include "launch_1d.h"
#include "ops/cpu_variant.h"
#include "ops/known_good.h"
#include "ops/operand.h"
#include "tune/tuner.h"

#ifdef CUBERT_KERNEL_VARIANT_x86v3
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_simple_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_tile32x32_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_tile64x64_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_tile128x64_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_tile128x256c_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_vec8x32_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_big128k8_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_big128k16_f32;
extern const cubert_kernel_def cubert_kernel_x86v3_matmul_big128k16mn_f32;
#endif
#ifdef CUBERT_KERNEL_VARIANT_x86v4
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_simple_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_tile32x32_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_tile64x64_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_tile128x64_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_tile128x256c_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_vec8x32_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_big128k8_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_big128k16_f32;
extern const cubert_kernel_def cubert_kernel_x86v4_matmul_big128k16mn_f32;
#endif

enum {
  MM_SIMPLE,
  MM_TILE32,
  MM_TILE64,
  MM_TILE128,
  MM_TILE128C,
  MM_VEC,
  MM_BIG8,
  MM_BIG16,
  MM_BIG16MN,
  MM_KINDS
};
enum { MM_INFO_WORDS = 20 };

/* Block of C per cube (tiled kinds) or per unit (MM_VEC). */
static const uint32_t mm_tile_m[MM_KINDS] = {0, 32, 64, 128, 128, 8, 128, 128, 128};
static const uint32_t mm_tile_n[MM_KINDS] = {0, 32, 64, 64, 256, 32, 128, 128, 128};

/* What a candidate launches with. */
typedef struct mm_args {
  cubert_dtype dtype;
  int cpu_server;
  cubert_handle *bufs[3]; /* a, b, out */
  uint64_t info[MM_INFO_WORDS];
  uint64_t m, n, k, batches;
  cubert_tune_output result; /* where the product goes (CUBERT_AUTOTUNE_CHECKS) */
} mm_args;

static int mm_output(const void *args, cubert_tune_output *out) {
  *out = ((const mm_args *)args)->result;
  return 1;
}

static const cubert_kernel_def *mm_kernel(const mm_args *args, int kind) {
  if (args->dtype == CUBERT_DTYPE_F64) {
    static const cubert_kernel_def *const f64[MM_KINDS] = {&cubert_kernel_matmul_simple_f64,
                                                           &cubert_kernel_matmul_tile32x32_f64,
                                                           &cubert_kernel_matmul_tile64x64_f64,
                                                           &cubert_kernel_matmul_tile128x64_f64,
                                                           &cubert_kernel_matmul_tile128x256c_f64,
                                                           NULL /* MM_VEC: f32 only */,
                                                           NULL /* MM_BIG8: f32 only */,
                                                           NULL /* MM_BIG16: f32 only */,
                                                           NULL /* MM_BIG16MN: f32 only */};
    return f64[kind];
  }
  /* Only the CPU server runs the C side; on OpenCL every build is the same program, so the
     baseline definition is used there (one program build, not three). */
  if (args->cpu_server) {
    const cubert_ops_cpu_level level = cubert_ops_cpu_level_get();
    (void)level;
#ifdef CUBERT_KERNEL_VARIANT_x86v4
    if (level >= CUBERT_OPS_CPU_X86V4) {
      static const cubert_kernel_def *const v4[MM_KINDS] = {
          &cubert_kernel_x86v4_matmul_simple_f32,       &cubert_kernel_x86v4_matmul_tile32x32_f32,
          &cubert_kernel_x86v4_matmul_tile64x64_f32,    &cubert_kernel_x86v4_matmul_tile128x64_f32,
          &cubert_kernel_x86v4_matmul_tile128x256c_f32, &cubert_kernel_x86v4_matmul_vec8x32_f32,
          &cubert_kernel_x86v4_matmul_big128k8_f32,     &cubert_kernel_x86v4_matmul_big128k16_f32,
          &cubert_kernel_x86v4_matmul_big128k16mn_f32};
      return v4[kind];
    }
#endif
#ifdef CUBERT_KERNEL_VARIANT_x86v3
    if (level >= CUBERT_OPS_CPU_X86V3) {
      static const cubert_kernel_def *const v3[MM_KINDS] = {
          &cubert_kernel_x86v3_matmul_simple_f32,       &cubert_kernel_x86v3_matmul_tile32x32_f32,
          &cubert_kernel_x86v3_matmul_tile64x64_f32,    &cubert_kernel_x86v3_matmul_tile128x64_f32,
          &cubert_kernel_x86v3_matmul_tile128x256c_f32, &cubert_kernel_x86v3_matmul_vec8x32_f32,
          &cubert_kernel_x86v3_matmul_big128k8_f32,     &cubert_kernel_x86v3_matmul_big128k16_f32,
          &cubert_kernel_x86v3_matmul_big128k16mn_f32};
      return v3[kind];
    }
#endif
  }
  static const cubert_kernel_def *const f32[MM_KINDS] = {
      &cubert_kernel_matmul_simple_f32,       &cubert_kernel_matmul_tile32x32_f32,
      &cubert_kernel_matmul_tile64x64_f32,    &cubert_kernel_matmul_tile128x64_f32,
      &cubert_kernel_matmul_tile128x256c_f32, &cubert_kernel_matmul_vec8x32_f32,
      &cubert_kernel_matmul_big128k8_f32,     &cubert_kernel_matmul_big128k16_f32,
      &cubert_kernel_matmul_big128k16mn_f32};
  return f32[kind];
}

static cubert_status mm_launch(cubert_client *client, const mm_args *args, int kind) {
  const cubert_kernel_args kargs = {
      .buffers = args->bufs, .buffer_count = 3, .info = args->info, .info_count = MM_INFO_WORDS};
  if (kind == MM_SIMPLE)
    return cubert_launch_1d(client, mm_kernel(args, kind), args->m * args->n * args->batches,
                            &kargs);
  if (kind == MM_VEC)
    return cubert_launch_1d(client, mm_kernel(args, kind),
                            (args->m + 7) / 8 * ((args->n + 31) / 32) * args->batches, &kargs);
  const uint64_t cx = (args->n + mm_tile_n[kind] - 1) / mm_tile_n[kind];
  const uint64_t cy = (args->m + mm_tile_m[kind] - 1) / mm_tile_m[kind];
  return cubert_client_launch(
      client, mm_kernel(args, kind),
      cubert_cube_count_new_3d((uint32_t)cx, (uint32_t)cy, (uint32_t)args->batches),
      cubert_cube_dim_new_3d(16, 16, 1), &kargs);
}

static cubert_status mm_simple(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_SIMPLE);
}
static cubert_status mm_tile32(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_TILE32);
}
static cubert_status mm_tile64(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_TILE64);
}
static cubert_status mm_tile128(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_TILE128);
}
static cubert_status mm_tile128c(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_TILE128C);
}
static cubert_status mm_vec(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_VEC);
}
static cubert_status mm_big8(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_BIG8);
}
static cubert_status mm_big16(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_BIG16);
}
static cubert_status mm_big16mn(cubert_client *c, const void *a) {
  return mm_launch(c, a, MM_BIG16MN);
}

/* A tiled candidate needs a 16 x 16 cube and its cube count within the device's limits; the
   larger tiles only where the product fills at least one of their blocks in each direction
   (smaller products would compute mostly zeros). */
static int mm_tile_valid_limits(const cubert_client *client, const mm_args *args, int kind) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p || p->hardware.max_units_per_cube < 256 || p->hardware.max_cube_dim[0] < 16 ||
      p->hardware.max_cube_dim[1] < 16)
    return 0;
  const uint64_t cx = (args->n + mm_tile_n[kind] - 1) / mm_tile_n[kind];
  const uint64_t cy = (args->m + mm_tile_m[kind] - 1) / mm_tile_m[kind];
  const uint64_t shared = mm_kernel(args, kind)->shared_bytes;
  if (p->hardware.max_shared_memory_size && shared > p->hardware.max_shared_memory_size) return 0;
  if (cx > p->hardware.max_cube_count[0] || cy > p->hardware.max_cube_count[1] ||
      args->batches > p->hardware.max_cube_count[2])
    return 0;
  return 1;
}
static int mm_tile_valid(const cubert_client *client, const mm_args *args, int kind) {
  if (!mm_tile_valid_limits(client, args, kind)) return 0;
  if (kind == MM_TILE32) return 1;
  /* On the CPU server (GCC vectorises each phase across the units) the 128 x 64 block spills
     its 32 accumulators and the consecutive-column block turns B reads into gathers: both run
     10-30x slower than 64 x 64 there (bench/matmul.c), so they are not even measured. They
     exist for OpenCL devices: large GPU tiles, and PoCL, whose LLVM does not vectorise across
     work-items around an inner loop but packs a unit's 16 consecutive columns (SLP): there
     128 x 256c runs about 2x the 64 x 64 kernel. */
  if (args->cpu_server && (kind == MM_TILE128 || kind == MM_TILE128C)) return 0;
  return args->m >= mm_tile_m[kind] && args->n >= mm_tile_n[kind];
}
static int mm_tile32_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_tile_valid(c, a, MM_TILE32);
}
static int mm_tile64_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_tile_valid(c, a, MM_TILE64);
}
static int mm_tile128c_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_tile_valid(c, a, MM_TILE128C);
}
static int mm_tile128_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_tile_valid(c, a, MM_TILE128);
}
/* The vector-register unit kernel (f32) is for CPUs behind OpenCL, whose compiler (PoCL's LLVM)
   vectorises inside a unit but not across the units of the tiled kernels' inner loops: there
   it runs several times the tiled kernels (bench/matmul.c). GPUs are left out: its units read
   A column-wise, uncoalesced, so it could only lose, and measuring it at 4096^2 would cost
   seconds of tuning. The CPU server is left out too: GCC vectorises the tiled kernels' phases
   across units already. It needs at least one whole 8 x 32 block. */
static int mm_vec_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  const mm_args *args = a;
  const cubert_device_properties *p = cubert_client_properties(c);
  return p && p->type == CUBERT_DEVICE_TYPE_OPENCL_CPU && args->dtype == CUBERT_DTYPE_F32 &&
         args->m >= 8 && args->n >= 32;
}
static _Thread_local int forced = -1;

/* The 128 x 128 kernels (8 x 8 outputs per unit, double-buffered shared tiles) are for GPUs:
   on CPUs their 64 vector accumulators per unit spill (CPU server) or run near scalar speed
   (PoCL, which vectorises inside a unit only where a unit's work is one contiguous run), so
   the tuner measures them only on GPU devices and on products that fill at least one block
   in each direction. A forced candidate (tests) runs anywhere and at any size. */
static int mm_big_valid(const cubert_client *client, const mm_args *args, int kind) {
  if (args->dtype != CUBERT_DTYPE_F32 || !mm_tile_valid_limits(client, args, kind)) return 0;
  if (forced >= 0) return 1;
  const cubert_device_properties *p = cubert_client_properties(client);
  return !args->cpu_server && p->type == CUBERT_DEVICE_TYPE_OPENCL_GPU &&
         args->m >= mm_tile_m[kind] && args->n >= mm_tile_n[kind];
}
static int mm_big8_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_big_valid(c, a, MM_BIG8);
}
static int mm_big16_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  return mm_big_valid(c, a, MM_BIG16);
}

/* Operand layouts for big128k16_mn (info words of kernels/matmul.cube.c): A "runs along M"
   when it is column-major (unit stride along M, at least M along K), B "runs along N" when it
   is row-major; A is packable when it is row-major (unit stride along K, rows at least K
   apart: its buffer holds at least M x K elements, so the scratch is no larger), B when it is
   column-major. */
static bool mm_a_along_m(const mm_args *args) {
  return args->info[6] == 1 && args->info[7] >= args->m;
}
static bool mm_b_along_n(const mm_args *args) {
  return args->info[11] == 1 && args->info[10] >= args->n;
}
static bool mm_a_packable(const mm_args *args) {
  return args->info[7] == 1 && args->info[6] >= args->k && !mm_a_along_m(args);
}
static bool mm_b_packable(const mm_args *args) {
  return args->info[10] == 1 && args->info[11] >= args->k && !mm_b_along_n(args);
}

/* Copies one operand's matrix (element (o, kk) at x0 + o s_o + kk s_k, O = M or N) into the
   row-major K x O scratch `to`, which then runs along O: copy's tiled transpose. */
static cubert_status mm_pack(cubert_client *client, cubert_handle *from, uint64_t x0, uint64_t s_o,
                             uint64_t s_k, uint64_t o, uint64_t k, cubert_handle *to) {
  const cubert_tensor src = {.handle = from,
                             .rank = 2,
                             .shape = {k, o},
                             .strides = {s_k, s_o},
                             .elem_size = 4,
                             .dtype = CUBERT_DTYPE_F32,
                             .offset = x0};
  const cubert_tensor dst = {.handle = to,
                             .rank = 2,
                             .shape = {k, o},
                             .strides = {o, 1},
                             .elem_size = 4,
                             .dtype = CUBERT_DTYPE_F32};
  return cubert_op_copy(client, &src, &dst);
}

/* big128k16_mn on packed operands: a row-major A and a column-major B are first copied into
   scratch that runs along M / N (as CLBlast's pre-processing kernels do), so the product takes
   the layout its interior loop is compiled for. On the H200 that loop is 1.2x faster than the
   general one's on a row-major A (43.4 against 36.1 TFLOP/s at 4096, the copy included); the
   tuner times the copies with the product. An operand shared by all batches (batch stride 0)
   is packed once; otherwise each batch is packed, then multiplied, in turn (one matrix of
   scratch per operand; the stream orders the reuse). */
static cubert_status mm_big16_packed(cubert_client *client, const void *p) {
  const mm_args *args = p;
  const uint64_t m = args->m, n = args->n, k = args->k, first = args->info[16];
  const bool pa = mm_a_packable(args), pb = mm_b_packable(args);
  const bool per_batch = (pa && args->info[5] != 0) || (pb && args->info[9] != 0);
  cubert_handle *sa = NULL, *sb = NULL;
  cubert_status st = NULL;
  if (pa) st = cubert_client_empty(client, (size_t)(m * k * 4), &sa);
  if (!st && pb) st = cubert_client_empty(client, (size_t)(k * n * 4), &sb);
  mm_args on = *args;
  if (pa) { /* offset, batch stride, along M, along K */
    on.bufs[0] = sa;
    on.info[4] = on.info[5] = 0;
    on.info[6] = 1;
    on.info[7] = m;
  }
  if (pb) { /* offset, batch stride, along K, along N */
    on.bufs[1] = sb;
    on.info[8] = on.info[9] = 0;
    on.info[10] = n;
    on.info[11] = 1;
  }
  for (uint64_t b = 0; !st && b < (per_batch ? args->batches : 1); ++b) {
    const uint64_t bt = first + b;
    if (pa && (b == 0 || args->info[5]))
      st = mm_pack(client, args->bufs[0], args->info[4] + bt * args->info[5], args->info[6],
                   args->info[7], m, k, sa);
    if (!st && pb && (b == 0 || args->info[9]))
      st = mm_pack(client, args->bufs[1], args->info[8] + bt * args->info[9], args->info[11],
                   args->info[10], n, k, sb);
    if (!st && per_batch) {
      on.batches = on.info[3] = 1;
      on.info[16] = bt;
    }
    if (!st) st = mm_launch(client, &on, MM_BIG16MN);
  }
  cubert_handle_release(sa);
  cubert_handle_release(sb);
  return st;
}
/* big128k16 compiled for an A along M and a B along N (MB_MN): where the big kernels run and
   the operands have that layout; forced (tests), any layout (the general loop). */
static int mm_big16mn_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  const mm_args *args = a;
  if (!mm_big_valid(c, args, MM_BIG16MN)) return 0;
  return forced >= 0 || (mm_a_along_m(args) && mm_b_along_n(args));
}
/* Where the big kernels run and at least one operand is packable, the other along M / N or
   packable. Packing per batch launches one product per batch, so there each product must
   fill the device (a block per compute unit); forced (tests), anywhere. */
static int mm_packed_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)k;
  const mm_args *args = a;
  if (!mm_big_valid(c, args, MM_BIG16MN) || args->k == 0) return 0;
  if (forced >= 0) return 1;
  const bool pa = mm_a_packable(args), pb = mm_b_packable(args);
  if (!(pa || pb) || !(pa || mm_a_along_m(args)) || !(pb || mm_b_along_n(args))) return 0;
  const bool per_batch = (pa && args->info[5] != 0) || (pb && args->info[9] != 0);
  const uint64_t blocks = (args->m + 127) / 128 * ((args->n + 127) / 128);
  return !per_batch || args->batches == 1 ||
         blocks >= cubert_client_properties(c)->hardware.num_compute_units;
}
/* The simple kernel reads every A and B element from memory K times over: it is a candidate
   only for small products (at most 2^22 multiply-adds, or a thin C), where a tiled cube would
   mostly idle; measuring it on large ones would take seconds. */
static int mm_simple_valid(const cubert_client *c, const cubert_tune_key *k, const void *a) {
  (void)c;
  (void)k;
  const mm_args *args = a;
  const uint64_t flops = args->m * args->n * (args->k ? args->k : 1) * args->batches;
  return flops <= (1u << 22) || args->m < 8 || args->n < 8;
}

/* First valid candidate = the default with CUBERT_AUTOTUNE=off. */
static const cubert_tune_candidate mm_candidates[] = {
    {"tile64x64", mm_tile64, mm_tile64_valid, 0},
    {"tile128x64", mm_tile128, mm_tile128_valid, 0},
    {"tile128x256c", mm_tile128c, mm_tile128c_valid, 0},
    {"tile32x32", mm_tile32, mm_tile32_valid, 0},
    {"simple", mm_simple, mm_simple_valid, 0},
    {"vec8x32", mm_vec, mm_vec_valid, 0},
    {"big128k8", mm_big8, mm_big8_valid, 0},
    {"big128k16", mm_big16, mm_big16_valid, 0},
    {"big128k16_packed", mm_big16_packed, mm_packed_valid, 0},
    {"big128k16_mn", mm_big16mn, mm_big16mn_valid, 0},
};
enum { MM_CANDIDATES = sizeof mm_candidates / sizeof mm_candidates[0] };
/* One set per dtype: their winners differ (f64 halves the vector width). Bump the checksum
   when the kernels change in ways that move the winners (0x6d6d0007: big128k16_mn, and
   packed A and B through it). */
static const cubert_tune_set mm_set_f32 = {"matmul_f32", mm_candidates, MM_CANDIDATES, 0x6d6d0007,
                                           mm_output};
static const cubert_tune_set mm_set_f64 = {"matmul_f64", mm_candidates, MM_CANDIDATES, 0x6d6d0004,
                                           mm_output};

const cubert_tune_set *cubert_ops_matmul_tune_set(void) {
  return &mm_set_f32;
}

void cubert_ops_matmul_force_candidate(int index) {
  forced = index;
}

/* The product through the forced candidate (cubert_ops_matmul_force_candidate), or the tuner. */
static cubert_status mm_execute(cubert_client *client, const cubert_tune_set *set,
                                const cubert_tune_key *key, const mm_args *args,
                                const cubert_tune_call *call) {
  if (forced < 0) return cubert_tune_execute_call(client, set, key, args, call);
  if (forced >= MM_CANDIDATES || !mm_candidates[forced].valid(client, key, args))
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE, "matmul: candidate %d does not fit", forced);
  cubert_status st = mm_candidates[forced].launch(client, args);
  /* A tile beyond the device's shared memory or the kernel's unit limit is unfit here. */
  if (st && (cubert_status_code(st) == CUBERT_CODE_UNITS ||
             cubert_status_code(st) == CUBERT_CODE_SHARED_MEMORY)) {
    cubert_status_free(st);
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "matmul: candidate %d exceeds a limit of this device", forced);
  }
  return st;
}

/* 0 row-major (inner stride 1), 1 column-major (outer stride 1), 2 other. */
static uint64_t mm_layout_class(uint64_t s_outer, uint64_t s_inner) {
  return s_inner == 1 ? 0 : s_outer == 1 ? 1 : 2;
}

static uint64_t mm_scalar_bits(cubert_dtype dtype, double v) {
  if (dtype == CUBERT_DTYPE_F64) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
  }
  return cubert_kernel_info_f32((float)v);
}

/* Strides of a rank-2 or rank-3 operand: batch (0 for rank 2 or a batch of 1), rows, columns. */
static void mm_strides(const cubert_tensor *t, uint64_t out[3]) {
  const uint32_t r = t->rank;
  out[0] = r == 3 && t->shape[0] > 1 ? t->strides[0] : 0;
  out[1] = t->strides[r - 2];
  out[2] = t->strides[r - 1];
}

/* The info words of the inputs: M, N, K, a's and b's offsets and strides, alpha and beta (c's
   words and the batch's are set per launch). */
static void mm_info_inputs(uint64_t *info, const mm_args *args, const cubert_tensor *a,
                           const uint64_t sa[3], const cubert_tensor *b, const uint64_t sb[3],
                           double alpha, double beta) {
  info[0] = args->m;
  info[1] = args->n;
  info[2] = args->k;
  info[4] = a->offset;
  info[5] = sa[0];
  info[6] = sa[1];
  info[7] = sa[2];
  info[8] = b->offset;
  info[9] = sb[0];
  info[10] = sb[1];
  info[11] = sb[2];
  info[17] = mm_scalar_bits(args->dtype, alpha);
  info[18] = mm_scalar_bits(args->dtype, beta);
}

/* The tuning key: anchored M, N, K and batch count, the layout classes of a and b, the dtype.
   The key has room for these six fields, so adding them cannot fail. */
static void mm_key(cubert_tune_key *key, const mm_args *args, uint64_t batches,
                   const uint64_t sa[3], const uint64_t sb[3]) {
  (void)cubert_tune_key_add_anchored(key, args->m);
  (void)cubert_tune_key_add_anchored(key, args->n);
  (void)cubert_tune_key_add_anchored(key, args->k);
  (void)cubert_tune_key_add_anchored(key, batches);
  (void)cubert_tune_key_add(key, mm_layout_class(sa[1], sa[2]) * 3 + mm_layout_class(sb[1], sb[2]));
  (void)cubert_tune_key_add(key, (uint64_t)args->dtype);
}

/* The operands' ranks and shapes: a (M x K) times b (K x N) into c (M x N), each of rank 2 or 3
   (batched; c batched when a or b is), a batched a or b with c's batch count or 1.
   INVALID_ARGUMENT. */
static cubert_status check_shapes(const cubert_tensor *a, const cubert_tensor *b,
                                  const cubert_tensor *c) {
  const cubert_tensor *ops[3] = {a, b, c};
  static const char *const names[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i)
    if (ops[i]->rank != 2 && ops[i]->rank != 3)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "matmul: %s has rank %u; matmul takes rank 2 (rows x columns) "
                                "or 3 (batch x rows x columns)",
                                names[i], ops[i]->rank);
  if (c->rank == 2 && (a->rank == 3 || b->rank == 3))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "matmul: %s has rank 3 (batched) but c has rank 2",
                              a->rank == 3 ? "a" : "b");
  const uint32_t ra = a->rank - 2, rb = b->rank - 2, rc = c->rank - 2;
  const uint64_t m = a->shape[ra], k = a->shape[ra + 1], n = b->shape[rb + 1];
  if (b->shape[rb] != k)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "matmul: a.shape[%u] is %llu but b.shape[%u] is %llu (K, the "
                              "columns of a and the rows of b, must agree)",
                              ra + 1, (unsigned long long)k, rb, (unsigned long long)b->shape[rb]);
  if (c->shape[rc] != m)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "matmul: c.shape[%u] is %llu but a.shape[%u] is %llu (M)", rc,
                              (unsigned long long)c->shape[rc], ra, (unsigned long long)m);
  if (c->shape[rc + 1] != n)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "matmul: c.shape[%u] is %llu but b.shape[%u] is %llu (N)", rc + 1,
                              (unsigned long long)c->shape[rc + 1], rb + 1, (unsigned long long)n);
  const uint64_t batches = c->rank == 3 ? c->shape[0] : 1;
  for (int i = 0; i < 2; ++i)
    if (ops[i]->rank == 3 && ops[i]->shape[0] != batches && ops[i]->shape[0] != 1)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "matmul: %s.shape[0] is %llu but c.shape[0] is %llu (the batch; "
                                "1 shares one matrix among all batches)",
                                names[i], (unsigned long long)ops[i]->shape[0],
                                (unsigned long long)batches);
  return NULL;
}

/* c = t + beta * c for the batches [first, first + args->batches), t being their slice of
   `scratch`, or beta * c without a product (K == 0, scratch NULL). */
static cubert_status launch_beta(cubert_client *client, const cubert_tensor *c, const mm_args *args,
                                 cubert_handle *scratch, uint64_t first, const uint64_t sc[3],
                                 bool has_product) {
  uint64_t binfo[MM_INFO_WORDS];
  memcpy(binfo, args->info, sizeof binfo);
  binfo[12] = c->offset;
  binfo[13] = sc[0];
  binfo[14] = sc[1];
  binfo[15] = sc[2];
  binfo[19] = has_product;
  cubert_status st = NULL;
  cubert_handle *view = NULL;
  if (scratch) {
    const uint64_t bytes = args->m * args->n * c->elem_size;
    st = cubert_handle_view(scratch, first * bytes, args->batches * bytes, &view);
  }
  cubert_handle *bbufs[2] = {view ? view : c->handle, c->handle};
  const cubert_kernel_args bargs = {
      .buffers = bbufs, .buffer_count = 2, .info = binfo, .info_count = MM_INFO_WORDS};
  if (!st)
    st = cubert_launch_1d(client,
                          c->dtype == CUBERT_DTYPE_F64 ? &cubert_kernel_matmul_beta_f64
                                                       : &cubert_kernel_matmul_beta_f32,
                          args->m * args->n * args->batches, &bargs);
  cubert_handle_release(view);
  return st;
}

/* How the product is tuned: with the known-good table, and a and b declared read-only (the
   candidates only read them, so tuning makes no scratch copy of them, tune/scratch.h) unless
   one shares its allocation with c. `inputs` receives the declared handles. */
static cubert_tune_call mm_call(cubert_handle *inputs[2], const cubert_tensor *a,
                                const cubert_ops_extent *ea, const cubert_tensor *b,
                                const cubert_ops_extent *eb, const cubert_ops_extent *ec) {
  cubert_tune_call call = {
      .known_good = cubert_ops_known_good, .read_only = inputs, .args_bytes = sizeof(mm_args)};
  if (ea->memory != ec->memory) inputs[call.read_only_count++] = a->handle;
  if (eb->memory != ec->memory) inputs[call.read_only_count++] = b->handle;
  return call;
}

cubert_status(cubert_op_matmul)(cubert_client *client, double alpha, const cubert_tensor *a,
                                const cubert_tensor *b, double beta, const cubert_tensor *c) {
  static const char op[] = "matmul";
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, op));
  cubert_ops_extent ea, eb, ec;
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "a", a, CUBERT_OPS_FLOATS, false, &ea));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "b", b, CUBERT_OPS_FLOATS, false, &eb));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "c", c, CUBERT_OPS_FLOATS, true, &ec));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(op, "a", a, "c", c));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(op, "b", b, "c", c));
  CUBERT_RETURN_IF_ERROR(check_shapes(a, b, c));
  const uint32_t ra = a->rank - 2, rb = b->rank - 2;
  const uint64_t m = a->shape[ra], k = a->shape[ra + 1], n = b->shape[rb + 1];
  const uint64_t batches = c->rank == 3 ? c->shape[0] : 1;
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, op, "c", c->dtype));
  const cubert_device_properties *props = cubert_client_properties(client);
  if (!props) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "matmul: the client is released");
  /* The kernels index rows and columns in 32 bits inside a cube count. */
  if (m > UINT32_MAX || n > UINT32_MAX || batches > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "matmul: M, N and the batch count must be below 2^32 (M %llu, N "
                              "%llu, batches %llu)",
                              (unsigned long long)m, (unsigned long long)n,
                              (unsigned long long)batches);
  if (m == 0 || n == 0 || batches == 0) return NULL;

  mm_args args = {.dtype = c->dtype,
                  .cpu_server = props->type == CUBERT_DEVICE_TYPE_CPU_SERVER,
                  .m = m,
                  .n = n,
                  .k = k};
  uint64_t sa[3], sb[3], sc[3];
  mm_strides(a, sa);
  mm_strides(b, sb);
  mm_strides(c, sc);
  uint64_t *info = args.info;
  mm_info_inputs(info, &args, a, sa, b, sb, alpha, beta);

  /* Product into c (beta == 0) or into a dense scratch t (beta != 0). K == 0: no product. */
  cubert_handle *scratch = NULL;
  const bool has_product = k > 0;
  if (has_product && beta != 0.0) {
    CUBERT_RETURN_IF_ERROR(
        cubert_client_empty(client, (size_t)(batches * m * n * c->elem_size), &scratch));
  }
  args.bufs[0] = a->handle;
  args.bufs[1] = b->handle;
  args.bufs[2] = scratch ? scratch : c->handle;
  args.result = cubert_ops_tune_output(c, c->handle, 1e-4, 1e-10);
  if (scratch) {
    args.result.handle = scratch;
    args.result.offset = 0;
    args.result.count = batches * m * n;
  }
  info[12] = scratch ? 0 : c->offset;
  info[13] = scratch ? m * n : sc[0];
  info[14] = scratch ? n : sc[1];
  info[15] = scratch ? 1 : sc[2];

  cubert_handle *inputs[2];
  const cubert_tune_call call = mm_call(inputs, a, &ea, b, &eb, &ec);
  cubert_tune_key key = {0};
  cubert_status st = NULL;
  mm_key(&key, &args, batches, sa, sb);
  const cubert_tune_set *set = c->dtype == CUBERT_DTYPE_F64 ? &mm_set_f64 : &mm_set_f32;
  /* The z cube count carries the batch: launch at most max_cube_count[2] batches at once. */
  uint64_t per_launch = props->hardware.max_cube_count[2] ? props->hardware.max_cube_count[2] : 1;
  if (per_launch > 65535) per_launch = 65535;
  for (uint64_t first = 0; first < batches && !st; first += per_launch) {
    args.batches = batches - first < per_launch ? batches - first : per_launch;
    info[3] = args.batches;
    info[16] = first;
    if (has_product) st = mm_execute(client, set, &key, &args, &call);
    if (!st && (!has_product || scratch))
      st = launch_beta(client, c, &args, scratch, first, sc, has_product);
  }
  cubert_handle_release(scratch);
  return st;
}
