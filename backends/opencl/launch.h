/* cubert — kernel launches on the OpenCL server (launch.c): argument setting, the cache of info
   word buffers, geometry and the enqueue, and the kernel-language calling convention with its
   validate record. Called with the device lock held. */
#ifndef CUBERT_OPENCL_LAUNCH_H
#define CUBERT_OPENCL_LAUNCH_H

#include <stdint.h>

#include "opencl/program.h"
#include "opencl/server.h"

/* Reads and clears the stream's validate record after its commands finished (launch.c): the
   first violation of a validate-mode kernel-language launch as an error, or NULL. */
cubert_status cubert_ocl_record_check(cubert_server_stream *stream);
cubert_status cubert_ocl_launch(cubert_server *server, cubert_server_stream *stream,
                                const cubert_launch *launch);
/* The launch's kernel object, built or found, checked against its own limits and a static
   count (what a launch checks before enqueueing; prepare.c's dry run shares it). */
cubert_status cubert_ocl_launch_kernel(cubert_ocl_server *server, const cubert_launch *launch,
                                       cubert_ocl_kernel **out);
/* clSetKernelArg(index, mem) on `k` unless `valid` and the argument already holds `mem`. */
cubert_status cubert_ocl_kernel_set_mem(cubert_ocl_kernel *k, uint32_t index, cl_mem mem,
                                        int valid);
/* Cached device buffer holding `words[0..count)` (owned by the cache). */
cubert_status cubert_ocl_info_buffer(cubert_ocl_server *server, const uint64_t *words,
                                     uint32_t count, cl_mem *out);
void cubert_ocl_info_cache_clear(cubert_ocl_server *server);

#endif /* CUBERT_OPENCL_LAUNCH_H */
