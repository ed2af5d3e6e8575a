/* cubert — the client: argument validation, handles, stream slots and the calls into the
   server. One recursive lock per device serialises access to the server (DESIGN §4: a lock
   around the server rather than a device thread, since a thread hop costs microseconds on
   the launch path); re-entrancy lets exclusive()/profile() callbacks use the client. */
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "profile_log.h"
#include "registry.h"
#include "trace.h"
#include "tune/tune_internal.h"

/* ---- device ------------------------------------------------------------------------------ */

static cubert_status storage_alloc(void *ctx, uint64_t size, cubert_storage *out) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  return server->vtable->storage_alloc(server, size, out);
}
static void storage_free(void *ctx, cubert_storage *storage) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  server->vtable->storage_free(server, storage);
}
static void storage_slice_cache_release(void *ctx, cubert_slice *slice) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  if (server->vtable->slice_cache_release) server->vtable->slice_cache_release(server, slice);
}

static void device_destroy(cubert_device *device) {
  if (!device) return;
  if (device->server) {
    cubert_slots_destroy(device);
    cubert_trace_flush(device);
    device->server->vtable->destroy(device->server);
  }
  free(device->slots); /* NULL after cubert_slots_destroy */
  cubert_handle_quarantine_free(device);
  free(device->pool_override);
  free(device->pool_override_list);
  free(device->profiles);
  cubert_profile_log_free(device);
  cubert_tuner_destroy(device->tuner);
  pthread_mutex_destroy(&device->lock);
  free(device);
}

void cubert_device_retain(cubert_device *device) {
  atomic_fetch_add_explicit(&device->refcount, 1, memory_order_relaxed);
}

void cubert_device_release(cubert_device *device) {
  if (atomic_fetch_sub_explicit(&device->refcount, 1, memory_order_acq_rel) == 1)
    device_destroy(device);
}

static cubert_status device_create(const char *selector, cubert_device **out) {
  *out = NULL;
  cubert_device *device = calloc(1, sizeof(*device));
  if (!device) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  atomic_init(&device->refcount, 1);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&device->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  device->max_streams = cubert_config_get()->max_streams;
  if (device->max_streams == 0) device->max_streams = 32;
  device->slots = calloc(device->max_streams, sizeof(*device->slots));
  device->quarantine = calloc(4096, sizeof(*device->quarantine));
  if (!device->slots || !device->quarantine) {
    device_destroy(device);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  cubert_status s = cubert_registry_open(selector, &device->backend, &device->server);
  if (s) {
    device_destroy(device);
    return s;
  }
  const cubert_device_properties *p = &device->server->properties;
  device->storage = (cubert_storage_iface){
      .ctx = device,
      .alloc = storage_alloc,
      .free = storage_free,
      .slice_cache_release = storage_slice_cache_release,
      .alignment = p->memory.alignment ? p->memory.alignment : 1,
      .max_page_size = p->memory.max_page_size,
  };
  /* Pitched rows pay off where loads are coalesced per row (GPUs); CPUs read contiguous
     memory best (the reference uses a contiguous policy there). */
  device->pitch_align = p->type == CUBERT_DEVICE_TYPE_OPENCL_GPU ? device->storage.alignment : 0;
  *out = device;
  return NULL;
}

/* ---- client views ------------------------------------------------------------------------ */

cubert_status cubert_client_check(const cubert_client *client) {
  if (!client) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "client is NULL");
  if (client->magic != CUBERT_CLIENT_MAGIC)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "client is not a live cubert_client");
  return NULL;
}

static cubert_status client_new(cubert_device *device, int pinned, cubert_stream_id stream,
                                cubert_client **out) {
  cubert_client *client = calloc(1, sizeof(*client));
  if (!client) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  atomic_init(&client->refcount, 1);
  client->magic = CUBERT_CLIENT_MAGIC;
  client->device = device;
  client->pinned = pinned;
  client->stream = stream;
  *out = client;
  return NULL;
}

cubert_status cubert_client_create(const char *device_selector, cubert_client **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_device *device = NULL;
  CUBERT_RETURN_IF_ERROR(device_create(device_selector, &device));
  cubert_status s = client_new(device, 0, 0, out);
  if (s) cubert_device_release(device);
  return s;
}

