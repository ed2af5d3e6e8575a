/* cubert — the OpenCL server (backends/opencl) and its OpenCL interop.

   The backend object is listed in cubert_backends() under the name "opencl"; users normally
   reach it through cubert_client_create("opencl[:spec]"). The functions below hand out the
   OpenCL objects behind a server so that users can mix their own OpenCL code with cubert's
   work (the role of cubecl's `get_resource`).

   Thread safety: like every server method, these must be called while the device is not
   used by another thread (inside cubert_client_exclusive(), or from single-threaded code that
   owns the server). The returned OpenCL objects are not retained for the caller: call
   clRetain* to keep them beyond the lifetime of the server, binding or stream. */
#ifndef CUBERT_OPENCL_API_H
#define CUBERT_OPENCL_API_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "cubert/backend.h"
#include "cubert/export.h"
#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/* The OpenCL backend (name "opencl"). Selector specs for create(): "" (first GPU, else first
   device), "N" (index in enumerate()'s order: platforms sorted by name then vendor, devices in
   platform order), "gpu", "cpu". */
extern const cubert_backend cubert_opencl_backend;

/* The context and device of an OpenCL server. INVALID_ARGUMENT when `server` is NULL or not
   an OpenCL server. Either output may be NULL. */
CUBERT_API cubert_status cubert_ocl_server_context(cubert_server *server, cl_context *out_context,
                                                   cl_device_id *out_device);

/* The in-order command queue a stream's work goes to now. Work the caller enqueues on it is
   ordered with cubert's work on that stream. A stream moves to a second, profiling-enabled
   queue while a profile region is open (and back when the last one ends), so fetch the queue
   again after starting or ending a profile. The caller must not release it. INVALID_ARGUMENT
   for NULL arguments or a server of another backend. */
CUBERT_API cubert_status cubert_ocl_stream_queue(cubert_server *server,
                                                 cubert_server_stream *stream,
                                                 cl_command_queue *out_queue);

/* The buffer object and byte offset of a binding: `*out_mem` is the page (a cl_mem allocated
   by the server) and `*out_offset` the binding's offset in it, usable with
   clEnqueueRead/WriteBuffer or clCreateSubBuffer (the offset is a multiple of
   CL_DEVICE_MEM_BASE_ADDR_ALIGN for bindings of whole slices). The page stays valid while the
   binding's slice is alive. INVALID_ARGUMENT for a NULL argument or a server of another
   backend. */
CUBERT_API cubert_status cubert_ocl_binding_mem(cubert_server *server,
                                                const cubert_binding *binding, cl_mem *out_mem,
                                                size_t *out_offset);

/* Makes `stream` wait, on the device, for a raw OpenCL event of the same context (a user
   event, or an event of the caller's own queue). The event is retained by the command that
   waits for it. If the event ends with a negative (error) status, the error is recorded in
   the stream's error queue: the core returns it as SERVER_UNHEALTHY at the next flush, sync or
   read, and work queued behind it is not handed out as valid. INVALID_ARGUMENT for NULL
   arguments or a server of another backend; the translated OpenCL error when the barrier
   cannot be enqueued. */
CUBERT_API cubert_status cubert_ocl_stream_wait_cl_event(cubert_server *server,
                                                         cubert_server_stream *stream,
                                                         cl_event event);

CUBERT_EXTERN_C_END

#endif /* CUBERT_OPENCL_API_H */
