/* cubert — the OpenCL server's memory (memory.c): pages (one cl_mem each, accounted against
   the device's memory), the cl_mem a kernel sees for a binding (sub-buffers cached per slice),
   the release of objects deferred past a launch, and reads, writes and copies. Called with the
   device lock held. */
#ifndef CUBERT_OPENCL_MEMORY_H
#define CUBERT_OPENCL_MEMORY_H

#include <stdint.h>

#include "opencl/server.h"

/* Address space a new page of a host-unified device must leave to spare beyond its own size
   (the driver's alignment and bookkeeping). */
#define CUBERT_OCL_HOST_SLACK_BYTES (1ull << 20)

cubert_status cubert_ocl_storage_alloc(cubert_server *server, uint64_t size, cubert_storage *out);
void cubert_ocl_storage_free(cubert_server *server, cubert_storage *storage);
void cubert_ocl_slice_cache_release(cubert_server *server, cubert_slice *slice);
/* The cl_mem a kernel sees for `binding`: NULL for an empty binding, the page itself when the
   binding starts at the page start, else a sub-buffer from the binding to the slice's end,
   cached in the slice (one region per slice; a different one replaces it). Owned by the page
   or the slice. UNSUPPORTED_IO_OPERATION for an offset that is not a multiple of
   memory.alignment. */
cubert_status cubert_ocl_binding_kernel_mem(cubert_ocl_server *server,
                                            const cubert_binding *binding, cl_mem *out);
/* Releases `mem` after the current launch was enqueued (see cubert_ocl_server.deferred). */
void cubert_ocl_defer_release(cubert_ocl_server *server, cl_mem mem);
void cubert_ocl_release_deferred(cubert_ocl_server *server);
cubert_status cubert_ocl_read(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size);
cubert_status cubert_ocl_read_async(cubert_server *server, cubert_server_stream *stream,
                                    const cubert_binding *src, void *dst, uint64_t size,
                                    cubert_event **out_event);
cubert_status cubert_ocl_write_async(cubert_server *server, cubert_server_stream *stream,
                                     const cubert_binding *dst, const void *src, uint64_t size,
                                     cubert_event **out_event);
cubert_status cubert_ocl_copy(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, const cubert_binding *dst);
cubert_status cubert_ocl_write(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size);

#endif /* CUBERT_OPENCL_MEMORY_H */
