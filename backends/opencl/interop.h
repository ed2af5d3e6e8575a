/* cubert — the OpenCL server's side of cubert/opencl.h (interop.c): wrapped user buffers,
   whose release is deferred to the next call that holds the device lock. */
#ifndef CUBERT_OPENCL_INTEROP_H
#define CUBERT_OPENCL_INTEROP_H

#include "opencl/server.h"

/* Frees the wrapped user buffers released since the last call (cheap when there are none). */
void cubert_ocl_external_drain(cubert_ocl_server *server);

#endif /* CUBERT_OPENCL_INTEROP_H */
