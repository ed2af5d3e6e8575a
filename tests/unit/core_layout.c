/* Unit tests of lib/layout.c: contiguous strides, the pitch rule of optimized layouts, packing
   of several tensors at aligned offsets, overflow and argument errors, contiguity checks. */
#include <criterion/criterion.h>
#include <string.h>

#include "cubert/layout.h"
#include "cubert/server.h"

static cubert_layout_desc desc_of(cubert_layout_strategy strategy, uint64_t elem_size,
                                  uint32_t rank, const uint64_t *shape) {
  cubert_layout_desc d;
  memset(&d, 0, sizeof(d));
  d.strategy = strategy;
  d.elem_size = elem_size;
  d.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) d.shape[i] = shape[i];
  return d;
}

static cubert_layout compute_ok(cubert_layout_desc d, uint64_t pitch_align) {
  cubert_layout out;
  cubert_status s = cubert_layout_compute(&d, pitch_align, &out);
  cr_assert_null(s, "%s", cubert_status_message(s));
  return out;
}

static void assert_strides(const cubert_layout *l, uint32_t rank, const uint64_t *expected) {
  cr_assert_eq(l->rank, rank);
  for (uint32_t i = 0; i < rank; ++i) {
    cr_assert_eq(l->strides[i], expected[i], "stride[%u] = %llu, expected %llu", i,
                 (unsigned long long)l->strides[i], (unsigned long long)expected[i]);
  }
}

static void assert_contains(const char *text, const char *needle) {
  cr_assert(strstr(text, needle), "expected \"%s\" in:\n%s", needle, text);
}

Test(core_layout, contiguous_row_major) {
  const uint64_t shape[3] = {2, 3, 4};
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_CONTIGUOUS, 4, 3, shape), 256);
  assert_strides(&l, 3, (const uint64_t[]){12, 4, 1});
  cr_assert_eq(l.size, 96);
  cr_assert_eq(l.offset, 0);
  cr_assert(cubert_layout_is_contiguous(3, shape, l.strides));
}

Test(core_layout, scalar_and_vector) {
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 8, 0, NULL), 256);
  cr_assert_eq(l.rank, 0);
  cr_assert_eq(l.size, 8);
  const uint64_t shape[1] = {5};
  l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 1, shape), 256); /* rank 1: contiguous */
  assert_strides(&l, 1, (const uint64_t[]){1});
  cr_assert_eq(l.size, 20);
}

Test(core_layout, optimized_narrow_row_aligns_to_next_pow2) {
  /* 5 floats = 20-byte rows; next_pow2(20) = 32 < pitch_align: pitch 32 bytes = 8 elements. */
  const uint64_t shape[2] = {3, 5};
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), 256);
  assert_strides(&l, 2, (const uint64_t[]){8, 1});
  cr_assert_eq(l.size, 2 * 32 + 20); /* padding of the last row excluded */
  cr_assert_not(cubert_layout_is_contiguous(2, shape, l.strides));
}

Test(core_layout, optimized_wide_row_aligns_to_pitch_align) {
  /* 250 floats = 1000-byte rows; aligned to 256: pitch 1024 bytes = 256 elements. */
  const uint64_t shape[3] = {2, 3, 250};
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 3, shape), 256);
  assert_strides(&l, 3, (const uint64_t[]){768, 256, 1});
  cr_assert_eq(l.size, (uint64_t)(5 * 1024 + 1000));
}

Test(core_layout, optimized_tiny_row_aligns_to_16_bytes) {
  const uint64_t shape[2] = {4, 2}; /* 8-byte rows */
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), 128);
  assert_strides(&l, 2, (const uint64_t[]){4, 1});
  cr_assert_eq(l.size, 3 * 16 + 8);
}

Test(core_layout, optimized_aligned_row_needs_no_padding) {
  const uint64_t shape[2] = {4, 64}; /* 256-byte rows */
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), 256);
  assert_strides(&l, 2, (const uint64_t[]){64, 1});
  cr_assert_eq(l.size, 1024);
  cr_assert(cubert_layout_is_contiguous(2, shape, l.strides));
}

