/* cubert — launches of program kernels (launch_args.c, cubert/program.h): the checks of a
   launch's argument list that depend on the server, called by every launch (launch.c). */
#ifndef CUBERT_LIB_LAUNCH_ARGS_H
#define CUBERT_LIB_LAUNCH_ARGS_H

#include "cubert/kernel.h"
#include "cubert/program.h"
#include "cubert/status.h"

/* For a kernel flagged CUBERT_KERNEL_ARG_LIST, before anything else of the launch is checked:
   UNAVAILABLE on a CPU server (`is_cpu`) when the kernel has no CPU function, INVALID_ARGUMENT
   when `args` do not come from cubert_client_launch_args, and on a CPU server SHARED_MEMORY when
   the `__local` arguments need more than the kernel's shared_bytes. NULL for other kernels. */
cubert_status cubert_launch_args_check(const cubert_kernel_def *kernel,
                                       const cubert_kernel_args *args, int is_cpu);

#endif /* CUBERT_LIB_LAUNCH_ARGS_H */
