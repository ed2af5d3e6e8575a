/* The kernel library's C implementations, called directly with hand-built contexts (no CPU
   server): every range split into pieces as the server's chunking would, compared with the
   scalar references of kernels_reference.h, bound checks and slack included.

   The kernels call cubert_cpu_fail and cubert_cpu_sync_cube, which the CPU server defines.
   This file defines weak stand-ins: a fail that records the reason, and a barrier for cubes
   whose units run as threads here. When the real server's definitions are linked instead
   (they win over weak ones), the tests that need the stand-ins skip and say so; the
   conformance suite covers those paths through the server. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/kernels.h"
#include "kernels_reference.h"

/* ---- stand-ins for the CPU server's kernel services ---------------------------------------- */

static int fail_count;
static char fail_reason[512];

static void stand_in_fail(const cubert_cpu_ctx *ctx, const char *reason) {
  (void)ctx;
  ++fail_count;
  snprintf(fail_reason, sizeof fail_reason, "%s", reason);
}

void cubert_cpu_fail(const cubert_cpu_ctx *ctx, const char *reason)
    __attribute__((weak, alias("stand_in_fail")));

static void require_stand_in_fail(void) {
  if (cubert_cpu_fail != stand_in_fail)
    cr_skip_test(
        "the CPU server's cubert_cpu_fail is linked; the conformance suite covers "
        "kernel failure reports");
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* A 1-D launch context: count cubes of dim units, the given buffers and info. */
static cubert_cpu_ctx make_ctx(uint32_t count, uint32_t dim, void *const *buffers,
                               const uint64_t *bytes, uint32_t buffer_count, const uint64_t *info,
                               uint32_t info_count) {
  cubert_cpu_ctx ctx = {
      .cube_count = {count, 1, 1},
      .cube_dim = {dim, 1, 1},
      .buffers = buffers,
      .buffer_bytes = bytes,
      .info = info,
      .buffer_count = buffer_count,
      .info_count = info_count,
  };
  return ctx;
}

/* Runs ctx's whole launch through `fn`, `piece` units per call, last piece shorter. */
static void run_pieces(cubert_cpu_kernel_fn fn, cubert_cpu_ctx ctx, uint64_t piece) {
  const uint64_t total = (uint64_t)ctx.cube_count[0] * ctx.cube_count[1] * ctx.cube_count[2] *
                         cubert_cpu_units_per_cube(&ctx);
  for (uint64_t begin = 0; begin < total; begin += piece) {
    ctx.unit_begin = begin;
    ctx.unit_end = begin + piece < total ? begin + piece : total;
    fn(&ctx);
  }
}

/* ---- the library table -------------------------------------------------------------------- */

Test(kernels_cpu, library_table_lists_every_kernel_once) {
  const cubert_kernel_def *expected[] = {
      &cubert_kernel_noop,
      &cubert_kernel_fill_u32,
      &cubert_kernel_copy_strided,
      &cubert_kernel_add_f32,
      &cubert_kernel_add_i32,
      &cubert_kernel_mul_f32,
      &cubert_kernel_mul_i32,
      &cubert_kernel_saxpy_f32,
      &cubert_kernel_reduce_sum_f32,
      &cubert_kernel_matmul_simple_f32,
      &cubert_kernel_matmul_tile32x32_f32,
      &cubert_kernel_matmul_tile64x64_f32,
      &cubert_kernel_matmul_tile128x64_f32,
      &cubert_kernel_matmul_tile128x256c_f32,
      &cubert_kernel_matmul_vec8x32_f32,
      &cubert_kernel_matmul_big128k8_f32,
      &cubert_kernel_matmul_big128k16_f32,
      &cubert_kernel_matmul_big128k16mn_f32,
      &cubert_kernel_matmul_beta_f32,
      &cubert_kernel_matmul_simple_f64,
      &cubert_kernel_matmul_tile32x32_f64,
      &cubert_kernel_matmul_tile64x64_f64,
      &cubert_kernel_matmul_tile128x64_f64,
      &cubert_kernel_matmul_tile128x256c_f64,
      &cubert_kernel_matmul_beta_f64,
  };
  size_t count = 0;
  while (cubert_kernel_library[count] != NULL) ++count;
  cr_assert_eq(count, sizeof expected / sizeof expected[0]);
  for (size_t i = 0; i < count; ++i) {
    const cubert_kernel_def *k = cubert_kernel_library[i];
    cr_assert_eq(k, expected[i], "entry %zu", i);
    cr_assert_eq(cubert_kernel_find(k->name), k, "find(%s)", k->name);
    cr_assert_not_null(k->opencl_source, "%s has OpenCL C", k->name);
    cr_assert_not_null(k->cpu, "%s has a CPU implementation", k->name);
    char entry[64];
    snprintf(entry, sizeof entry, "%s", k->name);
    cr_assert_str_eq(k->opencl_entry, entry);
    cr_assert(strstr(k->opencl_source, entry) != NULL, "%s's source defines its entry", k->name);
    const int reduce = k == &cubert_kernel_reduce_sum_f32;
    const int tiled =
        strncmp(k->name, "matmul_tile", 11) == 0 || strncmp(k->name, "matmul_big", 10) == 0;
    cr_assert_eq(!!(k->flags & CUBERT_KERNEL_PHASED), reduce || tiled, "%s flags", k->name);
    cr_assert_eq(!!(k->flags & CUBERT_KERNEL_NEEDS_FP64), strstr(k->name, "_f64") != NULL,
                 "%s needs fp64 exactly when it is an f64 kernel", k->name);
    cr_assert_not_null(k->signature, "%s is a kernel-language kernel", k->name);
    if (reduce)
      cr_assert_eq(k->shared_bytes, CUBERT_KERNEL_REDUCE_SCRATCH * sizeof(float));
    else if (tiled)
      cr_assert_gt(k->shared_bytes, 0u, "%s stages tiles in shared memory", k->name);
    else
      cr_assert_eq(k->shared_bytes, 0u, "%s", k->name);
  }
  cr_assert_null(cubert_kernel_find("no_such_kernel"));
  cr_assert_null(cubert_kernel_find(NULL));
}

Test(kernels_cpu, info_helpers) {
  cr_assert_eq(cubert_kernel_info_f32(1.5f), 0x3FC00000u);
  cr_assert_eq(cubert_kernel_info_f32(-0.0f), 0x80000000u);
  cr_assert_eq(cubert_kernel_reduce_cube_count(0, 4), 0u);
  cr_assert_eq(cubert_kernel_reduce_cube_count(8, 4), 2u);
  cr_assert_eq(cubert_kernel_reduce_cube_count(9, 4), 3u);
  cr_assert_eq(cubert_kernel_reduce_cube_count(9, 0), 0u);
  cr_assert_eq(cubert_kernel_reduce_cube_count(UINT64_MAX, 1), UINT64_MAX);
}

Test(kernels_cpu, noop_touches_nothing) {
  /* NULL buffers and info: the test crashes if the kernel dereferenced anything. */
  run_pieces(cubert_kernel_noop.cpu, make_ctx(3, 5, NULL, NULL, 0, NULL, 0), 4);
}

/* ---- elementwise -------------------------------------------------------------------------- */

/* Sizes around the 16-element blocks of the loops and the 64-unit cubes used below. */
static const uint64_t elementwise_sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 1000, 1027};
static const uint64_t elementwise_pieces[] = {1, 7, 16, 33, 64, 1u << 20};

