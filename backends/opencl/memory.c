/* cubert — OpenCL storage pages, the buffers kernels see, and host transfers.

   Pages are plain CL_MEM_READ_WRITE buffers. A kernel sees a binding as the page itself when
   the binding starts at the page start (the kernel cannot tell a larger buffer from an exact
   one), else as a sub-buffer cached in the slice (see README.md). Large transfers on devices
   with their own memory go through pinned host memory (staging.c). */
#include "opencl/memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/status.h"
#include "opencl/errors.h"
#include "opencl/interop.h"
#include "opencl/pinned.h"
#include "opencl/queue.h"
#include "opencl/server.h"
#include "opencl/staging.h"

/* ---- pages ------------------------------------------------------------------------------- */

/* Any cl_mem the server releases may be reused by the driver for a new object at the same
   address; kernels' cached argument values are keyed by address, so they are dropped then. */
static void mem_released(cubert_ocl_server *server) {
  server->mem_generation++;
}

/* Whether the host has `bytes` of address space to spare now. On devices that allocate host
   memory lazily (PoCL's CPU device mallocs a buffer at its first use and asserts when that
   fails, e.g. under RLIMIT_AS or strict overcommit), this is what decides whether the page
   can exist; the mapping is only reserved, never touched. */
static int host_can_map(uint64_t bytes) {
  if (bytes > SIZE_MAX) return 0;
  void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  munmap(p, (size_t)bytes);
  return 1;
}

static int is_allocation_failure(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY;
}

/* Makes the driver allocate `mem` now (drivers allocate at first use): a migration to the
   device with undefined content, waited for on the server's own queue (the page is not yet
   known to any stream). Returns the allocation failure the driver reported, else CL_SUCCESS;
   other failures (a driver that cannot migrate) are left to the page's real first use. */
static cl_int touch_page(cubert_ocl_server *server, cl_mem mem) {
  cl_int err = CL_SUCCESS;
  if (!server->alloc_queue) {
    server->alloc_queue = clCreateCommandQueue(server->context, server->device, 0, &err);
    if (err != CL_SUCCESS || !server->alloc_queue) {
      server->alloc_queue = NULL;
      return is_allocation_failure(err) ? err : CL_SUCCESS;
    }
  }
  cl_event event = NULL;
  err = clEnqueueMigrateMemObjects(server->alloc_queue, 1, &mem,
                                   CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, &event);
  if (err == CL_SUCCESS) {
    err = clWaitForEvents(1, &event);
    cl_int status = CL_COMPLETE;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL) ==
            CL_SUCCESS &&
        status < 0)
      err = status;
    clReleaseEvent(event);
  }
  return is_allocation_failure(err) ? err : CL_SUCCESS;
}

static cubert_status out_of_device_memory(const cubert_ocl_server *server, uint64_t size,
                                          const char *why) {
  return cubert_status_set_size(
      cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                             "can't allocate a page of %llu bytes on '%s': %s (%llu of its %llu "
                             "bytes of global memory are in pages)",
                             (unsigned long long)size, server->base.properties.name, why,
                             (unsigned long long)server->allocated_bytes,
                             (unsigned long long)server->global_mem_bytes),
          server->allocated_bytes + size, server->global_mem_bytes),
      size);
}

