/** @file
   cubert — OpenCL interop: the OpenCL objects behind a client of the OpenCL server, so that a
   program can mix its own OpenCL code (clEnqueue* calls, its own kernels) with cubert's work on
   the same data. Available when cubert was built with the OpenCL server (CUBERT_WITH_OPENCL);
   not part of the umbrella header cubert/cubert.h, since it needs <CL/cl.h>.

   Every function takes a client and works on the CALLING STREAM: the stream the calling thread
   submits to through that client (cubert/stream.h; a client from cubert_client_with_stream
   always uses its stream). Each stream of the OpenCL server is one in-order cl_command_queue.

   Ordering rules (the same for every function below):
   1. The queue. cubert_opencl_queue gives the calling stream's queue. Commands the caller
      enqueues on it run after every command cubert queued on the stream before, and before
      every command cubert queues on the stream afterwards (in-order queue). Commands the
      caller enqueues on any OTHER queue are not ordered with cubert's work at all: order them
      with events (cubert's queue: clEnqueueMarkerWithWaitList gives one; the other way round,
      clEnqueueBarrierWithWaitList on the returned queue waits for the caller's events).
   2. Handles. cubert_opencl_handle_mem first makes the calling stream's queue wait (a barrier
      on the device, the host does not block) for the last command of any other stream that
      used the handle, then records the calling stream as the handle's last user. So:
      - the caller may enqueue commands on the memory on the calling stream's queue right
        away: they see every earlier cubert write to the handle, on any stream;
      - cubert work that uses the handle afterwards, on this or any other stream, waits for
        every command enqueued on the calling stream's queue before that cubert call was made.
        Enqueue your commands BEFORE the next cubert call (from any thread) that uses the
        handle; call cubert_opencl_handle_mem again before enqueueing more after such a call.
      - cubert does not see commands enqueued on other queues: before handing such work back to
        cubert, make the calling stream's queue wait for it (rule 1) or clFinish it.
   3. Lifetime. The cl_mem of a handle is cubert's (do not release it). It stays valid while
      the handle (or any view of it) lives. Keep the handle alive until your commands on the
      memory completed: once it is released cubert may hand the bytes to a new buffer.
   4. Errors. A command of yours that fails is not seen by cubert (it is not cubert's); a
      command of cubert's that fails is reported by cubert's next flush/sync/read on the
      stream, not by your events.

   Thread safety: the functions may be called from any thread (they take the device lock).
   The OpenCL objects are thread-safe as OpenCL defines them (enqueueing on a queue that another
   thread's cubert calls also use is allowed; the order between two threads is the order of
   their calls).

   Errors of every function: INVALID_ARGUMENT naming the argument (NULL outputs, NULL client),
   and for a client of another server "client is on the 'cpu' server (device '...'), not
   'opencl'"; NOT_FOUND for a released client. */
#ifndef CUBERT_OPENCL_H
#define CUBERT_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version this header targets, unless the program chose one. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/handle.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** The context and device of the client's OpenCL server. Either output may be NULL (not both).
   The objects are cubert's: they stay valid while the client's device lives (any client view
   or handle of it); clRetain* them to keep them longer. */
CUBERT_API cubert_status cubert_opencl_context(cubert_client *client, cl_context *out_context,
                                               cl_device_id *out_device);

/** The calling stream's in-order command queue (rule 1), created for the stream on first use.
   cubert's; do not release it. While a cubert profile region (cubert/profile.h) is open on the
   stream, its work goes to a second, profiling-enabled queue: fetch the queue again after a
   profile region starts or ends (cubert finishes the old queue, yours commands included, when
   it switches). */
CUBERT_API cubert_status cubert_opencl_queue(cubert_client *client, cl_command_queue *out_queue);

/** The buffer behind `handle`: the handle's bytes are [*out_offset, *out_offset + its size) of
   `*out_mem` (a pooled page that other handles share; never touch bytes outside that range).
   Ordered as rule 2 says, on the calling stream's queue. To bind the bytes to a kernel of your
   own, create a sub-buffer (clCreateSubBuffer needs the offset to be a multiple of
   CL_DEVICE_MEM_BASE_ADDR_ALIGN: true for whole buffers cubert allocated, not for every view)
   or pass the offset to the kernel. `out_offset` may be NULL when the caller only wants the
   object. Errors: as above, plus INVALID_ARGUMENT for a NULL handle or out_mem, NOT_FOUND for a
   released handle or one of another device instance. */
CUBERT_API cubert_status cubert_opencl_handle_mem(cubert_client *client, cubert_handle *handle,
                                                  cl_mem *out_mem, size_t *out_offset);

/** Wraps the first `size` bytes of the caller's buffer `mem` as a new cubert handle (one
   reference, released with cubert_handle_release) that cubert kernels, reads, writes and views
   can use like any other. `mem` must be a buffer of the client's context (not an image, not a
   sub-buffer: wrap the parent and take a view with cubert_handle_view) holding at least `size`
   bytes; size 0 is allowed.
   Ownership: cubert retains `mem` (clRetainMemObject) and releases its reference once the
   handle and every view are released and cubert's last command using them completed, at the
   latest at the device's next launch, allocation or sync after that (or when the device is
   destroyed). The caller keeps its own reference and may release it at any time; cubert never
   frees the caller's object otherwise. The memory is not counted in cubert's memory usage.
   Ordering: cubert's commands on the new handle are ordered after what the caller enqueued on
   the calling stream's queue before the call (rule 1); work the caller enqueued on other queues
   must have completed (or the calling stream's queue must wait for it) before the handle is
   first used. Afterwards the handle follows rule 2 like any other.
   Errors: as above, plus INVALID_ARGUMENT for NULL mem or out, for an object that is not a
   buffer or is a sub-buffer, for a buffer of another context, and for a size larger than the
   buffer (naming both sizes). */
CUBERT_API cubert_status cubert_opencl_wrap_mem(cubert_client *client, cl_mem mem, size_t size,
                                                cubert_handle **out);

CUBERT_EXTERN_C_END

#endif /* CUBERT_OPENCL_H */
