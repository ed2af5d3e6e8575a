/* cubert — pinned host memory for staging (server.h host_alloc/host_free): on a device with
   its own memory, a CL_MEM_ALLOC_HOST_PTR buffer mapped once, which drivers copy to and from
   by DMA at the link's speed (a malloc'd pointer goes through the driver's small bounce buffer,
   ~7 GB/s against 55 GB/s on an H200, staging.c). On host-unified devices plain aligned host
   memory: the driver's copy is a memcpy either way. The server keeps a list of the buffers
   (device lock held) so that host_free finds the cl_mem and destroy frees what is left. */
#include <stdlib.h>

#include "internal.h"

struct cubert_ocl_pinned {
  void *host;
  cl_mem buffer; /* NULL: aligned_alloc'd */
  struct cubert_ocl_pinned *next;
};

static cubert_status map_queue(cubert_ocl_server *server) {
  if (server->alloc_queue) return NULL;
  cl_int err = CL_SUCCESS;
  server->alloc_queue = clCreateCommandQueue(server->context, server->device, 0, &err);
  if (err != CL_SUCCESS || !server->alloc_queue) {
    server->alloc_queue = NULL;
    return cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                             "clCreateCommandQueue for pinned memory");
  }
  return NULL;
}

cubert_status cubert_ocl_host_alloc(cubert_server *base, uint64_t size, void **out) {
  *out = NULL;
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  cubert_ocl_pinned *p = calloc(1, sizeof *p);
  if (!p) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  size_t bytes = size ? (size_t)size : 1;
  if (server->use_staging) {
    cubert_status s = map_queue(server);
    cl_int err = CL_SUCCESS;
    if (!s)
      p->buffer = clCreateBuffer(server->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                 NULL, &err);
    if (!s && err == CL_SUCCESS)
      p->host = clEnqueueMapBuffer(server->alloc_queue, p->buffer, CL_TRUE,
                                   CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    if (!s && (err != CL_SUCCESS || !p->host))
      s = cubert_status_set_size(
          cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                            "pinned host buffer of %zu bytes (CL_MEM_ALLOC_HOST_PTR)", bytes),
          bytes);
    if (s) {
      if (p->buffer) clReleaseMemObject(p->buffer);
      free(p);
      return s;
    }
  } else {
    p->host = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!p->host) {
      free(p);
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of %zu bytes failed",
                             bytes),
          bytes);
    }
  }
  p->next = server->pinned;
  server->pinned = p;
  *out = p->host;
  return NULL;
}

static void pinned_free(cubert_ocl_server *server, cubert_ocl_pinned *p) {
  if (p->buffer) {
    cl_event unmap = NULL;
    if (clEnqueueUnmapMemObject(server->alloc_queue, p->buffer, p->host, 0, NULL, &unmap) ==
        CL_SUCCESS) {
      clWaitForEvents(1, &unmap);
      clReleaseEvent(unmap);
    }
    clReleaseMemObject(p->buffer);
  } else {
    free(p->host);
  }
  free(p);
}

void cubert_ocl_host_free(cubert_server *base, void *ptr) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (!ptr) return;
  for (cubert_ocl_pinned **at = &server->pinned; *at; at = &(*at)->next) {
    if ((*at)->host != ptr) continue;
    cubert_ocl_pinned *p = *at;
    *at = p->next;
    pinned_free(server, p);
    return;
  }
}

void cubert_ocl_pinned_release_all(cubert_ocl_server *server) {
  while (server->pinned) {
    cubert_ocl_pinned *p = server->pinned;
    server->pinned = p->next;
    pinned_free(server, p);
  }
}