cubert_status cubert_ocl_storage_alloc(cubert_server *base, uint64_t size, cubert_storage *out) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  memset(out, 0, sizeof(*out));
  cubert_ocl_external_drain(server);
  /* Some drivers (NVIDIA) accept clCreateBuffer above CL_DEVICE_MAX_MEM_ALLOC_SIZE and fail
     later, at first use; refuse here, where the caller can still react. */
  uint64_t max_page = server->base.properties.memory.max_page_size;
  if (max_page && size > max_page)
    return cubert_status_set_size(
        cubert_status_make(CUBERT_CODE_BUFFER_TOO_BIG,
                           "can't allocate buffer of size %llu bytes on '%s': the device's "
                           "largest allocation is %llu bytes",
                           (unsigned long long)size, server->base.properties.name,
                           (unsigned long long)max_page),
        size);
  /* OpenCL refuses zero-sized buffers; a page of size 0 still gets a real object so that every
     page has a cl_mem. */
  uint64_t bytes = size ? size : 1;
  /* Drivers accept buffers beyond the device's memory (PoCL took 256 x 256 MiB on a 3.4 GiB
     device) and fail in some later command; refuse here. The core frees idle pages and
     retries once on this error (memory_manager.c). */
  uint64_t global = server->global_mem_bytes;
  if (global && (server->allocated_bytes > global || bytes > global - server->allocated_bytes))
    return out_of_device_memory(server, size, "the device's global memory is exhausted");
  if (server->host_unified && !host_can_map(bytes + CUBERT_OCL_HOST_SLACK_BYTES))
    return out_of_device_memory(server, size, "the host cannot map that much memory");
  if (server->page_count == server->page_capacity) {
    size_t cap = server->page_capacity ? server->page_capacity * 2 : 16;
    cl_mem *grown = realloc(server->pages, cap * sizeof(*grown));
    if (!grown)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                             "host allocation for the page table failed (%zu pages)", cap),
          size);
    server->pages = grown;
    server->page_capacity = cap;
  }
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(server->context, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &err);
  if (err != CL_SUCCESS || !mem)
    return cubert_status_set_size(
        cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                          "clCreateBuffer of %llu bytes on '%s' (max allocation %llu bytes)",
                          (unsigned long long)size, server->base.properties.name,
                          (unsigned long long)server->base.properties.memory.max_page_size),
        size);
  /* Host-unified devices are covered by host_can_map (PoCL asserts rather than report a
     failed lazy allocation, and a migration costs 0.1-0.2 ms there); devices with their own
     memory report it, so they allocate now. */
  if (!server->host_unified) err = touch_page(server, mem);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(mem);
    mem_released(server);
    return cubert_status_set_size(
        cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                          "the first use of a new page of %llu bytes on '%s'",
                          (unsigned long long)size, server->base.properties.name),
        size);
  }
  server->pages[server->page_count++] = mem;
  server->allocated_bytes += bytes;
  out->native = mem;
  out->size = size;
  out->id = ++server->next_storage_id;
  return NULL;
}

void cubert_ocl_storage_free(cubert_server *base, cubert_storage *storage) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (!storage || !storage->native) return;
  cl_mem mem = storage->native;
  for (size_t i = server->page_count; i-- > 0;) {
    if (server->pages[i] == mem) {
      server->pages[i] = server->pages[--server->page_count];
      break;
    }
  }
  /* Commands still queued keep the object alive (OpenCL defers the free until they finished). */
  clReleaseMemObject(mem);
  uint64_t bytes = storage->size ? storage->size : 1;
  server->allocated_bytes -= bytes < server->allocated_bytes ? bytes : server->allocated_bytes;
  mem_released(server);
  storage->native = NULL;
}

void cubert_ocl_slice_cache_release(cubert_server *base, cubert_slice *slice) {
  if (!slice || !slice->backend_cache) return;
  clReleaseMemObject((cl_mem)slice->backend_cache);
  mem_released(cubert_ocl_server_of(base));
  slice->backend_cache = NULL;
  slice->backend_cache_offset = slice->backend_cache_size = 0;
}

void cubert_ocl_defer_release(cubert_ocl_server *server, cl_mem mem) {
  if (server->deferred_count == server->deferred_capacity) {
    size_t cap = server->deferred_capacity ? server->deferred_capacity * 2 : 8;
    cl_mem *grown = realloc(server->deferred, cap * sizeof(*grown));
    if (!grown) {
      /* Cannot remember it: leak rather than free an object an argument may still name. */
      return;
    }
    server->deferred = grown;
    server->deferred_capacity = cap;
  }
  server->deferred[server->deferred_count++] = mem;
}

void cubert_ocl_release_deferred(cubert_ocl_server *server) {
  if (!server->deferred_count) return;
  for (size_t i = 0; i < server->deferred_count; ++i) clReleaseMemObject(server->deferred[i]);
  server->deferred_count = 0;
  mem_released(server);
}

