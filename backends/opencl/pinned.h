/* cubert — pinned host memory of the OpenCL server (pinned.c): host_alloc hands out mapped
   CL_MEM_ALLOC_HOST_PTR buffers, and a process-wide list of their ranges lets transfers from them
   skip the staging copy. */
#ifndef CUBERT_OPENCL_PINNED_H
#define CUBERT_OPENCL_PINNED_H

#include <stdint.h>

#include "opencl/server.h"

typedef struct cubert_ocl_pinned cubert_ocl_pinned;
cubert_status cubert_ocl_host_alloc(cubert_server *server, uint64_t size, void **out);
void cubert_ocl_host_free(cubert_server *server, void *ptr);
void cubert_ocl_pinned_release_all(cubert_ocl_server *server);
/* 1 when [host, host + size) lies inside one pinned buffer of any OpenCL server of the
   process (the driver DMAs it at full speed: no staging copy is needed). */
int cubert_ocl_is_pinned(const void *host, uint64_t size);

#endif /* CUBERT_OPENCL_PINNED_H */
