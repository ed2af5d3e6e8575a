/** @file
   cubert — named scalar parameters of kernel-language kernels: a `(scalar, T, name)` entry of a
   kernel's parameter list (cubert/cube.h, docs/kernels.md) is info word k of its launches, k its
   position among the kernel's scalars. These calls fill those words, each checking the value's
   type and the position against the kernel's signature, so a launch cannot hand a kernel a float
   where it reads an integer. The words are the caller's (cubert_kernel_args.info): set them
   before the launch, which copies them. Thread-safe (they write only the caller's words). */
#ifndef CUBERT_KERNEL_SCALARS_H
#define CUBERT_KERNEL_SCALARS_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/kernel.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** Sets *out_position to the position of `kernel`'s named scalar `name`. INVALID_ARGUMENT (the
   message lists the kernel's scalars) when it has none of that name. */
CUBERT_API cubert_status cubert_kernel_scalar_find(const cubert_kernel_def *kernel,
                                                   const char *name, uint32_t *out_position);

/** Stores `value` in info[position] (its bytes in the word's low bytes, the rest 0), for the
   named scalar at `position` of `kernel`, whose type must be the one the function's name says
   (cubert_kernel_scalar_set_f32: float). INVALID_ARGUMENT, naming the kernel, the parameter and
   its type, when `kernel` has no signature or no scalar at `position`, the type differs (the
   message names the function to call), or info has fewer than position + 1 of `info_count`
   words; info is then unchanged. */
CUBERT_API cubert_status cubert_kernel_scalar_set_i8(const cubert_kernel_def *kernel,
                                                     uint64_t *info, uint32_t info_count,
                                                     uint32_t position, int8_t value);
/** As cubert_kernel_scalar_set_i8, for a uint8_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_u8(const cubert_kernel_def *kernel,
                                                     uint64_t *info, uint32_t info_count,
                                                     uint32_t position, uint8_t value);
/** As cubert_kernel_scalar_set_i8, for an int16_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_i16(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, int16_t value);
/** As cubert_kernel_scalar_set_i8, for a uint16_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_u16(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, uint16_t value);
/** As cubert_kernel_scalar_set_i8, for an int32_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_i32(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, int32_t value);
/** As cubert_kernel_scalar_set_i8, for a uint32_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_u32(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, uint32_t value);
/** As cubert_kernel_scalar_set_i8, for an int64_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_i64(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, int64_t value);
/** As cubert_kernel_scalar_set_i8, for a uint64_t scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_u64(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, uint64_t value);
/** As cubert_kernel_scalar_set_i8, for a float scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_f32(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, float value);
/** As cubert_kernel_scalar_set_i8, for a double scalar. */
CUBERT_API cubert_status cubert_kernel_scalar_set_f64(const cubert_kernel_def *kernel,
                                                      uint64_t *info, uint32_t info_count,
                                                      uint32_t position, double value);

CUBERT_EXTERN_C_END

#endif /* CUBERT_KERNEL_SCALARS_H */
