/* cubert — host-side reduction of staged chunks (transport.h): the in-process transport and
   the MPI transport both reduce host memory with these. Plain loops the compiler vectorises;
   the element order is fixed (left to right over the inputs), so float sums do not depend on
   how the caller splits the work. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "comm/transport.h"

size_t cubert_comm_dtype_size(cubert_dtype dtype) {
  switch (dtype) {
    case CUBERT_DTYPE_F32:
      return 4;
    case CUBERT_DTYPE_F64:
      return 8;
    case CUBERT_DTYPE_I32:
      return 4;
    default:
      return 0;
  }
}

/* max/min that propagate NaN (as cubert_op_reduce): NaN wins over any number. */
#define NAN_MAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))
#define NAN_MIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))

#define REDUCE_LOOPS(T, MAXF, MINF)                                 \
  do {                                                              \
    T *a = acc;                                                     \
    const T *b = x;                                                 \
    switch (op) {                                                   \
      case CUBERT_REDUCE_SUM:                                       \
        for (size_t i = 0; i < count; ++i) a[i] = a[i] + b[i];      \
        break;                                                      \
      case CUBERT_REDUCE_MAX:                                       \
        for (size_t i = 0; i < count; ++i) a[i] = MAXF(a[i], b[i]); \
        break;                                                      \
      case CUBERT_REDUCE_MIN:                                       \
        for (size_t i = 0; i < count; ++i) a[i] = MINF(a[i], b[i]); \
        break;                                                      \
      default:                                                      \
        break;                                                      \
    }                                                               \
  } while (0)

#define INT_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define INT_MIN2(a, b) ((a) < (b) ? (a) : (b))

static void reduce_i32(int32_t *restrict acc, const int32_t *restrict x, size_t count,
                       cubert_reduce_op op) {
  switch (op) {
    case CUBERT_REDUCE_SUM: /* wraps: add as unsigned */
      for (size_t i = 0; i < count; ++i) acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)x[i]);
      break;
    case CUBERT_REDUCE_MAX:
      for (size_t i = 0; i < count; ++i) acc[i] = INT_MAX2(acc[i], x[i]);
      break;
    case CUBERT_REDUCE_MIN:
      for (size_t i = 0; i < count; ++i) acc[i] = INT_MIN2(acc[i], x[i]);
      break;
    default:
      break;
  }
}

static void reduce_f32(float *restrict acc, const float *restrict x, size_t count,
                       cubert_reduce_op op) {
  REDUCE_LOOPS(float, NAN_MAX, NAN_MIN);
}

static void reduce_f64(double *restrict acc, const double *restrict x, size_t count,
                       cubert_reduce_op op) {
  REDUCE_LOOPS(double, NAN_MAX, NAN_MIN);
}

void cubert_comm_host_reduce(void *acc, const void *x, size_t count, cubert_dtype dtype,
                             cubert_reduce_op op) {
  switch (dtype) {
    case CUBERT_DTYPE_F32:
      reduce_f32(acc, x, count, op);
      break;
    case CUBERT_DTYPE_F64:
      reduce_f64(acc, x, count, op);
      break;
    case CUBERT_DTYPE_I32:
      reduce_i32(acc, x, count, op);
      break;
    default:
      break;
  }
}

/* Blocks of this many bytes: the block is reduced in a scratch buffer that stays in cache
   while the inputs stream by, then copied to every output. Outputs may alias inputs (a host
   buffer reduced in place): each block of every input is read before that block of any
   output is written. */
#define REDUCE_BLOCK_BYTES (16u << 10)

void cubert_comm_host_reduce_n(void *const *out, size_t nout, const void *const *in, size_t n,
                               size_t count, cubert_dtype dtype, cubert_reduce_op op) {
  size_t es = cubert_comm_dtype_size(dtype);
  if (!es || n == 0 || count == 0) return;
  _Alignas(64) unsigned char scratch[REDUCE_BLOCK_BYTES];
  size_t block = REDUCE_BLOCK_BYTES / es;
  for (size_t begin = 0; begin < count; begin += block) {
    size_t len = count - begin < block ? count - begin : block;
    memcpy(scratch, (const char *)in[0] + begin * es, len * es);
    for (size_t k = 1; k < n; ++k)
      cubert_comm_host_reduce(scratch, (const char *)in[k] + begin * es, len, dtype, op);
    for (size_t o = 0; o < nout; ++o)
      if (out[o]) memcpy((char *)out[o] + begin * es, scratch, len * es);
  }
}