Test(core_layout, pitch_never_doubles_a_row) {
  for (uint64_t cols = 4; cols < 600; cols += 7) {
    const uint64_t shape[2] = {3, cols};
    cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), 256);
    uint64_t pitch = l.strides[0] * 4, row = cols * 4;
    cr_assert_geq(pitch, row);
    cr_assert_lt(pitch, 2 * row, "cols %llu: pitch %llu", (unsigned long long)cols,
                 (unsigned long long)pitch);
    cr_assert_eq(pitch % 16, 0);
  }
}

Test(core_layout, cases_that_stay_contiguous) {
  const uint64_t shape[2] = {3, 5};
  const uint64_t contiguous[2] = {5, 1};
  /* pitch_align 0, 1 and below 16 */
  uint64_t aligns[3] = {0, 1, 8};
  for (int i = 0; i < 3; ++i) {
    cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), aligns[i]);
    assert_strides(&l, 2, contiguous);
  }
  /* the contiguous strategy ignores pitch_align */
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_CONTIGUOUS, 4, 2, shape), 256);
  assert_strides(&l, 2, contiguous);
  /* element size that is not a power of two */
  l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 12, 2, shape), 256);
  assert_strides(&l, 2, contiguous);
  cr_assert_eq(l.size, 180);
}

Test(core_layout, empty_tensor) {
  const uint64_t shape[2] = {0, 5};
  cubert_layout l = compute_ok(desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape), 256);
  cr_assert_eq(l.size, 0);
  cr_assert(cubert_layout_is_contiguous(2, shape, l.strides));
}

Test(core_layout, invalid_arguments) {
  const uint64_t shape[2] = {3, 5};
  cubert_layout out;
  cubert_layout_desc d = desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, shape);
  cubert_status s = cubert_layout_compute(&d, 48, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "pitch_align is 48");
  cubert_status_free(s);

  d.rank = CUBERT_MAX_RANK + 1;
  s = cubert_layout_compute(&d, 256, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "desc.rank is 9, maximum is 8");
  cubert_status_free(s);

  d = desc_of(CUBERT_LAYOUT_CONTIGUOUS, 0, 2, shape);
  s = cubert_layout_compute(&d, 256, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "elem_size is 0");
  cubert_status_free(s);

  s = cubert_layout_compute(NULL, 256, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
  s = cubert_layout_compute(&d, 256, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
}

Test(core_layout, overflow_is_buffer_too_big) {
  const uint64_t huge[2] = {1ull << 40, 1ull << 40};
  cubert_layout out;
  cubert_layout_desc d = desc_of(CUBERT_LAYOUT_CONTIGUOUS, 4, 2, huge);
  cubert_status s = cubert_layout_compute(&d, 0, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_BUFFER_TOO_BIG);
  cr_assert_eq(cubert_status_size(s), UINT64_MAX);
  assert_contains(cubert_status_message(s), "exceeds 2^64-1 bytes");
  cubert_status_free(s);

  const uint64_t wide_row[2] = {2, 1ull << 62};
  d = desc_of(CUBERT_LAYOUT_OPTIMIZED, 8, 2, wide_row);
  s = cubert_layout_compute(&d, 256, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_BUFFER_TOO_BIG);
  assert_contains(cubert_status_message(s), "a row of 4611686018427387904 elements of 8 bytes");
  cubert_status_free(s);

  /* The strides fit, the pitched span does not. */
  const uint64_t tall[2] = {1ull << 60, 5};
  d = desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, tall);
  s = cubert_layout_compute(&d, 256, &out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_BUFFER_TOO_BIG);
  cubert_status_free(s);
}

Test(core_layout, plan_packs_at_aligned_offsets) {
  const uint64_t a[1] = {10}, b[2] = {10, 10}, c[1] = {7};
  cubert_layout_desc descs[3] = {desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 1, a),
                                 desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 2, b),
                                 desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 1, c)};
  cubert_layout layouts[3];
  uint64_t total = 0;
  cr_assert_null(cubert_layout_plan(descs, 3, 0, 64, layouts, &total));
  cr_assert_eq(layouts[0].offset, 0);
  cr_assert_eq(layouts[0].size, 10);
  cr_assert_eq(layouts[1].offset, 64);
  cr_assert_eq(layouts[1].size, 100);
  cr_assert_eq(layouts[2].offset, 192);
  cr_assert_eq(layouts[2].size, 7);
  cr_assert_eq(total, 199);
  for (int i = 0; i < 3; ++i) cr_assert_eq(layouts[i].offset % 64, 0);
}