static void check_elementwise(const kref_elementwise *c, uint64_t n, uint64_t piece,
                              uint32_t cube_dim) {
  const uint64_t total = n + KREF_SLACK;
  uint32_t *got[3] = {0}, *want[3] = {0};
  uint64_t bytes[3];
  for (uint32_t b = 0; b < c->buffer_count; ++b) {
    got[b] = malloc(total * 4);
    want[b] = malloc(total * 4);
    bytes[b] = total * 4;
  }
  kref_elementwise_init(c, got, n);
  kref_elementwise_init(c, want, n);
  kref_elementwise_run(c, want, n);

  /* Enough cubes for n units and more: units past n must leave the slack alone. */
  const uint32_t cubes = (uint32_t)((n + KREF_SLACK) / cube_dim + 1);
  const uint64_t info[2] = {n, c->scalar};
  void *bufs[3] = {got[0], got[1], got[2]};
  cubert_cpu_ctx ctx = make_ctx(cubes, cube_dim, bufs, bytes, c->buffer_count, info, c->info_count);
  run_pieces(c->def->cpu, ctx, piece);

  for (uint32_t b = 0; b < c->buffer_count; ++b) {
    const int64_t diff = kref_first_diff(got[b], want[b], total);
    cr_assert_eq(diff, -1,
                 "%s n=%llu piece=%llu dim=%u: buffer %u element %lld is 0x%08x, expected 0x%08x",
                 c->def->name, (unsigned long long)n, (unsigned long long)piece, cube_dim, b,
                 (long long)diff, diff >= 0 ? got[b][diff] : 0, diff >= 0 ? want[b][diff] : 0);
    free(got[b]);
    free(want[b]);
  }
}

