/* cubert — the OpenCL server object: creation, destruction, the vtable and the backend.

   A server is one device in its own cl_context. Its streams (queue.c), pages and sub-buffers
   (memory.c), programs (program.c, disk_cache.c) and launches (launch.c) live in the other
   files; this one ties them together and holds the interop entry points of api.h. */
#include "opencl/server.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/backend.h"
#include "cubert/config.h"
#include "cubert/server/combine.h"
#include "cubert/server/gates.h"
#include "cubert/server/pinned.h"
#include "cubert/server/profiler.h"
#include "cubert/server/transfers.h"
#include "opencl/comm_reduce.h"
#include "opencl/device.h"
#include "opencl/disk_cache.h"
#include "opencl/errors.h"
#include "opencl/gate.h"
#include "opencl/interop.h"
#include "opencl/launch.h"
#include "opencl/memory.h"
#include "opencl/pinned.h"
#include "opencl/prepare.h"
#include "opencl/program.h"
#include "opencl/queue.h"
#include "opencl/staging.h"

#ifndef CUBERT_VERSION_STRING_BUILD
#define CUBERT_VERSION_STRING_BUILD "0.1.0"
#endif

static cubert_status server_create(const char *spec, cubert_server **out);
static void server_destroy(cubert_server *server);
static cubert_status server_resolve(const char *spec, size_t *out_index);

static const cubert_server_vtable kVtable = {
    .kernel_form = CUBERT_KERNEL_FORM_OPENCL,
    .destroy = server_destroy,
    .storage_alloc = cubert_ocl_storage_alloc,
    .storage_free = cubert_ocl_storage_free,
    .slice_cache_release = cubert_ocl_slice_cache_release,
    .stream_create = cubert_ocl_stream_create,
    .stream_destroy = cubert_ocl_stream_destroy,
    .launch = cubert_ocl_launch,
    .read = cubert_ocl_read,
    .write = cubert_ocl_write,
    .flush = cubert_ocl_flush,
    .sync = cubert_ocl_sync,
    .event_record = cubert_ocl_event_record,
    .event_wait = cubert_ocl_event_wait,
    .event_sync = cubert_ocl_event_sync,
    .event_done = cubert_ocl_event_done,
    .event_release = cubert_ocl_event_release,
};

/* Every capability but the kernel sanitizer (cubert/server.h). */
static const cubert_server_transfers kTransfers = {
    .read_async = cubert_ocl_read_async,
    .write_async = cubert_ocl_write_async,
    .copy = cubert_ocl_copy,
};
static const cubert_server_pinned kPinned = {
    .host_alloc = cubert_ocl_host_alloc,
    .host_free = cubert_ocl_host_free,
};
static const cubert_server_profiler kProfiler = {
    .begin = cubert_ocl_profile_begin,
    .end = cubert_ocl_profile_end,
};
static const cubert_server_gates kGates = {
    .create = cubert_ocl_gate_create,
    .wait = cubert_ocl_gate_wait,
    .open = cubert_ocl_gate_open,
    .release = cubert_ocl_gate_release,
};
static const cubert_server_combine kCombine = {.reduce = cubert_ocl_comm_reduce};

const cubert_backend cubert_opencl_backend = {
    .name = "opencl",
    .enumerate = cubert_ocl_enumerate,
    .create = server_create,
    .resolve = server_resolve,
    .describe = cubert_ocl_describe,
};

int cubert_ocl_is_server(const cubert_server *server) {
  return server && server->vtable == &kVtable;
}

/* The device part of the disk cache key: everything a program binary depends on besides the
   program itself. */
static char *make_device_key(cl_platform_id platform, cl_device_id device,
                             const cubert_device_properties *p) {
  char *device_version = cubert_ocl_device_string(device, CL_DEVICE_VERSION);
  char *platform_name = cubert_ocl_platform_string(platform, CL_PLATFORM_NAME);
  size_t size = 512 + strlen(p->name) + strlen(p->vendor) + strlen(p->driver_version) +
                strlen(p->platform_version) + (device_version ? strlen(device_version) : 0) +
                (platform_name ? strlen(platform_name) : 0);
  char *key = malloc(size);
  if (key)
    snprintf(key, size,
             "cubert-opencl-program\ncubert %s\ndevice %s\nvendor %s\ndevice-version %s\n"
             "driver %s\nplatform %s\nplatform-version %s\n",
             CUBERT_VERSION_STRING_BUILD, p->name, p->vendor, device_version ? device_version : "",
             p->driver_version, platform_name ? platform_name : "", p->platform_version);
  free(device_version);
  free(platform_name);
  return key;
}

