/* cubert — checks of kernel-language kernels in the core (kernel_check.c). */
#ifndef CUBERT_KERNEL_CHECK_H
#define CUBERT_KERNEL_CHECK_H

#include <stdint.h>

#include "cubert/kernel.h"
#include "cubert/server.h"

/* A kernel-language kernel's declared buffers against the launch's `count` bindings (count,
   element size, and an offset aligned for the element: UNSUPPORTED_IO_OPERATION otherwise);
   NULL for kernels without a signature. */
cubert_status cubert_kernel_check_signature(const cubert_kernel_def *kernel,
                                            const cubert_binding *bindings, uint32_t count);

#endif