Test(kernels_cpu, elementwise_match_reference_over_chunked_ranges) {
  for (size_t k = 0; k < KREF_ELEMENTWISE_COUNT; ++k)
    for (size_t s = 0; s < sizeof elementwise_sizes / sizeof elementwise_sizes[0]; ++s)
      for (size_t p = 0; p < sizeof elementwise_pieces / sizeof elementwise_pieces[0]; ++p)
        check_elementwise(&kref_elementwise_cases[k], elementwise_sizes[s], elementwise_pieces[p],
                          64);
}

/* Cube dims that do not divide anything (and single-unit cubes, the CPU default shape). */
Test(kernels_cpu, elementwise_odd_cube_dims) {
  static const uint32_t dims[] = {1, 3, 100};
  for (size_t k = 0; k < KREF_ELEMENTWISE_COUNT; ++k)
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d)
      check_elementwise(&kref_elementwise_cases[k], 333, 29, dims[d]);
}

/* A call whose whole range lies past n writes nothing (the bound check, alone). */
Test(kernels_cpu, elementwise_range_past_n_writes_nothing) {
  for (size_t k = 0; k < KREF_ELEMENTWISE_COUNT; ++k) {
    const kref_elementwise *c = &kref_elementwise_cases[k];
    uint32_t *bufs[3] = {0};
    void *ptrs[3] = {0};
    uint32_t snapshot[3][64];
    uint64_t bytes[3] = {256, 256, 256};
    for (uint32_t b = 0; b < c->buffer_count; ++b) {
      ptrs[b] = bufs[b] = malloc(64 * 4);
      for (uint32_t i = 0; i < 64; ++i) bufs[b][i] = snapshot[b][i] = 0xA5A50000u + i + 64 * b;
    }
    const uint64_t info[2] = {10, c->scalar};
    cubert_cpu_ctx ctx = make_ctx(1, 64, ptrs, bytes, c->buffer_count, info, c->info_count);
    ctx.unit_begin = 10;
    ctx.unit_end = 64;
    c->def->cpu(&ctx);
    for (uint32_t b = 0; b < c->buffer_count; ++b) {
      cr_assert_eq(memcmp(bufs[b], snapshot[b], sizeof snapshot[b]), 0, "%s buffer %u",
                   c->def->name, b);
      free(bufs[b]);
    }
  }
}

/* A buffer shorter than n elements in checked mode (the default): the kernel never leaves it
   (its last element stays untouched), every element inside is right, nothing is reported. */
Test(kernels_cpu, elementwise_checked_mode_stays_inside_short_buffers) {
  enum { n = 100, cap = n + KREF_SLACK };
  for (size_t k = 0; k < KREF_ELEMENTWISE_COUNT; ++k) {
    const kref_elementwise *c = &kref_elementwise_cases[k];
    uint32_t data[3][cap], want[3][cap];
    uint32_t *bufs[3] = {data[0], data[1], data[2]}, *refs[3] = {want[0], want[1], want[2]};
    kref_elementwise_init(c, bufs, n);
    memcpy(want, data, sizeof want);
    kref_elementwise_run(c, refs, n - 1);
    const uint32_t out = c->buffer_count - 1; /* the output (y for saxpy) */
    const uint32_t last = data[out][n - 1];
    uint64_t bytes[3] = {4 * n, 4 * n, 4 * n};
    bytes[out] = 4 * (n - 1);
    const uint64_t info[2] = {n, c->scalar};
    fail_count = 0;
    run_pieces(c->def->cpu,
               make_ctx(4, 32, (void *const *)bufs, bytes, c->buffer_count, info, c->info_count),
               24);
    cr_assert_eq(fail_count, 0, "%s: %s", c->def->name, fail_reason);
    cr_assert_eq(data[out][n - 1], last, "%s wrote past its buffer", c->def->name);
    cr_assert_eq(memcmp(data[out], want[out], 4 * (n - 1)), 0, "%s: elements inside differ",
                 c->def->name);
  }
}