cubert_status cubert_client_with_stream(cubert_client *client, cubert_stream_id id,
                                        cubert_client **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device_retain(client->device);
  cubert_status s = client_new(client->device, 1, id, out);
  if (s) cubert_device_release(client->device);
  return s;
}

cubert_stream_id cubert_client_stream(const cubert_client *client) {
  if (!client) return 0;
  return client->pinned ? client->stream : cubert_stream_id_current();
}

cubert_client *cubert_client_retain(cubert_client *client) {
  if (client) atomic_fetch_add_explicit(&client->refcount, 1, memory_order_relaxed);
  return client;
}

void cubert_client_release(cubert_client *client) {
  if (!client || client->magic != CUBERT_CLIENT_MAGIC) return;
  if (atomic_fetch_sub_explicit(&client->refcount, 1, memory_order_acq_rel) != 1) return;
  client->magic = 0;
  cubert_device *device = client->device;
  free(client);
  cubert_device_release(device);
}

const cubert_device_properties *cubert_client_properties(const cubert_client *client) {
  if (!client || client->magic != CUBERT_CLIENT_MAGIC) return NULL;
  return &client->device->server->properties;
}

/* ---- buffers ----------------------------------------------------------------------------- */

/* Reserves `size` bytes on the calling stream and wraps them in a handle. Lock held. */
cubert_status cubert_client_reserve(cubert_client *client, uint64_t size, uint32_t *out_slot,
                                    cubert_handle **out) {
  cubert_device *device = client->device;
  uint32_t index = cubert_client_slot_index(client);
  cubert_stream_slot *slot = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_slot_get(device, index, &slot));
  cubert_slice *slice = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_memory_reserve(slot->memory, size, &slice));
  cubert_status s = cubert_handle_new(device, slice, 0, size, index, out);
  if (s) cubert_slice_release(slice);
  if (out_slot) *out_slot = index;
  return s;
}

/* Writes host bytes into a binding on slot `index`, after the slice's earlier users. */
static cubert_status write_binding(cubert_device *device, uint32_t index,
                                   const cubert_binding *binding, const void *src) {
  cubert_server *server = device->server;
  CUBERT_RETURN_IF_ERROR(cubert_slot_resolve(device, index, binding, 1));
  CUBERT_RETURN_IF_ERROR(
      server->vtable->write(server, device->slots[index]->stream, binding, src, binding->size));
  cubert_slot_mark_used(device, index, binding, 1);
  return NULL;
}

static cubert_status create_buffer(cubert_client *client, const void *data, size_t size,
                                   cubert_handle **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device *device = client->device;
  cubert_device_lock(device);
  uint32_t index = 0;
  cubert_handle *handle = NULL;
  cubert_status s = cubert_client_reserve(client, size, &index, &handle);
  if (!s && data && size) {
    cubert_binding b = cubert_handle_binding(handle);
    s = write_binding(device, index, &b, data);
  }
  cubert_device_unlock(device);
  if (s) {
    cubert_handle_release(handle);
    return s;
  }
  *out = handle;
  return NULL;
}

cubert_status cubert_client_create_buffer(cubert_client *client, const void *data, size_t size,
                                          cubert_handle **out) {
  if (!data && size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "data is NULL but size is %zu bytes (use cubert_client_empty)", size);
  return create_buffer(client, data, size, out);
}

cubert_status cubert_client_empty(cubert_client *client, size_t size, cubert_handle **out) {
  return create_buffer(client, NULL, size, out);
}

static cubert_status check_range(const cubert_handle *handle, uint64_t offset, uint64_t size,
                                 const char *what) {
  if (offset > handle->size || size > handle->size - offset)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s of %llu bytes at offset %llu goes past the end of the handle "
                              "(%llu bytes)",
                              what, (unsigned long long)size, (unsigned long long)offset,
                              (unsigned long long)handle->size);
  return NULL;
}

/* Waits for the slot's work and returns its asynchronous errors. Lock held. */
static cubert_status slot_sync(cubert_device *device, cubert_stream_slot *slot) {
  cubert_server *server = device->server;
  cubert_status s = server->vtable->sync(server, slot->stream);
  cubert_status errors = cubert_slot_take_errors(slot);
  if (errors) {
    cubert_status_free(s);
    return errors;
  }
  return s;
}

