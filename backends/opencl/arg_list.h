/* cubert — the OpenCL server's launches of program kernels (arg_list.c, cubert/program.h): the
   launch's argument list decoded from its info words, checked against the kernel's own
   arguments (clGetKernelArgInfo) and set in the kernel's order. Called with the device lock
   held. */
#ifndef CUBERT_OPENCL_ARG_LIST_H
#define CUBERT_OPENCL_ARG_LIST_H

#include <stdint.h>

#include "opencl/program.h"
#include "opencl/server.h"

/* One argument of a kernel as its program declares it (clGetKernelArgInfo). */
typedef struct cubert_ocl_arg_info {
  cl_uint address; /* CL_KERNEL_ARG_ADDRESS_* */
  char name[64];   /* the parameter's name, truncated */
  char type[64];   /* its type as written ("float4", "struct pair"), truncated */
} cubert_ocl_arg_info;

/* Checks `launch` (of a CUBERT_KERNEL_ARG_LIST kernel) against kernel object `k`: the count
   always, each argument's kind and a built-in type's size where the driver kept the argument
   info, and each buffer's offset against the device's base address alignment. *out_local is
   the bytes of the `__local` arguments. INVALID_ARGUMENT or UNSUPPORTED_IO_OPERATION naming the
   argument by position and name. */
cubert_status cubert_ocl_arg_list_check(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                        const cubert_launch *launch, uint64_t *out_local);
/* Sets every argument of `launch` on `k` in the kernel's order; buffers through
   cubert_ocl_kernel_set_mem with the argument cache's `valid`. */
cubert_status cubert_ocl_arg_list_set(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                      const cubert_launch *launch, int valid);

#endif /* CUBERT_OPENCL_ARG_LIST_H */
