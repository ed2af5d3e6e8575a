/* Scalar references and input data shared by the kernel-library tests (kernels_cpu.c,
   kernels_opencl.c). Every reference is a plain loop written from the documentation in
   cubert/kernels.h, independent of the kernels' code. */
#ifndef CUBERT_TESTS_KERNELS_REFERENCE_H
#define CUBERT_TESTS_KERNELS_REFERENCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/kernels.h"

/* Slack elements after n in every buffer, filled with a pattern the kernels must not touch. */
#define KREF_SLACK 37
#define KREF_SENTINEL 0xDEADBEEFu

/* One elementwise kernel with its buffer count and scalar word. */
typedef struct kref_elementwise {
  const cubert_kernel_def *def;
  uint32_t buffer_count; /* all hold n + KREF_SLACK 4-byte elements */
  int is_float;
  uint64_t scalar; /* info[1], when the kernel has one */
  uint32_t info_count;
} kref_elementwise;

static const kref_elementwise kref_elementwise_cases[] = {
    {&cubert_kernel_fill_u32, 1, 0, 0x3FC00000u, 2},
    {&cubert_kernel_add_f32, 3, 1, 0, 1},
    {&cubert_kernel_add_i32, 3, 0, 0, 1},
    {&cubert_kernel_mul_f32, 3, 1, 0, 1},
    {&cubert_kernel_mul_i32, 3, 0, 0, 1},
    {&cubert_kernel_saxpy_f32, 2, 1, 0x3FC00000u /* 1.5f */, 2},
};
#define KREF_ELEMENTWISE_COUNT (sizeof kref_elementwise_cases / sizeof kref_elementwise_cases[0])

/* Input data. Floats are small integers and halves, so sums and products (fused or not) are
   exact and results can be compared bit for bit; ints sit near INT32_MAX, so add and mul
   overflow and the wrap-around is checked. The last buffer (the output, or y of saxpy) starts
   as data too, and every buffer's slack holds KREF_SENTINEL. */
static inline void kref_elementwise_init(const kref_elementwise *c, uint32_t *const *buffers,
                                         uint64_t n) {
  for (uint32_t b = 0; b < c->buffer_count; ++b) {
    for (uint64_t i = 0; i < n; ++i) {
      if (c->is_float) {
        float v = (float)((int64_t)((i * (7 + b)) % 23) - 11) * (b == 1 ? 0.5f : 1.0f);
        memcpy(&buffers[b][i], &v, sizeof v);
      } else {
        buffers[b][i] = (uint32_t)INT32_MAX - (uint32_t)(i * (b + 1)) + (uint32_t)(b * 977);
      }
    }
    for (uint64_t i = n; i < n + KREF_SLACK; ++i) buffers[b][i] = KREF_SENTINEL;
  }
}

/* The kernel's effect, element by element, on n elements. */
static inline void kref_elementwise_run(const kref_elementwise *c, uint32_t *const *buffers,
                                        uint64_t n) {
  const cubert_kernel_def *d = c->def;
  for (uint64_t i = 0; i < n; ++i) {
    if (d == &cubert_kernel_fill_u32) {
      buffers[0][i] = (uint32_t)c->scalar;
    } else if (d == &cubert_kernel_saxpy_f32) {
      float a, x, y;
      uint32_t bits = (uint32_t)c->scalar;
      memcpy(&a, &bits, 4);
      memcpy(&x, &buffers[0][i], 4);
      memcpy(&y, &buffers[1][i], 4);
      y = a * x + y;
      memcpy(&buffers[1][i], &y, 4);
    } else if (c->is_float) {
      float a, b, r;
      memcpy(&a, &buffers[0][i], 4);
      memcpy(&b, &buffers[1][i], 4);
      r = d == &cubert_kernel_add_f32 ? a + b : a * b;
      memcpy(&buffers[2][i], &r, 4);
    } else {
      buffers[2][i] = d == &cubert_kernel_add_i32 ? buffers[0][i] + buffers[1][i]
                                                  : buffers[0][i] * buffers[1][i];
    }
  }
}

/* Index of the first differing 4-byte element of two buffers of `count` elements, or -1. */
static inline int64_t kref_first_diff(const uint32_t *got, const uint32_t *want, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i)
    if (got[i] != want[i]) return (int64_t)i;
  return -1;
}