cubert_status cubert_client_read_range(cubert_client *client, cubert_handle *handle,
                                       uint64_t offset, void *dst, size_t size) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  CUBERT_RETURN_IF_ERROR(cubert_handle_check(client, handle, "handle"));
  if (!dst && size) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  CUBERT_RETURN_IF_ERROR(check_range(handle, offset, size, "read"));
  cubert_device *device = client->device;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  uint32_t index = cubert_client_slot_index(client);
  cubert_stream_slot *slot = NULL;
  cubert_binding b = cubert_handle_binding(handle);
  cubert_status s = cubert_slot_get(device, index, &slot);
  if (!s) s = cubert_slot_resolve(device, index, &b, 1);
  /* Errors first: data from a stream with a pending error is never handed out. */
  if (!s) s = slot_sync(device, slot);
  if (!s && size) {
    cubert_binding part = {b.slice, b.offset + offset, size};
    s = server->vtable->read(server, slot->stream, &part, dst, size);
  }
  cubert_device_unlock(device);
  return s;
}

cubert_status cubert_client_read(cubert_client *client, cubert_handle *handle, void *dst,
                                 size_t size) {
  return cubert_client_read_range(client, handle, 0, dst, size);
}

cubert_status cubert_client_write(cubert_client *client, cubert_handle *handle, uint64_t offset,
                                  const void *src, size_t size) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  CUBERT_RETURN_IF_ERROR(cubert_handle_check(client, handle, "handle"));
  if (!src && size) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "src is NULL");
  CUBERT_RETURN_IF_ERROR(check_range(handle, offset, size, "write"));
  if (!size) return NULL;
  cubert_device *device = client->device;
  cubert_device_lock(device);
  uint32_t index = cubert_client_slot_index(client);
  cubert_stream_slot *slot = NULL;
  cubert_status s = cubert_slot_get(device, index, &slot);
  if (!s) {
    cubert_binding b = cubert_handle_binding(handle);
    cubert_binding part = {b.slice, b.offset + offset, size};
    s = write_binding(device, index, &part, src);
  }
  cubert_device_unlock(device);
  return s;
}

/* ---- launches ---------------------------------------------------------------------------- */

static cubert_status validate_launch(const cubert_device *device, const cubert_kernel_def *kernel,
                                     cubert_cube_count count, cubert_cube_dim dim,
                                     const cubert_kernel_args *args) {
  const cubert_device_properties *p = &device->server->properties;
  const cubert_hardware_properties *hw = &p->hardware;
  if (!kernel) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "kernel is NULL");
  const char *name = kernel->name ? kernel->name : "(unnamed)";
  int is_cpu = strcmp(p->backend, "cpu") == 0;
  if (is_cpu ? !kernel->cpu : !kernel->opencl_source)
    return cubert_status_make(CUBERT_CODE_COMPILATION,
                              "kernel \"%s\" has no implementation for the %s backend", name,
                              p->backend);
  if (dim.x == 0 || dim.y == 0 || dim.z == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cube dim (%u, %u, %u) of kernel \"%s\" has a zero axis; every axis "
                              "must be at least 1",
                              dim.x, dim.y, dim.z, name);
  if (dim.x > hw->max_cube_dim[0] || dim.y > hw->max_cube_dim[1] || dim.z > hw->max_cube_dim[2]) {
    uint32_t req[3] = {dim.x, dim.y, dim.z};
    return cubert_status_set_dims(
        cubert_status_make(
            CUBERT_CODE_CUBE_DIM,
            "cube dim (%u, %u, %u) of kernel \"%s\" exceeds the maximum (%u, %u, %u)", dim.x, dim.y,
            dim.z, name, hw->max_cube_dim[0], hw->max_cube_dim[1], hw->max_cube_dim[2]),
        req, hw->max_cube_dim);
  }
  uint64_t units = cubert_cube_dim_num_elems(dim);
  if (units > hw->max_units_per_cube)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_UNITS,
                           "cube dim (%u, %u, %u) of kernel \"%s\" has %llu units, max units per "
                           "cube is %u",
                           dim.x, dim.y, dim.z, name, (unsigned long long)units,
                           hw->max_units_per_cube),
        units, hw->max_units_per_cube);
  if (is_cpu && kernel->shared_bytes > hw->max_shared_memory_size)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "kernel \"%s\" requests %llu bytes of shared memory, maximum %llu bytes",
                           name, (unsigned long long)kernel->shared_bytes,
                           (unsigned long long)hw->max_shared_memory_size),
        kernel->shared_bytes, hw->max_shared_memory_size);
  if (!count.dynamic) {
    uint32_t c[3] = {count.x, count.y, count.z};
    for (int i = 0; i < 3; ++i)
      if (c[i] > hw->max_cube_count[i])
        return cubert_status_set_limits(
            cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                               "cube count (%u, %u, %u) of kernel \"%s\" exceeds the maximum "
                               "(%u, %u, %u) on axis %c",
                               count.x, count.y, count.z, name, hw->max_cube_count[0],
                               hw->max_cube_count[1], hw->max_cube_count[2], "xyz"[i]),
            c[i], hw->max_cube_count[i]);
  }
  if (args) {
    if (args->buffer_count && !args->buffers)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "args->buffers is NULL but buffer_count is %u", args->buffer_count);
    if (args->info_count && !args->info)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "args->info is NULL but info_count is %u", args->info_count);
    if (args->buffer_count > hw->max_bindings)
      return cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                             "kernel \"%s\" binds %u buffers, maximum %u", name, args->buffer_count,
                             hw->max_bindings),
          args->buffer_count, hw->max_bindings);
  }
  return NULL;
}