/* out == a: the in-place use kernels.h allows. */
Test(kernels_cpu, elementwise_in_place) {
  enum { n = 100 };
  float a[n], b[n], want[n];
  for (int i = 0; i < n; ++i) {
    a[i] = (float)(i % 9) - 4.0f;
    b[i] = (float)(i % 5) * 0.5f;
    want[i] = a[i] + b[i];
  }
  void *bufs[3] = {a, b, a};
  const uint64_t bytes[3] = {sizeof a, sizeof b, sizeof a};
  const uint64_t info[1] = {n};
  run_pieces(cubert_kernel_add_f32.cpu, make_ctx(2, 64, bufs, bytes, 3, info, 1), 17);
  cr_assert_eq(memcmp(a, want, sizeof a), 0);
}

/* ---- copy_strided ------------------------------------------------------------------------- */

static const uint64_t copy_elem_sizes[] = {1, 2, 3, 4, 8, 12};
static const uint64_t copy_pieces[] = {1, 2, 5, 13, 1u << 20};

static void check_copy(const kref_copy *c, uint64_t elem, uint64_t piece) {
  const uint64_t n = kref_copy_count(c), src_count = kref_copy_src_count(c);
  uint8_t *src = malloc(src_count * elem);
  uint8_t *got = malloc((n + KREF_SLACK) * elem), *want = malloc((n + KREF_SLACK) * elem);
  kref_fill_bytes(src, src_count * elem, (uint32_t)elem);
  memset(got, 0xCD, (n + KREF_SLACK) * elem);
  memset(want, 0xCD, (n + KREF_SLACK) * elem);
  kref_copy_run(c, elem, src, want);

  uint64_t info[3 + 2 * CUBERT_KERNEL_COPY_MAX_RANK];
  const uint32_t info_count = kref_copy_info(c, elem, info);
  void *bufs[2] = {src, got};
  const uint64_t bytes[2] = {src_count * elem, n * elem};
  fail_count = 0;
  run_pieces(cubert_kernel_copy_strided.cpu,
             make_ctx((uint32_t)(n / 4 + 2), 4, bufs, bytes, 2, info, info_count), piece);
  if (cubert_cpu_fail == stand_in_fail) cr_assert_eq(fail_count, 0, "%s", fail_reason);
  for (uint64_t i = 0; i < (n + KREF_SLACK) * elem; ++i)
    cr_assert_eq(got[i], want[i], "%s elem %llu piece %llu: byte %llu (element %llu)", c->what,
                 (unsigned long long)elem, (unsigned long long)piece, (unsigned long long)i,
                 (unsigned long long)(i / elem));
  free(src);
  free(got);
  free(want);
}

Test(kernels_cpu, copy_strided_matches_reference) {
  for (size_t k = 0; k < KREF_COPY_COUNT; ++k)
    for (size_t e = 0; e < sizeof copy_elem_sizes / sizeof copy_elem_sizes[0]; ++e)
      for (size_t p = 0; p < sizeof copy_pieces / sizeof copy_pieces[0]; ++p)
        check_copy(&kref_copy_cases[k], copy_elem_sizes[e], copy_pieces[p]);
}

/* Bad info words or buffers: nothing is written and exactly one failure is reported, by the
   call that holds unit 0, with the numbers in the message. */
static void check_copy_rejected(uint64_t *info, uint32_t info_count, uint64_t src_bytes,
                                uint64_t dst_bytes, const char *needle) {
  uint8_t src[256], dst[256];
  memset(src, 1, sizeof src);
  memset(dst, 0xCD, sizeof dst);
  void *bufs[2] = {src, dst};
  const uint64_t bytes[2] = {src_bytes, dst_bytes};
  fail_count = 0;
  fail_reason[0] = '\0';
  run_pieces(cubert_kernel_copy_strided.cpu, make_ctx(8, 8, bufs, bytes, 2, info, info_count), 5);
  cr_assert_eq(fail_count, 1, "one report for '%s', got %d", needle, fail_count);
  cr_assert(strstr(fail_reason, needle) != NULL, "'%s' in '%s'", needle, fail_reason);
  for (size_t i = 0; i < sizeof dst; ++i) cr_assert_eq(dst[i], 0xCD, "byte %zu written", i);
}

