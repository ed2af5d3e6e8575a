/* Helpers for the operation suites (cts_ops_elementwise.c, cts_ops_cast.c, cts_ops_copy.c):
   views over handles with any shape, strides and offset, backed by a host copy of the whole
   handle, so that a test can compute the reference from the host copy and check both the
   view's elements and that nothing outside the view changed. */
#ifndef CUBERT_CTS_OPS_UTIL_H
#define CUBERT_CTS_OPS_UTIL_H

#include <math.h>
#include <stdint.h>

#include "cts.h"

static uint64_t ctv_rng_state = 0x9e3779b97f4a7c15ull;
static inline uint64_t ctv_rand(void) {
  uint64_t x = ctv_rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return ctv_rng_state = x;
}
/* Uniform in [lo, hi). */
static inline double ctv_uniform(double lo, double hi) {
  return lo + (hi - lo) * (double)(ctv_rand() >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct ctv {
  cubert_tensor t;
  uint8_t *host; /* the whole handle */
  uint64_t cap;  /* elements in the handle */
} ctv;

/* Element of the handle that row-major index i of the view lands on. */
static inline uint64_t ctv_pos(const cubert_tensor *t, uint64_t i) {
  uint64_t p = t->offset;
  for (uint32_t d = t->rank; d-- > 0;) {
    p += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return p;
}
static inline uint64_t ctv_count(const cubert_tensor *t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

/* Fills n elements of `dtype` with random values: floats in [lo, hi), integers random bits. */
static inline void ctv_fill(void *p, cubert_dtype dtype, uint64_t n, double lo, double hi) {
  for (uint64_t i = 0; i < n; ++i) switch (dtype) {
      case CUBERT_DTYPE_F32:
        ((float *)p)[i] = (float)ctv_uniform(lo, hi);
        break;
      case CUBERT_DTYPE_F64:
        ((double *)p)[i] = ctv_uniform(lo, hi);
        break;
      case CUBERT_DTYPE_I32:
      case CUBERT_DTYPE_U32:
        ((uint32_t *)p)[i] = (uint32_t)ctv_rand();
        break;
      default:
        ((uint8_t *)p)[i] = (uint8_t)ctv_rand();
        break;
    }
}

/* A view of rank `rank` over a fresh handle: strides NULL means row-major; the handle holds
   `offset` + the view's span + 3 spare elements, all random (floats in [lo, hi)). */
static inline ctv ctv_new_sized(cubert_dtype dtype, uint64_t elem, uint32_t rank,
                                const uint64_t *shape, const uint64_t *strides, uint64_t offset,
                                double lo, double hi) {
  ctv v;
  memset(&v, 0, sizeof v);
  v.t.rank = rank;
  v.t.dtype = dtype;
  v.t.elem_size = elem;
  v.t.offset = offset;
  uint64_t span = 0, stride = 1;
  int empty = 0;
  for (uint32_t d = rank; d-- > 0;) {
    v.t.shape[d] = shape[d];
    v.t.strides[d] = strides ? strides[d] : stride;
    stride *= shape[d] ? shape[d] : 1;
    if (shape[d] == 0)
      empty = 1;
    else
      span += (shape[d] - 1) * v.t.strides[d];
  }
  v.cap = offset + (empty ? 0 : span + 1) + 3;
  v.host = malloc(v.cap * elem);
  cr_assert_not_null(v.host);
  if (dtype == CUBERT_DTYPE_NONE || dtype == CUBERT_DTYPE_F16)
    ctv_fill(v.host, CUBERT_DTYPE_NONE, v.cap * elem, lo, hi);
  else
    ctv_fill(v.host, dtype, v.cap, lo, hi);
  v.t.handle = cts_buffer(v.host, v.cap * elem);
  return v;
}
static inline ctv ctv_new(cubert_dtype dtype, uint32_t rank, const uint64_t *shape,
                          const uint64_t *strides, uint64_t offset, double lo, double hi) {
  return ctv_new_sized(dtype, cubert_dtype_size(dtype), rank, shape, strides, offset, lo, hi);
}
/* Re-uploads the host copy (after a test changed it). */
static inline void ctv_upload(ctv *v) {
  ASSERT_OK(cubert_client_write(cts_client, v->t.handle, 0, v->host, v->cap * v->t.elem_size));
}
/* Reads the whole handle back (a fresh malloc'd copy). */
static inline uint8_t *ctv_download(const ctv *v) {
  uint8_t *p = malloc(v->cap * v->t.elem_size);
  cr_assert_not_null(p);
  cts_read(v->t.handle, p, v->cap * v->t.elem_size);
  return p;
}
/* Asserts that the elements of the handle outside the view kept their values. */
static inline void ctv_check_untouched(const ctv *v, const uint8_t *got) {
  const uint64_t e = v->t.elem_size, n = ctv_count(&v->t);
  uint8_t *mark = calloc(v->cap ? v->cap : 1, 1);
  for (uint64_t i = 0; i < n; ++i) mark[ctv_pos(&v->t, i)] = 1;
  for (uint64_t p = 0; p < v->cap; ++p)
    if (!mark[p])
      cr_assert(memcmp(got + p * e, v->host + p * e, e) == 0,
                "element %llu of the output's handle lies outside the view but changed",
                (unsigned long long)p);
  free(mark);
}
static inline void ctv_free(ctv *v) {
  cubert_handle_release(v->t.handle);
  free(v->host);
  memset(v, 0, sizeof *v);
}

/* Distance in units in the last place (0 for equal values and for two NaNs; huge for a sign
   or NaN mismatch). */
static inline uint64_t ctv_ulps32(float a, float b) {
  if (a == b || (isnan(a) && isnan(b))) return 0;
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return UINT64_MAX;
  return (uint64_t)(ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia);
}
static inline uint64_t ctv_ulps64(double a, double b) {
  if (a == b || (isnan(a) && isnan(b))) return 0;
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int64_t ia, ib;
  memcpy(&ia, &a, 8);
  memcpy(&ib, &b, 8);
  if ((ia < 0) != (ib < 0)) return UINT64_MAX;
  return ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static inline int cts_has_fp64(void) {
  return (cubert_client_properties(cts_client)->features & CUBERT_FEATURE_FP64) != 0;
}

#endif /* CUBERT_CTS_OPS_UTIL_H */
