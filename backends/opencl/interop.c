/* cubert — the public OpenCL interop header (cubert/opencl.h). The core finds the client's
   server and calling stream and orders handles (server.h "interop"); this file hands out the
   OpenCL objects and wraps user buffers.

   A wrapped buffer is a slice no memory manager owns, over a page of its own whose cl_mem is
   the user's object, retained. Its last reference may be dropped on any thread without the
   device lock (a handle release), but releasing the objects behind it must bump the server's
   mem_generation (kernel argument caches are keyed by address) under the lock: so the release
   only pushes the slice onto a lock-free stack, and the server drains it under the lock at its
   next launch, page allocation, sync or destroy (cubert_ocl_external_drain). */
#include "opencl/interop.h"

#include <stdlib.h>

#include "cubert/opencl.h"
#include "cubert/server/interop.h"
#include "opencl/errors.h"
#include "opencl/memory.h"
#include "opencl/server.h"

typedef struct external_slice {
  cubert_slice slice; /* first: a cubert_slice* is an external_slice* */
  cubert_storage page;
  cubert_ocl_server *server;
  struct external_slice *next; /* the server's stack of released ones */
} external_slice;

static void external_release(cubert_slice *slice) {
  external_slice *e = (external_slice *)slice;
  _Atomic(void *) *stack = &e->server->external_released;
  void *head = atomic_load_explicit(stack, memory_order_relaxed);
  do {
    e->next = head;
  } while (!atomic_compare_exchange_weak_explicit(stack, &head, e, memory_order_release,
                                                  memory_order_relaxed));
}

void cubert_ocl_external_drain(cubert_ocl_server *server) {
  if (!atomic_load_explicit(&server->external_released, memory_order_relaxed)) return;
  external_slice *e =
      atomic_exchange_explicit(&server->external_released, NULL, memory_order_acquire);
  while (e) {
    external_slice *next = e->next;
    cubert_ocl_slice_cache_release(&server->base, &e->slice);
    clReleaseMemObject((cl_mem)e->page.native);
    server->mem_generation++;
    free(e);
    e = next;
  }
}

cubert_status cubert_opencl_context(cubert_client *client, cl_context *out_context,
                                    cl_device_id *out_device) {
  if (!out_context && !out_device)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_context: out_context and out_device are both NULL");
  cubert_interop io;
  CUBERT_RETURN_IF_ERROR(
      cubert_interop_begin(client, &cubert_opencl_backend, "cubert_opencl_context", &io));
  return cubert_interop_end(&io, cubert_ocl_server_context(io.server, out_context, out_device));
}

cubert_status cubert_opencl_queue(cubert_client *client, cl_command_queue *out_queue) {
  if (!out_queue)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_queue: out_queue is NULL");
  *out_queue = NULL;
  cubert_interop io;
  CUBERT_RETURN_IF_ERROR(
      cubert_interop_begin(client, &cubert_opencl_backend, "cubert_opencl_queue", &io));
  return cubert_interop_end(&io, cubert_ocl_stream_queue(io.server, io.stream, out_queue));
}

cubert_status cubert_opencl_handle_mem(cubert_client *client, cubert_handle *handle,
                                       cl_mem *out_mem, size_t *out_offset) {
  if (!out_mem)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_handle_mem: out_mem is NULL");
  *out_mem = NULL;
  if (out_offset) *out_offset = 0;
  cubert_interop io;
  CUBERT_RETURN_IF_ERROR(
      cubert_interop_begin(client, &cubert_opencl_backend, "cubert_opencl_handle_mem", &io));
  cubert_binding b;
  cubert_status s = cubert_interop_handle(&io, handle, "handle", &b);
  size_t offset = 0;
  if (!s) s = cubert_ocl_binding_mem(io.server, &b, out_mem, &offset);
  /* The barrier of a cross-stream wait is on the queue now; submit it so that commands the
     caller enqueues behind it do not wait for cubert's next flush. */
  if (!s) clFlush(io.stream->queue);
  if (!s && out_offset) *out_offset = offset;
  return cubert_interop_end(&io, s);
}

/* Checks that `mem` is a plain buffer of the server's context with at least `size` bytes. */
static cubert_status check_user_mem(cubert_ocl_server *server, cl_mem mem, size_t size) {
  cl_mem_object_type type = 0;
  cl_context context = NULL;
  cl_mem parent = NULL;
  size_t bytes = 0;
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof(type), &type, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(context), &context, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof(parent), &parent, NULL);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(bytes), &bytes, NULL);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_INVALID_ARGUMENT,
                             "cubert_opencl_wrap_mem: clGetMemObjectInfo on mem");
  if (type != CL_MEM_OBJECT_BUFFER)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_wrap_mem: mem is not a buffer (CL_MEM_TYPE 0x%x)",
                              (unsigned)type);
  if (parent)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_wrap_mem: mem is a sub-buffer; wrap its parent and "
                              "take a view (cubert_handle_view)");
  if (context != server->context)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_wrap_mem: mem belongs to another cl_context than "
                              "the client's (cubert_opencl_context gives it)");
  if (size > bytes)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_opencl_wrap_mem: size is %zu bytes but mem holds %zu bytes",
                              size, bytes);
  return NULL;
}

cubert_status cubert_opencl_wrap_mem(cubert_client *client, cl_mem mem, size_t size,
                                     cubert_handle **out) {
  if (!out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "cubert_opencl_wrap_mem: out is NULL");
  *out = NULL;
  if (!mem)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "cubert_opencl_wrap_mem: mem is NULL");
  cubert_interop io;
  CUBERT_RETURN_IF_ERROR(
      cubert_interop_begin(client, &cubert_opencl_backend, "cubert_opencl_wrap_mem", &io));
  cubert_ocl_server *server = cubert_ocl_server_of(io.server);
  cubert_status s = check_user_mem(server, mem, size);
  external_slice *e = NULL;
  if (!s && !(e = calloc(1, sizeof(*e))))
    s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (!s) {
    clRetainMemObject(mem);
    e->server = server;
    e->page.native = mem;
    e->page.size = size;
    e->page.id = ++server->next_storage_id;
    e->slice.page = &e->page;
    e->slice.size = size;
    e->slice.external_release = external_release;
    s = cubert_interop_wrap(&io, &e->slice, out);
    if (s) {
      clReleaseMemObject(mem);
      free(e);
    }
  }
  return cubert_interop_end(&io, s);
}