/* CUBERT_PROFILE=basic|full or CUBERT_TRACE: the launch inside a profile region of its own
   (serialising, as the reference does at these levels), logged and added to the summary
   and/or the trace. Lock held. */
static cubert_status launch_profiled(cubert_device *device, cubert_stream_slot *slot,
                                     uint32_t slot_index, const cubert_launch *launch) {
  cubert_server *server = device->server;
  uint64_t token = ++device->next_token;
  uint64_t start = cubert_now_ns();
  CUBERT_RETURN_IF_ERROR(server->vtable->profile_begin(server, slot->stream, token));
  cubert_status s = server->vtable->launch(server, slot->stream, launch);
  uint64_t ns = 0;
  cubert_timing_method method;
  cubert_status end = server->vtable->profile_end(server, slot->stream, token, &ns, &method);
  if (s) {
    cubert_status_free(end);
    return s;
  }
  if (end) return end;
  if (cubert_config_get()->profile_level >= CUBERT_PROFILE_BASIC)
    cubert_profile_log_launch(device, launch, ns);
  if (cubert_config_get()->trace_path) {
    const char *name = launch->kernel->name;
    const char *tuning = cubert_tune_measuring();
    char labelled[256];
    if (tuning) {
      snprintf(labelled, sizeof(labelled), "%s (tuning %s)", name ? name : "(unnamed)", tuning);
      name = labelled;
    }
    cubert_trace_record(device, name, start, ns, slot_index);
  }
  return NULL;
}

enum { INLINE_BINDINGS = 16 };