cubert_status cubert_ocl_binding_kernel_mem(cubert_ocl_server *server,
                                            const cubert_binding *binding, cl_mem *out) {
  cubert_slice *slice = binding->slice;
  cl_mem page = (cl_mem)slice->page->native;
  if (binding->size == 0) {
    *out = NULL; /* a NULL global pointer: kernels never dereference a zero-sized buffer */
    return NULL;
  }
  if (binding->offset == 0) {
    *out = page;
    return NULL;
  }
  if (slice->backend_cache && slice->backend_cache_offset == binding->offset &&
      binding->size <= slice->backend_cache_size) {
    *out = (cl_mem)slice->backend_cache;
    return NULL;
  }
  uint64_t align = server->base.properties.memory.alignment;
  if (align > 1 && binding->offset % align != 0)
    return cubert_status_make(
        CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
        "a kernel argument at byte offset %llu of its page is not a multiple of the device's "
        "base address alignment (%llu bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN): OpenCL cannot make "
        "a sub-buffer there; bind an aligned view or copy the data",
        (unsigned long long)binding->offset, (unsigned long long)align);
  /* The sub-buffer reaches to the end of the slice (padding included), so later bindings at the
     same offset with any size in the slice reuse it. */
  uint64_t end = slice->offset + slice->size + slice->padding;
  if (end < binding->offset + binding->size) end = binding->offset + binding->size;
  if (end > slice->page->size) end = slice->page->size;
  cl_buffer_region region = {(size_t)binding->offset, (size_t)(end - binding->offset)};
  cl_int err = CL_SUCCESS;
  cl_mem sub =
      clCreateSubBuffer(page, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (err != CL_SUCCESS || !sub)
    return cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                             "clCreateSubBuffer at offset %llu, %llu bytes of a %llu-byte page",
                             (unsigned long long)region.origin, (unsigned long long)region.size,
                             (unsigned long long)slice->page->size);
  /* One cached region per slice: a different one replaces it. The old object may be an
     argument of this very launch (the slice bound twice at different offsets), so it is
     released after the enqueue; queued commands keep it alive after that. */
  if (slice->backend_cache) cubert_ocl_defer_release(server, (cl_mem)slice->backend_cache);
  slice->backend_cache = sub;
  slice->backend_cache_offset = region.origin;
  slice->backend_cache_size = region.size;
  *out = sub;
  return NULL;
}

/* ---- reads and writes ----------------------------------------------------------------- */

cubert_status cubert_ocl_read(cubert_server *base, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (size == 0) return NULL;
  if (server->use_staging && size >= CUBERT_OCL_STAGING_MIN_READ &&
      !cubert_ocl_is_pinned(dst, size))
    return cubert_ocl_staged_read(server, stream, src, dst, size);
  cl_event event = NULL;
  cl_int err = clEnqueueReadBuffer(stream->queue, (cl_mem)src->slice->page->native, CL_TRUE,
                                   (size_t)src->offset, (size_t)size, dst, 0, NULL,
                                   cubert_ocl_wants_event(stream) ? &event : NULL);
  if (err != CL_SUCCESS) {
    /* The cause (a failed command before this read) goes to the stream's errors first. */
    cubert_ocl_poll(stream);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "clEnqueueReadBuffer of %llu bytes at offset %llu",
                             (unsigned long long)size, (unsigned long long)src->offset);
  }
  if (event) return cubert_ocl_track(stream, event, "read", NULL, 0, NULL, 0, 1);
  return NULL;
}

/* An event handle for a command queued on `stream` (read_async, write_async): flushed, tracked
   with `bindings` (retained until it completed). */
static cubert_status async_handle(cubert_server_stream *stream, cl_int err, cl_event event,
                                  const char *what, const cubert_binding *binding, uint64_t size,
                                  cubert_event **out_event) {
  if (err != CL_SUCCESS) {
    cubert_ocl_poll(stream);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "clEnqueue%sBuffer (non-blocking) of %llu bytes at offset %llu", what,
                             (unsigned long long)size, (unsigned long long)binding->offset);
  }
  cubert_event *handle = calloc(1, sizeof(*handle));
  if (!handle) {
    clWaitForEvents(1, &event); /* the caller's memory must outlive the copy */
    clReleaseEvent(event);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  clFlush(stream->queue);
  clRetainEvent(event);
  handle->event = event;
  cubert_status s = cubert_ocl_track(stream, event, what[0] == 'R' ? "read" : "write",
                                     size ? binding : NULL, size ? 1 : 0, NULL, 0, 1);
  if (s) {
    clWaitForEvents(1, &handle->event);
    clReleaseEvent(handle->event);
    free(handle);
    return s;
  }
  *out_event = handle;
  return NULL;
}