Test(core_layout, plan_with_pitched_tensors) {
  const uint64_t a[2] = {3, 5}, b[1] = {3};
  cubert_layout_desc descs[2] = {desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 2, a),
                                 desc_of(CUBERT_LAYOUT_OPTIMIZED, 4, 1, b)};
  cubert_layout layouts[2];
  uint64_t total = 0;
  cr_assert_null(cubert_layout_plan(descs, 2, 256, 128, layouts, &total));
  cr_assert_eq(layouts[0].strides[0], 8);
  cr_assert_eq(layouts[0].size, 84);
  cr_assert_eq(layouts[1].offset, 128);
  cr_assert_eq(total, 140);
}

Test(core_layout, plan_errors) {
  const uint64_t a[1] = {10};
  cubert_layout_desc descs[2] = {desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 1, a),
                                 desc_of(CUBERT_LAYOUT_CONTIGUOUS, 0, 1, a)};
  cubert_layout layouts[2];
  uint64_t total = 77;

  cubert_status s = cubert_layout_plan(descs, 1, 0, 48, layouts, &total);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "alignment is 48");
  cubert_status_free(s);
  s = cubert_layout_plan(descs, 1, 0, 0, layouts, &total);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);

  s = cubert_layout_plan(descs, 2, 0, 16, layouts, &total);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "descs[1].elem_size is 0");
  cubert_status_free(s);

  s = cubert_layout_plan(NULL, 2, 0, 16, layouts, &total);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);

  cr_assert_null(cubert_layout_plan(NULL, 0, 0, 16, NULL, &total));
  cr_assert_eq(total, 0);
}

Test(core_layout, plan_offset_overflow) {
  const uint64_t big[1] = {(1ull << 63) + 100};
  cubert_layout_desc descs[2] = {desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 1, big),
                                 desc_of(CUBERT_LAYOUT_CONTIGUOUS, 1, 1, big)};
  cubert_layout layouts[2];
  uint64_t total;
  cubert_status s = cubert_layout_plan(descs, 2, 0, 1ull << 62, layouts, &total);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_BUFFER_TOO_BIG);
  assert_contains(cubert_status_message(s), "descs[1]");
  cubert_status_free(s);
}

Test(core_layout, is_contiguous_rules) {
  const uint64_t shape[2] = {2, 3};
  cr_assert(cubert_layout_is_contiguous(2, shape, (const uint64_t[]){3, 1}));
  cr_assert_not(cubert_layout_is_contiguous(2, shape, (const uint64_t[]){4, 1}));
  cr_assert_not(cubert_layout_is_contiguous(2, shape, (const uint64_t[]){1, 2})); /* transposed */
  const uint64_t unit_dim[3] = {1, 2, 3};
  cr_assert(cubert_layout_is_contiguous(3, unit_dim, (const uint64_t[]){99, 3, 1}));
  cr_assert(cubert_layout_is_contiguous(0, NULL, NULL));
  cr_assert_not(cubert_layout_is_contiguous(2, NULL, NULL));
}

/* Found by tests/fuzz/fuzz_validators (issue 10): an optimized layout whose rows exceed 2^63
   bytes made the power-of-two search loop forever. The row alignment is the pitch alignment
   there, and the result is exact. */
Test(core_layout, rows_beyond_2_pow_63_bytes_terminate, .timeout = 10) {
  cubert_layout_desc d = {.strategy = CUBERT_LAYOUT_OPTIMIZED,
                          .rank = 2,
                          .shape = {1, (1ull << 62) + 1},
                          .elem_size = 2};
  cubert_layout l;
  cubert_status s = cubert_layout_compute(&d, 256, &l);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cr_expect_eq(l.strides[1], 1);
  cr_expect_eq(l.strides[0], (1ull << 62) + 128, "pitch: the row rounded up to 256 bytes");
  cr_expect_eq(l.size, (1ull << 63) + 2);
  d.shape[0] = 2; /* the second row ends past 2^64 bytes */
  s = cubert_layout_compute(&d, 256, &l);
  cr_assert_not_null(s);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_BUFFER_TOO_BIG, "%s", cubert_status_message(s));
  cubert_status_free(s);
}
