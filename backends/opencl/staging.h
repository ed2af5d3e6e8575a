/* cubert — large transfers of the OpenCL server through pinned memory (staging.c): a mapped
   CL_MEM_ALLOC_HOST_PTR buffer split into slots, and a few threads that share each host copy.
   Called with the device lock held; the copy threads touch only bytes. */
#ifndef CUBERT_OPENCL_STAGING_H
#define CUBERT_OPENCL_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "opencl/server.h"

/* Transfers from these sizes on go through the staging buffer on devices with their own
   memory. Measured on an NVIDIA H200 (README.md): drivers move small pageable writes through
   their own pinned buffer at 12-14 GB/s, so staging wins for writes only from ~8 MiB, while
   pageable reads are slower and staging wins from ~2 MiB. */
#ifndef CUBERT_OCL_STAGING_MIN_WRITE
#define CUBERT_OCL_STAGING_MIN_WRITE (8u << 20)
#endif
#ifndef CUBERT_OCL_STAGING_MIN_READ
#define CUBERT_OCL_STAGING_MIN_READ (2u << 20)
#endif
/* Writes below this size are copied and enqueued without waiting (the copy is freed when the
   write completed); larger ones that are not staged are blocking writes. */
#define CUBERT_OCL_WRITE_COPY_MAX (1u << 20)
cubert_status cubert_ocl_staged_write(cubert_ocl_server *server, cubert_server_stream *stream,
                                      const cubert_binding *dst, const void *src, uint64_t size);
cubert_status cubert_ocl_staged_read(cubert_ocl_server *server, cubert_server_stream *stream,
                                     const cubert_binding *src, void *dst, uint64_t size);
/* Waits for the staging slots, unmaps and frees the buffer, stops the copy threads. */
void cubert_ocl_staging_release(cubert_ocl_server *server);
/* Threads of the staging copies (0: the default); a test and benchmark hook, called with the
   device lock held. */
void cubert_ocl_server_set_copy_threads(cubert_server *server, size_t threads);

#endif /* CUBERT_OPENCL_STAGING_H */