/* A non-blocking read (write == 0) or write of `size` bytes between `binding` and `host`. */
static cubert_status transfer_async(cubert_server_stream *stream, int write,
                                    const cubert_binding *binding, void *host, uint64_t size,
                                    cubert_event **out_event) {
  *out_event = NULL;
  cl_event event = NULL;
  cl_mem page = (cl_mem)binding->slice->page->native;
  size_t at = (size_t)binding->offset;
  cl_int err = size == 0 ? clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &event)
               : write ? clEnqueueWriteBuffer(stream->queue, page, CL_FALSE, at, (size_t)size, host,
                                              0, NULL, &event)
                       : clEnqueueReadBuffer(stream->queue, page, CL_FALSE, at, (size_t)size, host,
                                             0, NULL, &event);
  return async_handle(stream, err, event, write ? "Write" : "Read", binding, size, out_event);
}

cubert_status cubert_ocl_read_async(cubert_server *base, cubert_server_stream *stream,
                                    const cubert_binding *src, void *dst, uint64_t size,
                                    cubert_event **out_event) {
  (void)base;
  return transfer_async(stream, 0, src, dst, size, out_event);
}

cubert_status cubert_ocl_write_async(cubert_server *base, cubert_server_stream *stream,
                                     const cubert_binding *dst, const void *src, uint64_t size,
                                     cubert_event **out_event) {
  (void)base;
  /* OpenCL takes the source of a write as a void pointer; it only reads it. */
  return transfer_async(stream, 1, dst, (void *)src, size, out_event);
}

cubert_status cubert_ocl_copy(cubert_server *base, cubert_server_stream *stream,
                              const cubert_binding *src, const cubert_binding *dst) {
  (void)base;
  if (src->size == 0) return NULL;
  cl_event event = NULL;
  cl_int err = clEnqueueCopyBuffer(stream->queue, (cl_mem)src->slice->page->native,
                                   (cl_mem)dst->slice->page->native, (size_t)src->offset,
                                   (size_t)dst->offset, (size_t)src->size, 0, NULL,
                                   cubert_ocl_wants_event(stream) ? &event : NULL);
  if (err != CL_SUCCESS) {
    cubert_ocl_poll(stream);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "clEnqueueCopyBuffer of %llu bytes from offset %llu to offset %llu",
                             (unsigned long long)src->size, (unsigned long long)src->offset,
                             (unsigned long long)dst->offset);
  }
  cubert_binding both[2] = {*src, *dst};
  return cubert_ocl_track(stream, event, "copy", both, 2, NULL, 0, 1);
}

cubert_status cubert_ocl_write(cubert_server *base, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (size == 0) return NULL;
  if (server->use_staging && size >= CUBERT_OCL_STAGING_MIN_WRITE &&
      !cubert_ocl_is_pinned(src, size))
    return cubert_ocl_staged_write(server, stream, dst, src, size);
  cl_mem page = (cl_mem)dst->slice->page->native;
  cl_event event = NULL;
  cl_event *want = cubert_ocl_wants_event(stream) ? &event : NULL;
  cl_int err;
  void *copy = NULL;
  if (size < CUBERT_OCL_WRITE_COPY_MAX) {
    /* Small writes do not wait for the stream's earlier work: the bytes are copied and the
       copy is freed when the write completed. */
    copy = malloc((size_t)size);
    if (!copy)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host copy of a %llu-byte write failed",
                             (unsigned long long)size),
          size);
    memcpy(copy, src, (size_t)size);
    err = clEnqueueWriteBuffer(stream->queue, page, CL_FALSE, (size_t)dst->offset, (size_t)size,
                               copy, 0, NULL, want);
  } else {
    /* Large writes to host-unified devices, or from pinned memory: one blocking write (a copy
       of the data would cost as much as the write itself; pinned memory is DMA'd directly). */
    err = clEnqueueWriteBuffer(stream->queue, page, CL_TRUE, (size_t)dst->offset, (size_t)size, src,
                               0, NULL, want);
  }
  if (err != CL_SUCCESS) {
    free(copy);
    cubert_ocl_poll(stream);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "clEnqueueWriteBuffer of %llu bytes at offset %llu",
                             (unsigned long long)size, (unsigned long long)dst->offset);
  }
  return cubert_ocl_track(stream, event, "write", dst, 1, copy, copy ? size : 0, 1);
}