Test(kernels_cpu, copy_strided_rejects_inconsistent_info) {
  require_stand_in_fail();
  /* rank 9 > 8 */
  uint64_t big_rank[3 + 18] = {9, 4, 1};
  check_copy_rejected(big_rank, 21, 256, 256, "rank 9 exceeds the maximum of 8");
  /* rank 2 needs 7 words */
  uint64_t short_info[5] = {2, 4, 6, 2, 3};
  check_copy_rejected(short_info, 5, 256, 256, "needs 7 info words, got 5");
  /* n = 7 but shape 2x3 */
  uint64_t wrong_n[7] = {2, 4, 7, 2, 3, 3, 1};
  check_copy_rejected(wrong_n, 7, 256, 256, "n = 7 elements does not match");
  /* strides reach element 5*10 + 2 = 52: 53 * 4 bytes of source, only 200 given */
  uint64_t far[7] = {2, 4, 18, 6, 3, 10, 1};
  check_copy_rejected(far, 7, 200, 256, "needs 212 source bytes and 72 destination bytes");
  /* destination too small */
  uint64_t dst_small[7] = {2, 4, 6, 2, 3, 3, 1};
  check_copy_rejected(dst_small, 7, 256, 20, "the buffers hold 256 and 20");
  /* elem_size 0 */
  uint64_t no_elem[7] = {2, 0, 6, 2, 3, 3, 1};
  check_copy_rejected(no_elem, 7, 256, 256, "elem_size is 0");
  /* too few words for even the header */
  uint64_t header[2] = {0, 4};
  check_copy_rejected(header, 2, 256, 256, "needs 2 buffers (src, dst) and at least 3");
}

/* An empty tensor (a zero dimension) copies nothing and is not an error. */
Test(kernels_cpu, copy_strided_empty_tensor) {
  uint64_t info[7] = {2, 4, 0, 3, 0, 5, 1};
  uint8_t dst[16];
  memset(dst, 0xCD, sizeof dst);
  void *bufs[2] = {dst, dst};
  const uint64_t bytes[2] = {0, 0};
  fail_count = 0;
  run_pieces(cubert_kernel_copy_strided.cpu, make_ctx(2, 4, bufs, bytes, 2, info, 7), 3);
  cr_assert_eq(fail_count, 0, "%s", fail_reason);
  for (size_t i = 0; i < sizeof dst; ++i) cr_assert_eq(dst[i], 0xCD);
}

/* ---- reduce_sum_f32 ----------------------------------------------------------------------- */

/* Cube dim 1: one call per cube, without any scheduler. */
Test(kernels_cpu, reduce_sum_single_unit_cubes) {
  static const uint64_t sizes[][2] = {{0, 4}, {1, 1}, {10, 3}, {100, 7}, {1000, 64}, {999, 1000}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const uint64_t n = sizes[s][0], e = sizes[s][1];
    const uint64_t cubes = cubert_kernel_reduce_cube_count(n, e);
    float *in = malloc((n + 1) * sizeof(float));
    float got[200], want[200], scratch[CUBERT_KERNEL_REDUCE_SCRATCH];
    for (uint64_t i = 0; i < n; ++i) in[i] = kref_reduce_input(i);
    for (size_t i = 0; i < 200; ++i) got[i] = want[i] = -12345.0f;
    kref_reduce_run(in, n, e, want);

    /* Two extra cubes, as a spread cube count may launch: they must write nothing. */
    void *bufs[2] = {in, got};
    const uint64_t bytes[2] = {n * sizeof(float), (cubes + 2) * sizeof(float)};
    const uint64_t info[2] = {n, e};
    cubert_cpu_ctx ctx = make_ctx((uint32_t)cubes + 2, 1, bufs, bytes, 2, info, 2);
    ctx.shared = scratch;
    fail_count = 0;
    run_pieces(cubert_kernel_reduce_sum_f32.cpu, ctx, 1);
    cr_assert_eq(fail_count, 0, "%s", fail_reason);
    for (uint64_t c = 0; c < cubes + 2; ++c)
      cr_assert_eq(got[c], want[c], "n=%llu e=%llu cube %llu: %g, expected %g",
                   (unsigned long long)n, (unsigned long long)e, (unsigned long long)c,
                   (double)got[c], (double)want[c]);
    free(in);
  }
}

/* Multi-unit cubes with the stand-in barrier: each unit of a cube runs on its own thread (the
   CPU server uses cooperative contexts instead; the kernel cannot tell the difference). */
typedef struct unit_thread {
  cubert_cpu_ctx ctx;
  pthread_t thread;
} unit_thread;

/* Multi-unit cubes: reduce_sum_f32 is a phased kernel, called once per cube with the cube's
   whole unit range, its shared memory followed by a canary the kernel must not overwrite. */
