/* cubert — launches: the checks every launch gets before anything is queued (device limits,
   handles, a kernel-language kernel's declared buffers, the execution mode), then the call into
   the server on the calling stream, profiled when CUBERT_PROFILE or CUBERT_TRACE ask; in dry run
   (dry_run.h) the same checks, then the server's compiler instead of its launch.

   A launch holds a reference on the client and on each buffer handle until it is queued (the
   server then holds the slices), so a release on another thread takes effect afterwards. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/object_table.h"
#include "base/status.h"
#include "call_scope.h"
#include "client.h"
#include "cubert/config.h"
#include "cubert/server/violation.h"
#include "device.h"
#include "dry_run.h"
#include "handle.h"
#include "kernel_check.h"
#include "launch_args.h"
#include "profile_log.h"
#include "stream/resolve.h"
#include "stream/slots.h"
#include "stream/timing.h"
#include "trace.h"
#include "tune/scratch.h"
#include "tune/tuner.h"

/* ---- launches ---------------------------------------------------------------------------- */

static cubert_status validate_launch(const cubert_device *device, const cubert_kernel_def *kernel,
                                     cubert_cube_count count, cubert_cube_dim dim,
                                     const cubert_kernel_args *args) {
  const cubert_device_properties *p = &device->server->properties;
  const cubert_hardware_properties *hw = &p->hardware;
  if (!kernel) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "kernel is NULL");
  const char *name = kernel->name ? kernel->name : "(unnamed)";
  const int is_cpu = device->server->vtable->kernel_form == CUBERT_KERNEL_FORM_CPU;
  /* Program kernels (cubert/program.h): their arguments' list, and the CPU server's refusal. */
  CUBERT_RETURN_IF_ERROR(cubert_launch_args_check(kernel, args, is_cpu));
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
  /* A kernel-language kernel (one with a signature) declares one shared type for every server,
     so its size is checked here on each, before any compiler sees it: an OpenCL driver may
     refuse to build more shared memory than it has (NVIDIA's ptxas does) instead of reporting
     the size for the server's own check after the build. */
  if ((is_cpu || kernel->signature) && kernel->shared_bytes > hw->max_shared_memory_size)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "kernel \"%s\" requests %llu bytes of shared memory, maximum %llu bytes "
                           "on '%s'; use a smaller shared type or split the work over more cubes",
                           name, (unsigned long long)kernel->shared_bytes,
                           (unsigned long long)hw->max_shared_memory_size, p->name),
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

/* CUBERT_PROFILE=basic|medium|full or CUBERT_TRACE: the launch inside a profile region of its own
   (serialising, as the reference does at these levels), logged and added to the summary
   and/or the trace. Lock held. */
static cubert_status launch_profiled(cubert_device *device, cubert_stream_slot *slot,
                                     uint32_t slot_index, const cubert_launch *launch) {
  cubert_server *server = device->server;
  cubert_timing timing;
  uint64_t start = cubert_now_ns();
  CUBERT_RETURN_IF_ERROR(
      cubert_timing_begin(server, slot->stream, cubert_profile_token_next(device), &timing));
  cubert_status s = server->vtable->launch(server, slot->stream, launch);
  cubert_profile_duration d = {0};
  cubert_status end = cubert_timing_end(server, slot->stream, &timing, &d);
  uint64_t ns = d.duration_ns;
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

/* Drops the references a launch took on its buffer handles (the first `count`). */
static void release_handles(cubert_handle *const *handles, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) cubert_handle_release(handles[i]);
}

/* Takes a reference on each of the launch's `n` buffer handles and fills `bindings` from them;
   *out_held counts the references taken (the caller drops them, also on failure). A handle that
   is dead or of another device fails with cubert_handle_check's error naming the argument. */
static cubert_status hold_buffers(const cubert_client_obj *c, const cubert_device *device,
                                  const cubert_kernel_args *args, uint32_t n,
                                  cubert_binding *bindings, uint32_t *out_held) {
  cubert_status s = NULL;
  uint32_t held = 0;
  for (; held < n; ++held) {
    cubert_handle_obj *h = cubert_handle_acquire(args->buffers[held]);
    if (!h || h->device != device) {
      /* The slow path names the argument; formatting it for every buffer would cost more than
         the check itself on the launch path. */
      if (h) cubert_handle_release(args->buffers[held]);
      char what[48];
      snprintf(what, sizeof(what), "args->buffers[%u]", held);
      /* Fails again with the named error: a dead token never revives, a device never changes. */
      s = cubert_handle_check(c, args->buffers[held], what, &h);
      assert(s);
      break;
    }
    bindings[held] = cubert_handle_binding(h);
    cubert_tune_scratch_apply(&bindings[held]);
  }
  *out_held = held;
  return s;
}

/* Takes a reference on the handle of a dynamic cube count (*out_held = 1 once taken) and fills
 *out_binding from it. INVALID_ARGUMENT when it holds fewer than three u32. */
static cubert_status hold_dynamic_count(const cubert_client_obj *c, cubert_handle *dynamic,
                                        cubert_binding *out_binding, int *out_held) {
  cubert_handle_obj *h = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_handle_check(c, dynamic, "count.dynamic", &h));
  *out_held = 1;
  *out_binding = cubert_handle_binding(h);
  cubert_tune_scratch_apply(out_binding);
  if (h->size < 12)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "a dynamic cube count needs 12 bytes (3 u32), the handle has %llu",
                              (unsigned long long)h->size);
  return NULL;
}

