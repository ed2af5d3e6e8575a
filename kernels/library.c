/* The table of library kernels (kernels.h) and lookup by name. */
#include <stddef.h>
#include <string.h>

#include "cubert/kernels.h"

const cubert_kernel_def *const cubert_kernel_library[] = {
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
    NULL,
};

const cubert_kernel_def *cubert_kernel_find(const char *name) {
  if (name == NULL) return NULL;
  for (const cubert_kernel_def *const *k = cubert_kernel_library; *k != NULL; ++k)
    if (strcmp((*k)->name, name) == 0) return *k;
  return NULL;
}