static void run_cubes_threaded(cubert_cpu_ctx ctx) {
  const uint64_t units = cubert_cpu_units_per_cube(&ctx);
  const uint64_t cubes = (uint64_t)ctx.cube_count[0] * ctx.cube_count[1] * ctx.cube_count[2];
  cr_assert(cubert_kernel_reduce_sum_f32.flags & CUBERT_KERNEL_PHASED);
  const uint64_t shared_floats = cubert_kernel_reduce_sum_f32.shared_bytes / sizeof(float);
  float *scratch = malloc((shared_floats + 64) * sizeof(float));
  for (uint64_t i = shared_floats; i < shared_floats + 64; ++i) scratch[i] = -7.0f;
  for (uint64_t c = 0; c < cubes; ++c) {
    for (uint64_t i = 0; i < CUBERT_KERNEL_REDUCE_SCRATCH; ++i) scratch[i] = 1e30f; /* garbage */
    ctx.unit_begin = c * units;
    ctx.unit_end = (c + 1) * units;
    ctx.shared = scratch;
    cubert_kernel_reduce_sum_f32.cpu(&ctx);
  }
  for (uint64_t i = shared_floats; i < shared_floats + 64; ++i)
    cr_assert_eq(scratch[i], -7.0f, "shared memory overrun at float %llu", (unsigned long long)i);
  free(scratch);
}

Test(kernels_cpu, reduce_sum_multi_unit_cubes) {
  /* cube dims: power of two, odd, 2-D, 3-D non power of two, the CPU's largest cube */
  static const uint32_t dims[][3] = {{64, 1, 1}, {7, 1, 1}, {4, 4, 1}, {3, 5, 2}, {1024, 1, 1}};
  /* (n, elements per cube, cube count x, y): spread counts launch more cubes than needed */
  static const uint64_t shapes[][4] = {{1000, 256, 2, 2}, {77, 10, 3, 3}, {5000, 2500, 2, 1}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
      const uint64_t n = shapes[s][0], e = shapes[s][1];
      const uint64_t launched = shapes[s][2] * shapes[s][3];
      float *in = malloc(n * sizeof(float));
      float got[16], want[16];
      for (uint64_t i = 0; i < n; ++i) in[i] = kref_reduce_input(i);
      for (size_t i = 0; i < 16; ++i) got[i] = want[i] = -12345.0f;
      kref_reduce_run(in, n, e, want);
      void *bufs[2] = {in, got};
      const uint64_t bytes[2] = {n * sizeof(float), sizeof got};
      const uint64_t info[2] = {n, e};
      cubert_cpu_ctx ctx = make_ctx(0, 0, bufs, bytes, 2, info, 2);
      memcpy(ctx.cube_dim, dims[d], sizeof ctx.cube_dim);
      ctx.cube_count[0] = (uint32_t)shapes[s][2];
      ctx.cube_count[1] = (uint32_t)shapes[s][3];
      fail_count = 0;
      run_cubes_threaded(ctx);
      cr_assert_eq(fail_count, 0, "%s", fail_reason);
      for (uint64_t c = 0; c < launched; ++c)
        cr_assert_eq(got[c], want[c], "dim %ux%ux%u n=%llu e=%llu cube %llu: %g, expected %g",
                     dims[d][0], dims[d][1], dims[d][2], (unsigned long long)n,
                     (unsigned long long)e, (unsigned long long)c, (double)got[c], (double)want[c]);
      free(in);
    }
}

/* An output buffer too small for every cube in checked mode: the cubes that fit are right,
   the others write nothing, and nothing past the buffer changes. */
Test(kernels_cpu, reduce_sum_checked_small_output) {
  float in[10], out[4] = {7, 7, 7, 7}, want[4] = {7, 7, 7, 7},
                scratch[CUBERT_KERNEL_REDUCE_SCRATCH];
  for (int i = 0; i < 10; ++i) in[i] = kref_reduce_input((uint64_t)i);
  kref_reduce_run(in, 10, 4, want);
  void *bufs[2] = {in, out};
  const uint64_t bytes[2] = {sizeof in, 2 * sizeof(float)}; /* 3 outputs needed */
  const uint64_t info[2] = {10, 4};
  cubert_cpu_ctx ctx = make_ctx(3, 1, bufs, bytes, 2, info, 2);
  ctx.shared = scratch;
  fail_count = 0;
  run_pieces(cubert_kernel_reduce_sum_f32.cpu, ctx, 1);
  cr_assert_eq(fail_count, 0, "%s", fail_reason);
  cr_assert_eq(out[0], want[0]);
  cr_assert_eq(out[1], want[1]);
  cr_assert_eq(out[2], 7.0f);
  cr_assert_eq(out[3], 7.0f);
}