cubert_status cubert_client_launch_mode(cubert_client *client, const cubert_kernel_def *kernel,
                                        cubert_cube_count count, cubert_cube_dim dim,
                                        const cubert_kernel_args *args,
                                        cubert_execution_mode mode) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device *device = client->device;
  CUBERT_RETURN_IF_ERROR(validate_launch(device, kernel, count, dim, args));
  if (!count.dynamic && (count.x == 0 || count.y == 0 || count.z == 0)) return NULL;
  uint32_t n = args ? args->buffer_count : 0;
  for (uint32_t i = 0; i < n; ++i) {
    char what[48];
    snprintf(what, sizeof(what), "args->buffers[%u]", i);
    CUBERT_RETURN_IF_ERROR(cubert_handle_check(client, args->buffers[i], what));
  }
  CUBERT_RETURN_IF_ERROR(cubert_kernel_check_signature(kernel, args));
  mode = cubert_kernel_effective_mode(mode);
  if (count.dynamic) {
    CUBERT_RETURN_IF_ERROR(cubert_handle_check(client, count.dynamic, "count.dynamic"));
    if (count.dynamic->size < 12)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "a dynamic cube count needs 12 bytes (3 u32), the handle has %llu",
                                (unsigned long long)count.dynamic->size);
  }
  cubert_binding inline_bindings[INLINE_BINDINGS + 1];
  cubert_binding *bindings = inline_bindings;
  if (n + 1 > INLINE_BINDINGS + 1) {
    bindings = malloc((n + 1) * sizeof(*bindings));
    if (!bindings) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  for (uint32_t i = 0; i < n; ++i) bindings[i] = cubert_handle_binding(args->buffers[i]);
  uint32_t resolved = n;
  if (count.dynamic) bindings[resolved++] = cubert_handle_binding(count.dynamic);

  cubert_launch launch = {
      .kernel = kernel,
      .cube_count = {count.x, count.y, count.z},
      .dynamic_count = count.dynamic ? &bindings[n] : NULL,
      .cube_dim = dim,
      .bindings = bindings,
      .binding_count = n,
      .info = args ? args->info : NULL,
      .info_count = args ? args->info_count : 0,
      .mode = mode,
  };
  cubert_server *server = device->server;
  cubert_device_lock(device);
  uint32_t index = cubert_client_slot_index(client);
  cubert_stream_slot *slot = NULL;
  cubert_status s = cubert_slot_get(device, index, &slot);
  if (!s) s = cubert_slot_resolve(device, index, bindings, resolved);
  const cubert_config *config = cubert_config_get();
  int level = config->profile_level;
  if (!s && (level >= CUBERT_PROFILE_BASIC || config->trace_path)) {
    s = launch_profiled(device, slot, index, &launch);
  } else if (!s) {
    s = server->vtable->launch(server, slot->stream, &launch);
    if (!s && level == CUBERT_PROFILE_MINIMAL) cubert_profile_log_executing(kernel);
  }
  if (!s) cubert_slot_mark_used(device, index, bindings, resolved);
  cubert_device_unlock(device);
  if (bindings != inline_bindings) free(bindings);
  return s;
}

cubert_status cubert_client_launch(cubert_client *client, const cubert_kernel_def *kernel,
                                   cubert_cube_count count, cubert_cube_dim dim,
                                   const cubert_kernel_args *args) {
  return cubert_client_launch_mode(client, kernel, count, dim, args, CUBERT_EXECUTION_CHECKED);
}

cubert_status cubert_client_launch_unchecked(cubert_client *client, const cubert_kernel_def *kernel,
                                             cubert_cube_count count, cubert_cube_dim dim,
                                             const cubert_kernel_args *args) {
  return cubert_client_launch_mode(client, kernel, count, dim, args, CUBERT_EXECUTION_UNCHECKED);
}

/* Checks the client, takes the device lock and returns the calling stream's slot. On success
   the caller holds the lock and must release it; on failure the lock is not held. */
static cubert_status lock_current_slot(cubert_client *client, cubert_stream_slot **out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device_lock(client->device);
  cubert_status s = cubert_slot_get(client->device, cubert_client_slot_index(client), out);
  if (s) cubert_device_unlock(client->device);
  return s;
}

/* ---- synchronisation --------------------------------------------------------------------- */

cubert_status cubert_client_flush(cubert_client *client) {
  cubert_stream_slot *slot = NULL;
  CUBERT_RETURN_IF_ERROR(lock_current_slot(client, &slot));
  cubert_server *server = client->device->server;
  cubert_status s = server->vtable->flush(server, slot->stream);
  if (!s) s = cubert_slot_take_errors(slot);
  cubert_device_unlock(client->device);
  return s;
}

cubert_status cubert_client_sync(cubert_client *client) {
  cubert_stream_slot *slot = NULL;
  CUBERT_RETURN_IF_ERROR(lock_current_slot(client, &slot));
  cubert_status s = slot_sync(client->device, slot);
  if (cubert_config_get()->profile_level >= CUBERT_PROFILE_BASIC)
    cubert_profile_log_summary(client->device);
  cubert_device_unlock(client->device);
  return s;
}

cubert_status cubert_client_sync_all(cubert_client *client) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device *device = client->device;
  cubert_device_lock(device);
  cubert_status *errors = NULL;
  size_t count = 0;
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (!slot) continue;
    cubert_status s = slot_sync(device, slot);
    if (!s) continue;
    cubert_status *grown = realloc(errors, (count + 1) * sizeof(*grown));
    if (!grown) {
      cubert_status_free(s);
      continue;
    }
    errors = grown;
    errors[count++] = s;
  }
  cubert_device_unlock(device);
  if (count == 0) return NULL;
  if (count == 1) {
    cubert_status s = errors[0];
    free(errors);
    return s;
  }
  cubert_status s = cubert_status_unhealthy(errors, count);
  free(errors);
  return s;
}

