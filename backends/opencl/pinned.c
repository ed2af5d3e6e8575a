/* cubert — pinned host memory for staging (server.h host_alloc/host_free): on a device with
   its own memory, a CL_MEM_ALLOC_HOST_PTR buffer mapped once, which drivers copy to and from
   by DMA at the link's speed (a malloc'd pointer goes through the driver's small bounce buffer,
   ~7 GB/s against 55 GB/s on an H200, staging.c). On host-unified devices plain aligned host
   memory: the driver's copy is a memcpy either way. The server keeps a list of the buffers
   (device lock held) so that host_free finds the cl_mem and destroy frees what is left.

   The process also keeps the address ranges of every pinned buffer of every OpenCL server
   (`registry`, under its own leaf mutex), so that a read or write whose host side already is
   pinned memory, its own or another context's, goes straight to the driver instead of through
   the staging copy (staging.c): cubert_client_to_client between two GPUs reads chunks into
   the source server's pinned buffers and writes them to the destination from there (on two
   H200s 19 GB/s staged twice against 46 GB/s direct, bench/to_client.c). */
#include "opencl/pinned.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/status.h"
#include "opencl/errors.h"
#include "opencl/server.h"

struct cubert_ocl_pinned {
  void *host;
  size_t bytes;
  cl_mem buffer; /* NULL: aligned_alloc'd */
  struct cubert_ocl_pinned *next;
};

/* ---- the process-wide registry of pinned ranges ------------------------------------------ */

typedef struct pinned_range {
  uintptr_t begin, end;
  struct pinned_range *next;
} pinned_range;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static pinned_range *registry;

static int registry_add(const void *host, size_t bytes) {
  pinned_range *r = malloc(sizeof *r);
  if (!r) return 0;
  r->begin = (uintptr_t)host;
  r->end = r->begin + bytes;
  pthread_mutex_lock(&registry_mu);
  r->next = registry;
  registry = r;
  pthread_mutex_unlock(&registry_mu);
  return 1;
}

static void registry_remove(const void *host) {
  pthread_mutex_lock(&registry_mu);
  for (pinned_range **at = &registry; *at; at = &(*at)->next) {
    if ((*at)->begin != (uintptr_t)host) continue;
    pinned_range *r = *at;
    *at = r->next;
    free(r);
    break;
  }
  pthread_mutex_unlock(&registry_mu);
}

int cubert_ocl_is_pinned(const void *host, uint64_t size) {
  uintptr_t begin = (uintptr_t)host;
  if (size > UINTPTR_MAX - begin) return 0;
  uintptr_t end = begin + (uintptr_t)size;
  int found = 0;
  pthread_mutex_lock(&registry_mu);
  for (const pinned_range *r = registry; r && !found; r = r->next)
    found = begin >= r->begin && end <= r->end;
  pthread_mutex_unlock(&registry_mu);
  return found;
}

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
  p->bytes = bytes;
  /* Only DMA-able buffers are registered (a failed registration only costs the direct path). */
  if (p->buffer) registry_add(p->host, bytes);
  p->next = server->pinned;
  server->pinned = p;
  *out = p->host;
  return NULL;
}

static void pinned_free(cubert_ocl_server *server, cubert_ocl_pinned *p) {
  if (p->buffer) {
    registry_remove(p->host);
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