/* Queues `launch` on the calling stream under the device lock: the slot first orders the
   `resolved` bindings after other streams' work, and the launch runs inside a profile region of
   its own when a profile level or the trace asks for it. */
static cubert_status launch_locked(cubert_call *call, const cubert_launch *launch,
                                   cubert_binding *bindings, uint32_t resolved) {
  cubert_device *device = call->device;
  cubert_server *server = call->server;
  cubert_status s = cubert_call_lock(call);
  uint32_t index = call->index;
  cubert_stream_slot *slot = call->slot;
  if (!s) s = cubert_slot_resolve(device, index, bindings, resolved);
  const cubert_config *config = cubert_config_get();
  int level = config->profile_level;
  if (!s && (level >= CUBERT_PROFILE_BASIC || config->trace_path)) {
    s = launch_profiled(device, slot, index, launch);
  } else if (!s) {
    s = server->vtable->launch(server, slot->stream, launch);
    if (!s && level == CUBERT_PROFILE_MINIMAL) cubert_profile_log_executing(launch->kernel);
  }
  if (!s) cubert_slot_mark_used(device, index, bindings, resolved);
  /* A failed launch fails every profile open on its stream. */
  if (s && slot) cubert_profiles_fail(device, slot->owner, s);
  cubert_call_unlock(call);
  return s;
}

static cubert_status launch(cubert_call *call, const cubert_kernel_def *kernel,
                            cubert_cube_count count, cubert_cube_dim dim,
                            const cubert_kernel_args *args, cubert_execution_mode mode,
                            uint64_t dynamic_shared_bytes) {
  if (mode != CUBERT_EXECUTION_CHECKED && mode != CUBERT_EXECUTION_VALIDATE &&
      mode != CUBERT_EXECUTION_UNCHECKED)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "mode is %d; expected CUBERT_EXECUTION_CHECKED (0), _VALIDATE (1) or "
                              "_UNCHECKED (2)",
                              (int)mode);
  cubert_client_obj *c = call->obj;
  cubert_device *device = call->device;
  CUBERT_RETURN_IF_ERROR(validate_launch(device, kernel, count, dim, args));
  /* Kernel-language kernels: named scalars need their info words, a dynamic shared array its
     size within the device's shared memory. */
  CUBERT_RETURN_IF_ERROR(cubert_kernel_check_scalars(kernel, args ? args->info_count : 0));
  const cubert_device_properties *props = &device->server->properties;
  CUBERT_RETURN_IF_ERROR(cubert_kernel_check_dynamic_shared(
      kernel, dynamic_shared_bytes, props->hardware.max_shared_memory_size, props->name));
  if (!count.dynamic && (count.x == 0 || count.y == 0 || count.z == 0)) return NULL;
  uint32_t n = args ? args->buffer_count : 0;
  cubert_binding inline_bindings[INLINE_BINDINGS + 1];
  cubert_binding *bindings = inline_bindings;
  if (n + 1 > INLINE_BINDINGS + 1) {
    bindings = malloc((n + 1) * sizeof(*bindings));
    if (!bindings) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  /* Every handle is held until the launch is queued (the server then holds the slices). */
  uint32_t held = 0;
  cubert_status s = hold_buffers(c, device, args, n, bindings, &held);
  uint32_t resolved = n;
  int dynamic_held = 0;
  if (!s && count.dynamic) {
    s = hold_dynamic_count(c, count.dynamic, &bindings[n], &dynamic_held);
    resolved = n + 1;
  }
  /* Kernel-language kernels: the declared buffers against the bound ones. */
  if (!s) s = cubert_kernel_check_signature(kernel, bindings, n);
  mode = cubert_kernel_effective_mode(mode);
  if (!s) {
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
        .dynamic_shared_bytes = dynamic_shared_bytes,
    };
    if (cubert_dry_run_on(c)) {
      /* Checked and compiled, not queued: no stream slot to take, no ordering to resolve, no
         use to mark; the device lock alone, which every server method is called under. */
      cubert_device_lock(device);
      s = cubert_dry_run_prepare(call->server, &launch);
      cubert_device_unlock(device);
    } else {
      s = launch_locked(call, &launch, bindings, resolved);
    }
  }
  release_handles(args ? args->buffers : NULL, held);
  if (dynamic_held) cubert_handle_release(count.dynamic);
  if (bindings != inline_bindings) free(bindings);
  return s;
}

cubert_status cubert_client_launch_with(cubert_client *client, const cubert_kernel_def *kernel,
                                        cubert_cube_count count, cubert_cube_dim dim,
                                        const cubert_kernel_args *args,
                                        const cubert_launch_options *options) {
  const cubert_launch_options none = {0};
  if (!options) options = &none;
  /* While autotune measures a candidate, every buffer it binds may be written: each is used
     through a scratch copy unless it may be used in place (tune/scratch.h). */
  for (uint32_t i = 0; args && args->buffers && i < args->buffer_count; ++i)
    CUBERT_RETURN_IF_ERROR(cubert_tune_scratch_prepare(client, args->buffers[i]));
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  return cubert_call_leave(
      &call, launch(&call, kernel, count, dim, args, options->mode, options->dynamic_shared_bytes));
}

cubert_status cubert_client_launch_mode(cubert_client *client, const cubert_kernel_def *kernel,
                                        cubert_cube_count count, cubert_cube_dim dim,
                                        const cubert_kernel_args *args,
                                        cubert_execution_mode mode) {
  const cubert_launch_options options = {.mode = mode};
  return cubert_client_launch_with(client, kernel, count, dim, args, &options);
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
