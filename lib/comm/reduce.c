/* cubert — host-side reduction of staged chunks (transport.h): the in-process transport and
   the MPI transport both reduce host memory with these. Plain loops the compiler vectorises;
   the element order is fixed (left to right over the inputs), so float sums do not depend on
   how the caller splits the work. */
#include "comm/reduce.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
      case CUBERT_REDUCE_MEAN:                                      \
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
    case CUBERT_REDUCE_MEAN:
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

/* The mean's division of a finished sum by the member count `n` (comm.h states the rule).
   f32 divides in double and rounds once: the correctly rounded quotient, which the OpenCL
   device combination (backends/opencl/comm_reduce.c) computes the same way, so both paths
   agree bit for bit. i32 divides the (wrapped) sum truncating toward zero, as C does. */
static void mean_divide(void *acc, size_t count, cubert_dtype dtype, size_t n) {
  switch (dtype) {
    case CUBERT_DTYPE_F32: {
      float *a = acc;
      for (size_t i = 0; i < count; ++i) a[i] = (float)((double)a[i] / (double)n);
      break;
    }
    case CUBERT_DTYPE_F64: {
      double *a = acc;
      for (size_t i = 0; i < count; ++i) a[i] = a[i] / (double)n;
      break;
    }
    case CUBERT_DTYPE_I32: {
      int32_t *a = acc;
      for (size_t i = 0; i < count; ++i) a[i] = (int32_t)((int64_t)a[i] / (int64_t)n);
      break;
    }
    default:
      break;
  }
}

/* Blocks of this many bytes: the block is reduced in a scratch buffer that stays in cache
   while the inputs stream by, then copied to every output. Outputs may alias inputs (a host
   buffer reduced in place): each block of every input is read before that block of any
   output is written. */
#define REDUCE_BLOCK_BYTES (16u << 10)

/* Copies a reduced block out. The outputs are staging slots a device reads next, or device
   buffers of the CPU server: with non-temporal stores (x86 SSE2) the lines are written
   without being read first, a third less memory traffic for a two-input reduction, which is
   what bounds the collectives on a host whose memory bandwidth the DMA engines share
   (lib/comm/README.md). Unaligned heads and tails use plain stores. */
static void store_block(char *dst, const unsigned char *src, size_t bytes) {
#ifdef __SSE2__
  size_t head = (size_t)(-(uintptr_t)dst & 15);
  if (head > bytes) head = bytes;
  memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
    _mm_stream_si128((__m128i *)(dst + i), a);
    _mm_stream_si128((__m128i *)(dst + i + 16), b);
    _mm_stream_si128((__m128i *)(dst + i + 32), c);
    _mm_stream_si128((__m128i *)(dst + i + 48), d);
  }
  memcpy(dst + i, src + i, bytes - i);
#else
  memcpy(dst, src, bytes);
#endif
}

void cubert_comm_host_reduce_n(void *const *out, size_t nout, const void *const *in, size_t n,
                               size_t count, cubert_dtype dtype, cubert_reduce_op op,
                               size_t mean_of) {
  size_t es = cubert_comm_dtype_size(dtype);
  if (!es || n == 0 || count == 0) return;
  _Alignas(64) unsigned char scratch[REDUCE_BLOCK_BYTES];
  size_t block = REDUCE_BLOCK_BYTES / es;
  for (size_t begin = 0; begin < count; begin += block) {
    size_t len = count - begin < block ? count - begin : block;
    memcpy(scratch, (const char *)in[0] + begin * es, len * es);
    for (size_t k = 1; k < n; ++k)
      cubert_comm_host_reduce(scratch, (const char *)in[k] + begin * es, len, dtype, op);
    if (op == CUBERT_REDUCE_MEAN && mean_of > 1) mean_divide(scratch, len, dtype, mean_of);
    for (size_t o = 0; o < nout; ++o)
      if (out[o]) store_block((char *)out[o] + begin * es, scratch, len * es);
  }
#ifdef __SSE2__
  _mm_sfence(); /* the streamed stores are visible before the caller reports the part done */
#endif
}