static cubert_status server_resolve(const char *spec, size_t *out_index) {
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0;
  *out_index = 0;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_list_devices(&entries, &count));
  cubert_status s = cubert_ocl_select(spec, entries, count, out_index);
  free(entries);
  return s;
}

/* What the driver of `platform_name` (NULL: unknown) needs: PoCL's failure propagation bug
   (internal.h, events_behind_waits) and its own program cache, Oclgrind's and NVIDIA's build
   options (driver_options), then the user's CUBERT_OPENCL_OPTIONS. 0 when out of memory. */
static int driver_quirks(cubert_ocl_server *server, const char *platform_name) {
  const int is_pocl = platform_name && strstr(platform_name, "Portable Computing Language") != NULL;
  server->events_behind_waits = is_pocl;
  server->sync_marker = server->events_behind_waits;
  const int is_oclgrind = platform_name && strstr(platform_name, "Oclgrind") != NULL;
  server->nvidia = platform_name && strstr(platform_name, "NVIDIA") != NULL;
  const char *base = is_oclgrind      ? " -DCUBERT_NO_RESTRICT=1"
                     : server->nvidia ? " -DCUBERT_UNROLL_HINTS=1"
                                      : "";
  const char *user = cubert_config_get()->opencl_options ? cubert_config_get()->opencl_options : "";
  const size_t size = strlen(base) + 1 + strlen(user) + 1;
  server->driver_options = malloc(size);
  if (!server->driver_options) return 0;
  snprintf(server->driver_options, size, "%s%s%s", base, user[0] ? " " : "", user);
  /* The disk cache of program binaries (disk_cache.c) stays off on PoCL unless asked for: PoCL
     keeps its own kernel cache (POCL_CACHE_DIR) keyed by source and options, so ours saves
     nothing there, and a PoCL program binary is a snapshot of PoCL's kernel folder for the
     program: taken while another process compiles into that folder, it holds a half-written
     kernel, and PoCL aborts the process that loads it (pocl_binary_get_kernels_metadata:
     `len > 0`). That is an abort we cannot catch, so we do not feed PoCL binaries back. */
  int policy = cubert_config_get()->opencl_binary_cache;
  if (policy == CUBERT_BINARY_CACHE_ON || (policy == CUBERT_BINARY_CACHE_AUTO && !is_pocl))
    server->cache_dir = cubert_ocl_default_cache_dir();
  return 1;
}

static cubert_status server_create(const char *spec, cubert_server **out) {
  *out = NULL;
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0, index = 0;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_list_devices(&entries, &count));
  cubert_status s = cubert_ocl_select(spec, entries, count, &index);
  if (s) {
    free(entries);
    return s;
  }
  cubert_ocl_device_entry entry = entries[index];
  free(entries);

  cubert_ocl_server *server = calloc(1, sizeof(*server));
  if (!server) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  server->base.vtable = &kVtable;
  server->base.transfers = &kTransfers;
  server->base.pinned = &kPinned;
  server->base.profiler = &kProfiler;
  server->base.gates = &kGates;
  server->base.combine = &kCombine;
  server->base.compiler = &cubert_ocl_compiler;
  server->base.properties = entry.properties;
  /* Pitched rows pay off where loads are coalesced per row: on GPUs. */
  server->base.layout = entry.properties.type == CUBERT_DEVICE_TYPE_OPENCL_GPU
                            ? CUBERT_LAYOUT_POLICY_PITCHED
                            : CUBERT_LAYOUT_POLICY_CONTIGUOUS;
  server->platform = entry.platform;
  server->device = entry.device;
  server->mem_generation = 1;
  server->profiling = (entry.properties.features & CUBERT_FEATURE_PROFILING) != 0;
  /* Pinned staging pays off only where the device has its own memory (see memory.c). */
  server->host_unified = cubert_ocl_device_host_unified(entry.device);
  server->use_staging = !server->host_unified;
  cl_uint address_bits = 64;
  cl_ulong global_mem = 0;
  if (clGetDeviceInfo(entry.device, CL_DEVICE_ADDRESS_BITS, sizeof(address_bits), &address_bits,
                      NULL) != CL_SUCCESS ||
      address_bits < 16)
    address_bits = 32; /* the smallest size_t OpenCL 1.2 devices have */
  server->max_global_size = address_bits >= 64 ? UINT64_MAX : (1ull << address_bits) - 1;
  if (server->max_global_size > SIZE_MAX) server->max_global_size = SIZE_MAX;
  if (clGetDeviceInfo(entry.device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global_mem), &global_mem,
                      NULL) == CL_SUCCESS)
    server->global_mem_bytes = global_mem; /* 0: unknown, not enforced */
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)entry.platform, 0};
  server->context = clCreateContext(props, 1, &entry.device, NULL, NULL, &err);
  if (err != CL_SUCCESS || !server->context) {
    s = cubert_ocl_status(err, CUBERT_CODE_UNAVAILABLE, "clCreateContext for OpenCL device '%s'",
                          entry.properties.name);
    server_destroy(&server->base);
    return s;
  }
  server->device_key = make_device_key(entry.platform, entry.device, &entry.properties);
  char *platform_name = cubert_ocl_platform_string(entry.platform, CL_PLATFORM_NAME);
  const int quirks_ok = driver_quirks(server, platform_name);
  free(platform_name);
  if (!quirks_ok) {
    server_destroy(&server->base);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  if (!server->device_key) {
    server_destroy(&server->base);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  *out = &server->base;
  return NULL;
}

static void server_destroy(cubert_server *base) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (!server) return;
  while (server->streams) cubert_ocl_stream_destroy(base, server->streams);
  cubert_ocl_external_drain(server);
  cubert_ocl_program_cache_clear(server);
  cubert_ocl_comm_reduce_release(server);
  cubert_ocl_info_cache_clear(server);
  cubert_ocl_release_deferred(server);
  free(server->deferred);
  cubert_ocl_staging_release(server);
  cubert_ocl_pinned_release_all(server);
  for (size_t i = 0; i < server->page_count; ++i) clReleaseMemObject(server->pages[i]);
  free(server->pages);
  if (server->alloc_queue) clReleaseCommandQueue(server->alloc_queue);
  if (server->context) clReleaseContext(server->context);
  free(server->cache_dir);
  free(server->driver_options);
  free(server->device_key);
  free(server);
}

