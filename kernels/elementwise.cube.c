/* Elementwise library kernels (kernels.h gives their buffers and info words), in the kernel
   language (cubert/cube.h): one unit per element, units at or past n = info[0] do nothing.

   On the CPU each is one `omp simd` loop over the call's units with the accesses unchecked
   below the shortest buffer's length (LOAD_UNIT/STORE_UNIT), so the loops stream at the
   memory's bandwidth; bench/cpu_server.c measures them against the STREAM triad.

   i32 kernels compute on uint32_t: signed overflow is undefined in C and in OpenCL C, while
   unsigned arithmetic wraps, and the bits are the two's-complement result either way. */
#include "cubert/cube.h"

UNIT_KERNEL(noop, 0, NO_BUFFERS) {}

UNIT_KERNEL(fill_u32, INFO_U64(0), (uint32_t, out)) {
  STORE_UNIT(out, INFO_U32(1));
}

UNIT_KERNEL(add_f32, INFO_U64(0), (const float, a), (const float, b), (float, out)) {
  STORE_UNIT(out, LOAD_UNIT(a) + LOAD_UNIT(b));
}

UNIT_KERNEL(add_i32, INFO_U64(0), (const uint32_t, a), (const uint32_t, b), (uint32_t, out)) {
  STORE_UNIT(out, LOAD_UNIT(a) + LOAD_UNIT(b));
}

UNIT_KERNEL(mul_f32, INFO_U64(0), (const float, a), (const float, b), (float, out)) {
  STORE_UNIT(out, LOAD_UNIT(a) * LOAD_UNIT(b));
}

UNIT_KERNEL(mul_i32, INFO_U64(0), (const uint32_t, a), (const uint32_t, b), (uint32_t, out)) {
  STORE_UNIT(out, LOAD_UNIT(a) * LOAD_UNIT(b));
}

/* a * x + y rounds twice on both sides (contraction is off); fma() would fuse. */
UNIT_KERNEL(saxpy_f32, INFO_U64(0), (const float, x), (float, y)) {
  STORE_UNIT(y, INFO_F32(1) * LOAD_UNIT(x) + LOAD_UNIT(y));
}