/* ---- memory ------------------------------------------------------------------------------ */

cubert_status cubert_client_memory_usage(cubert_client *client, cubert_memory_usage *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof(*out));
  cubert_device *device = client->device;
  cubert_device_lock(device);
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (!slot) continue;
    cubert_memory_usage u;
    cubert_memory_usage_get(slot->memory, &u);
    out->number_allocs += u.number_allocs;
    out->bytes_in_use += u.bytes_in_use;
    out->bytes_padding += u.bytes_padding;
    out->bytes_reserved += u.bytes_reserved;
  }
  cubert_device_unlock(device);
  return NULL;
}

cubert_status cubert_client_memory_report(cubert_client *client, cubert_memory_report *out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof(*out));
  cubert_stream_slot *slot = NULL;
  CUBERT_RETURN_IF_ERROR(lock_current_slot(client, &slot));
  cubert_memory_report_get(slot->memory, out);
  cubert_device_unlock(client->device);
  return NULL;
}

cubert_status cubert_client_memory_cleanup(cubert_client *client) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  cubert_device *device = client->device;
  cubert_device_lock(device);
  for (uint32_t i = 0; i < device->max_streams; ++i)
    if (device->slots[i]) cubert_memory_cleanup(device->slots[i]->memory, 1);
  cubert_device_unlock(device);
  return NULL;
}

cubert_status cubert_client_allocation_mode(cubert_client *client, cubert_allocation_mode mode) {
  if (mode != CUBERT_ALLOCATION_AUTO && mode != CUBERT_ALLOCATION_PERSISTENT)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "mode is %d; expected CUBERT_ALLOCATION_AUTO (0) or _PERSISTENT (1)",
                              (int)mode);
  cubert_stream_slot *slot = NULL;
  CUBERT_RETURN_IF_ERROR(lock_current_slot(client, &slot));
  cubert_memory_set_mode(slot->memory, mode);
  cubert_device_unlock(client->device);
  return NULL;
}

cubert_status cubert_client_install_memory_pools(cubert_client *client,
                                                 const cubert_memory_config *config) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!config) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "config is NULL");
  cubert_device *device = client->device;
  /* Validate once on a scratch manager, so a bad layout changes nothing. */
  cubert_memory_manager *probe = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_memory_manager_create(&device->storage, config, &probe));
  cubert_memory_manager_destroy(probe);

  cubert_memory_config *copy = malloc(sizeof(*copy));
  cubert_pool_config *list = NULL;
  if (config->pool_count) list = malloc(config->pool_count * sizeof(*list));
  if (!copy || (config->pool_count && !list)) {
    free(copy);
    free(list);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  *copy = *config;
  if (list) memcpy(list, config->pools, config->pool_count * sizeof(*list));
  copy->pools = list;

  cubert_device_lock(device);
  /* All or nothing: refuse before touching any slot if one still has live dynamic memory. */
  cubert_status s = NULL;
  for (uint32_t i = 0; i < device->max_streams && !s; ++i) {
    if (!device->slots[i]) continue;
    cubert_memory_cleanup(device->slots[i]->memory, 1);
    cubert_memory_report report = {0};
    cubert_memory_report_get(device->slots[i]->memory, &report);
    for (size_t p = 0; p < report.pool_count && !s; ++p)
      if (report.pools[p].config.kind != CUBERT_POOL_PERSISTENT &&
          report.pools[p].usage.bytes_in_use)
        s = cubert_status_set_size(
            cubert_status_make(CUBERT_CODE_POOLS_IN_USE,
                               "memory pools are in use: stream slot %u still holds %llu bytes in "
                               "its pools; release them before installing a new layout",
                               i, (unsigned long long)report.pools[p].usage.bytes_in_use),
            report.pools[p].usage.bytes_in_use);
  }
  for (uint32_t i = 0; i < device->max_streams && !s; ++i)
    if (device->slots[i]) s = cubert_memory_install_pools(device->slots[i]->memory, copy);
  if (!s) {
    free(device->pool_override);
    free(device->pool_override_list);
    device->pool_override = copy;
    device->pool_override_list = list;
  }
  cubert_device_unlock(device);
  if (s) {
    free(copy);
    free(list);
  }
  return s;
}