/* ---- interop (api.h) --------------------------------------------------------------------- */

static cubert_status check_server(const cubert_server *server, const char *fn) {
  if (!server) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: server is NULL", fn);
  if (!cubert_ocl_is_server(server))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: the server belongs to backend '%s', not 'opencl'", fn,
                              server->properties.backend);
  return NULL;
}

cubert_status cubert_ocl_server_context(cubert_server *server, cl_context *out_context,
                                        cl_device_id *out_device) {
  CUBERT_RETURN_IF_ERROR(check_server(server, "cubert_ocl_server_context"));
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  if (out_context) *out_context = s->context;
  if (out_device) *out_device = s->device;
  return NULL;
}

cubert_status cubert_ocl_stream_queue(cubert_server *server, cubert_server_stream *stream,
                                      cl_command_queue *out_queue) {
  CUBERT_RETURN_IF_ERROR(check_server(server, "cubert_ocl_stream_queue"));
  if (!stream || !out_queue)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_ocl_stream_queue: stream and out_queue must be non-NULL");
  *out_queue = stream->queue;
  stream->queue_shared = 1;
  return NULL;
}

cubert_status cubert_ocl_binding_mem(cubert_server *server, const cubert_binding *binding,
                                     cl_mem *out_mem, size_t *out_offset) {
  CUBERT_RETURN_IF_ERROR(check_server(server, "cubert_ocl_binding_mem"));
  if (!binding || !binding->slice || !binding->slice->page || !out_mem || !out_offset)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_ocl_binding_mem: binding (with its slice and page), "
                              "out_mem and out_offset must be non-NULL");
  *out_mem = (cl_mem)binding->slice->page->native;
  *out_offset = (size_t)binding->offset;
  return NULL;
}

cubert_status cubert_ocl_stream_wait_cl_event(cubert_server *server, cubert_server_stream *stream,
                                              cl_event event) {
  CUBERT_RETURN_IF_ERROR(check_server(server, "cubert_ocl_stream_wait_cl_event"));
  if (!stream || !event)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_ocl_stream_wait_cl_event: stream and event must be "
                              "non-NULL");
  return cubert_ocl_wait_cl_event(stream, event, "a wait for an external OpenCL event");
}

/* ---- test hooks -------------------------------------------------------------------------- */

cubert_status cubert_ocl_server_set_cache_dir(cubert_server *server, const char *dir) {
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  char *copy = NULL;
  if (dir && !(copy = strdup(dir)))
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  free(s->cache_dir);
  s->cache_dir = copy;
  return NULL;
}

void cubert_ocl_server_set_staging(cubert_server *server, int enabled) {
  cubert_ocl_server_of(server)->use_staging = enabled != 0;
}

cubert_ocl_cache_stats cubert_ocl_server_cache_stats(cubert_server *server) {
  return cubert_ocl_server_of(server)->stats;
}

void cubert_ocl_server_clear_program_cache(cubert_server *server) {
  cubert_ocl_program_cache_clear(cubert_ocl_server_of(server));
}
