/* cubert — checks of kernel-language kernels in the core (kernel_check.c). */
#ifndef CUBERT_KERNEL_CHECK_H
#define CUBERT_KERNEL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/kernel.h"
#include "cubert/server.h"

/* Writes "name: type, name: type" for the signature's buffers (scalars = 0) or named scalars
   (scalars = 1) into out[size], truncated to fit. */
void cubert_kernel_describe(const cubert_kernel_signature *sig, int scalars, char *out,
                            size_t size);

/* A kernel-language kernel's declared buffers against the launch's `count` bindings (count,
   element size, and an offset aligned for the element: UNSUPPORTED_IO_OPERATION otherwise);
   NULL for kernels without a signature. */
cubert_status cubert_kernel_check_signature(const cubert_kernel_def *kernel,
                                            const cubert_binding *bindings, uint32_t count);

/* A kernel-language kernel's named scalars against the launch's `info_count` words
   (INVALID_ARGUMENT naming the scalars when there are fewer words than scalars); NULL for
   kernels without a signature. */
cubert_status cubert_kernel_check_scalars(const cubert_kernel_def *kernel, uint32_t info_count);

/* The launch's `dynamic_bytes` of dynamic shared memory against the kernel's declaration (a
   kernel without a dynamic_shared array takes 0; one with it whole elements: INVALID_ARGUMENT)
   and, with its static shared struct, against `max_shared` bytes of `device_name`
   (SHARED_MEMORY). */
cubert_status cubert_kernel_check_dynamic_shared(const cubert_kernel_def *kernel,
                                                 uint64_t dynamic_bytes, uint64_t max_shared,
                                                 const char *device_name);

#endif