/* ---- copy_strided ---------------------------------------------------------------------- */

typedef struct kref_copy {
  const char *what;
  uint32_t rank;
  uint64_t shape[CUBERT_KERNEL_COPY_MAX_RANK];
  uint64_t strides[CUBERT_KERNEL_COPY_MAX_RANK];
} kref_copy;

/* Transposes, pitched rows (unit inner stride, padded rows), a broadcast (stride 0), rank 0,
   rank 1 with a stride, odd shapes in 3-D and the full rank. */
static const kref_copy kref_copy_cases[] = {
    {"transpose 5x7", 2, {7, 5}, {1, 7}},
    {"pitched 4x6 rows of 8", 2, {4, 6}, {8, 1}},
    {"broadcast row", 2, {3, 5}, {0, 1}},
    {"scalar", 0, {0}, {0}},
    {"vector stride 3", 1, {11}, {3}},
    {"rows of every other element", 2, {3, 4}, {9, 2}},
    {"3-D permuted 3x4x5", 3, {5, 3, 4}, {1, 20, 5}},
    {"3-D pitched 2x3x7", 3, {2, 3, 7}, {40, 9, 1}},
    {"rank 8", 8, {2, 1, 3, 1, 2, 2, 1, 3}, {144, 72, 24, 24, 12, 3, 3, 1}},
};
#define KREF_COPY_COUNT (sizeof kref_copy_cases / sizeof kref_copy_cases[0])

/* Elements in the copy (product of the shape). */
static inline uint64_t kref_copy_count(const kref_copy *c) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < c->rank; ++d) n *= c->shape[d];
  return n;
}
/* Source elements the copy may read: the largest offset + 1. */
static inline uint64_t kref_copy_src_count(const kref_copy *c) {
  uint64_t last = 0;
  for (uint32_t d = 0; d < c->rank; ++d) last += (c->shape[d] - 1) * c->strides[d];
  return last + 1;
}
/* The info words of the kernel: rank, elem_size, n, shape, strides. Returns the count. */
static inline uint32_t kref_copy_info(const kref_copy *c, uint64_t elem, uint64_t *info) {
  info[0] = c->rank;
  info[1] = elem;
  info[2] = kref_copy_count(c);
  for (uint32_t d = 0; d < c->rank; ++d) {
    info[3 + d] = c->shape[d];
    info[3 + c->rank + d] = c->strides[d];
  }
  return 3 + 2 * c->rank;
}
/* Reference: walks the destination with nested-loop counters (an odometer over the shape,
   outermost first) and copies element by element. */
static inline void kref_copy_run(const kref_copy *c, uint64_t elem, const uint8_t *src,
                                 uint8_t *dst) {
  uint64_t coord[CUBERT_KERNEL_COPY_MAX_RANK] = {0};
  const uint64_t n = kref_copy_count(c);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t offset = 0;
    for (uint32_t d = 0; d < c->rank; ++d) offset += coord[d] * c->strides[d];
    memcpy(dst + i * elem, src + offset * elem, elem);
    for (uint32_t d = c->rank; d-- > 0;) {
      if (++coord[d] < c->shape[d]) break;
      coord[d] = 0;
    }
  }
}
/* Byte pattern of source element bytes: distinct for the first 2^24 bytes. */
static inline void kref_fill_bytes(uint8_t *p, uint64_t count, uint32_t seed) {
  for (uint64_t i = 0; i < count; ++i) p[i] = (uint8_t)((i * 131u + seed) ^ (i >> 8));
}

/* ---- reduce_sum_f32 -------------------------------------------------------------------- */

/* Input element i: small integers, so every partial sum is exact whatever the order. */
static inline float kref_reduce_input(uint64_t i) {
  return (float)((int)(i % 13) - 5);
}

/* out[c] = sum of in[c*e .. min((c+1)*e, n)). */
static inline void kref_reduce_run(const float *in, uint64_t n, uint64_t e, float *out) {
  const uint64_t cubes = cubert_kernel_reduce_cube_count(n, e);
  for (uint64_t c = 0; c < cubes; ++c) {
    double sum = 0;
    for (uint64_t i = c * e; i < n && i < (c + 1) * e; ++i) sum += in[i];
    out[c] = (float)sum;
  }
}

#endif /* CUBERT_TESTS_KERNELS_REFERENCE_H */
