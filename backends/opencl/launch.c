/* cubert — OpenCL launches: kernel arguments, info words, geometry and the enqueue.

   Latency matters here (launch + sync through cubert should cost at most a microsecond more
   than raw OpenCL), so the steady state of a repeated launch does: one pointer-hash lookup of
   the kernel object, no clSetKernelArg for arguments that did not change, one content-hash
   lookup of the info buffer, the clEnqueueNDRangeKernel itself (without an event), and
   appending the bindings' slices to the stream's open batch of pins (queue.c). */
#include "opencl/launch.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/program.h"
#include "cubert/server/violation.h"
#include "opencl/arg_list.h"
#include "opencl/errors.h"
#include "opencl/interop.h"
#include "opencl/memory.h"
#include "opencl/program.h"
#include "opencl/queue.h"
#include "opencl/server.h"

/* ---- info words -------------------------------------------------------------------------- */

void cubert_ocl_info_cache_clear(cubert_ocl_server *server) {
  for (size_t i = 0; i < CUBERT_OCL_INFO_ENTRIES; ++i) {
    cubert_ocl_info_entry *e = &server->info[i];
    if (e->mem) {
      clReleaseMemObject(e->mem);
      server->mem_generation++;
    }
    free(e->words);
    memset(e, 0, sizeof(*e));
  }
}

/* Info buffers are immutable (CL_MEM_COPY_HOST_PTR at creation), so one buffer can serve
   every stream at once and replacing a cache entry never races with a queued launch: the
   released buffer lives until the launches that use it finished. */
cubert_status cubert_ocl_info_buffer(cubert_ocl_server *server, const uint64_t *words,
                                     uint32_t count, cl_mem *out) {
  size_t bytes = (size_t)count * sizeof(uint64_t);
  uint64_t hash = cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED ^ count, words, bytes);
  cubert_ocl_info_entry *e = &server->info[hash % CUBERT_OCL_INFO_ENTRIES];
  if (e->mem && e->hash == hash && e->count == count && memcmp(e->words, words, bytes) == 0) {
    *out = e->mem;
    return NULL;
  }
  uint64_t *copy = malloc(bytes);
  if (!copy) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  memcpy(copy, words, bytes);
  cl_int err = CL_SUCCESS;
  cl_mem mem =
      clCreateBuffer(server->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, copy, &err);
  if (err != CL_SUCCESS || !mem) {
    free(copy);
    return cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY, "clCreateBuffer for %u info words",
                             count);
  }
  if (e->mem) cubert_ocl_defer_release(server, e->mem); /* may be an argument being set */
  free(e->words);
  e->hash = hash;
  e->count = count;
  e->words = copy;
  e->mem = mem;
  *out = mem;
  return NULL;
}

/* ---- launch ------------------------------------------------------------------------------ */

cubert_status cubert_ocl_kernel_set_mem(cubert_ocl_kernel *k, uint32_t index, cl_mem mem,
                                        int valid) {
  if (valid && k->args[index] == mem) return NULL;
  cl_int err = clSetKernelArg(k->kernel, index, sizeof(cl_mem), &mem);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_INVALID_ARGUMENT, "%s: clSetKernelArg(%u)", k->what,
                             index);
  k->args[index] = mem;
  return NULL;
}

/* Reads a dynamic cube count: a blocking read on the stream, so it waits for the work that
   produced the count. Simple and correct on every OpenCL 1.2 device (there is no indirect
   dispatch in OpenCL); it costs a round trip per dynamic launch. */
static cubert_status read_dynamic_count(cubert_server_stream *stream, const cubert_binding *binding,
                                        uint32_t out[3]) {
  cl_int err =
      clEnqueueReadBuffer(stream->queue, (cl_mem)binding->slice->page->native, CL_TRUE,
                          (size_t)binding->offset, 3 * sizeof(uint32_t), out, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    cubert_ocl_poll(stream);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "reading the dynamic cube count (12 bytes at offset %llu)",
                             (unsigned long long)binding->offset);
  }
  return NULL;
}

/* Geometry the device cannot run, refused before anything is queued (issue 10 #3): an axis
   beyond max_cube_count, a global size (count x dim) beyond the device's size_t, or more cubes
   in total than the driver can count (max_total_cubes; PoCL's CPU driver aborts the process
   beyond it). `what` says where the count came from. */
static cubert_status check_count(const cubert_ocl_server *server, const cubert_ocl_kernel *k,
                                 const uint32_t count[3], const uint32_t dim[3], const char *what) {
  const cubert_hardware_properties *hw = &server->base.properties.hardware;
  const char *name = server->base.properties.name;
  for (int i = 0; i < 3; ++i) {
    if (count[i] > hw->max_cube_count[i])
      return cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                             "%s: %s (%u, %u, %u) exceeds the maximum %u on axis %c of '%s'",
                             k->what, what, count[0], count[1], count[2], hw->max_cube_count[i],
                             "xyz"[i], name),
          count[i], hw->max_cube_count[i]);
    uint64_t global = (uint64_t)count[i] * dim[i];
    if (global > server->max_global_size)
      return cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                             "%s: %s (%u, %u, %u) x cube dim %u gives a global size of %llu on "
                             "axis %c, beyond the %llu that '%s' can address",
                             k->what, what, count[0], count[1], count[2], dim[i],
                             (unsigned long long)global, "xyz"[i],
                             (unsigned long long)server -> max_global_size, name),
          global, server->max_global_size);
  }
  uint64_t max_total = hw->max_total_cubes;
  if (max_total) {
    /* count[0] * count[1] fits 64 bits; the third factor is checked by division. */
    uint64_t xy = (uint64_t)count[0] * count[1];
    int over = count[2] && xy > max_total / count[2];
    uint64_t total = over && xy > UINT64_MAX / count[2] ? UINT64_MAX : xy * count[2];
    if (over || total > max_total)
      return cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                             "%s: %s (%u, %u, %u) has %llu cubes in total; '%s' runs at most %llu "
                             "per launch",
                             k->what, what, count[0], count[1], count[2], (unsigned long long)total,
                             name, (unsigned long long)max_total),
          total, max_total);
  }
  return NULL;
}

static cubert_status enqueue_error(cubert_ocl_server *server, cubert_ocl_kernel *k, cl_int err,
                                   const size_t global[3], const cubert_cube_dim *dim) {
  cubert_status s = cubert_ocl_status(
      err, CUBERT_CODE_UNKNOWN,
      "%s: clEnqueueNDRangeKernel (global %zu x %zu x %zu, cube dim %u x %u x %u) on '%s'", k->what,
      global[0], global[1], global[2], dim->x, dim->y, dim->z, server->base.properties.name);
  if (err == CL_INVALID_WORK_GROUP_SIZE) {
    /* The kernel's own limit (registers, local memory) may be below the device's. */
    size_t kernel_max = 0;
    if (clGetKernelWorkGroupInfo(k->kernel, server->device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof(kernel_max), &kernel_max, NULL) == CL_SUCCESS)
      cubert_status_set_limits(s, (uint64_t)dim->x * dim->y * dim->z, kernel_max);
  }
  return s;
}

/* ---- kernel-language kernels ------------------------------------------------------------- */

/* The stream's validate record, created zeroed at its first kernel-language launch. */
static cubert_status stream_record(cubert_ocl_server *server, cubert_server_stream *stream,
                                   cl_mem *out) {
  if (!stream->record) {
    uint32_t zeros[CUBERT_OCL_RECORD_WORDS] = {0};
    cl_int err = CL_SUCCESS;
    stream->record = clCreateBuffer(server->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    sizeof zeros, zeros, &err);
    if (err != CL_SUCCESS || !stream->record) {
      stream->record = NULL;
      return cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                               "clCreateBuffer for the validate record of a stream");
    }
  }
  *out = stream->record;
  return NULL;
}

/* The tag a validate-mode kernel writes into the record: its index among the kernels launched
   in validate mode on the stream since the record was last read. When the table is full the
   record is read now (a sync of the stream), which empties it. */
static uint32_t validate_tag(cubert_server_stream *stream, const cubert_kernel_def *kernel) {
  for (uint32_t i = 0; i < stream->validate_count; ++i)
    if (stream->validate_kernels[i] == kernel) return i;
  if (stream->validate_count == CUBERT_OCL_VALIDATE_KERNELS) cubert_ocl_finish(stream);
  stream->validate_kernels[stream->validate_count] = kernel;
  return stream->validate_count++;
}

/* The info words of a kernel-language kernel (cubert/cube_prelude.cl): [0] the user's word
   count | (offset of the user's words << 32), [1] validate tag, [2 .. 2+n) the buffers' sizes in
   bytes, then the user's words. Repeated launches with the same shapes give the same words, so
   the info cache still hits. */
static cubert_status language_info(cubert_ocl_server *server, cubert_server_stream *stream,
                                   const cubert_launch *launch, cl_mem *out) {
  enum { INLINE_WORDS = 64 };
  uint64_t inline_words[INLINE_WORDS];
  uint64_t base = 2 + (uint64_t)launch->binding_count;
  uint64_t count = base + launch->info_count;
  uint64_t *words = inline_words;
  if (count > INLINE_WORDS) {
    words = malloc(count * sizeof(uint64_t));
    if (!words) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  words[0] = (uint64_t)launch->info_count | base << 32;
  words[1] = launch->mode == CUBERT_EXECUTION_VALIDATE ? validate_tag(stream, launch->kernel) : 0;
  for (uint32_t i = 0; i < launch->binding_count; ++i) words[2 + i] = launch->bindings[i].size;
  if (launch->info_count) memcpy(words + base, launch->info, launch->info_count * sizeof(uint64_t));
  cubert_status s = cubert_ocl_info_buffer(server, words, (uint32_t)count, out);
  if (words != inline_words) free(words);
  return s;
}

cubert_status cubert_ocl_record_check(cubert_server_stream *stream) {
  if (!stream->validate_count || !stream->record) return NULL;
  uint32_t rec[CUBERT_OCL_RECORD_WORDS];
  cl_int err = clEnqueueReadBuffer(stream->queue, stream->record, CL_TRUE, 0, sizeof rec, rec, 0,
                                   NULL, NULL);
  uint32_t kernels = stream->validate_count;
  stream->validate_count = 0;
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "reading the validate record");
  if (!rec[0]) return NULL;
  uint32_t tag = rec[13];
  cubert_kernel_violation v = {
      .kind = rec[1] == 3   ? CUBERT_VIOLATION_INFO_LIMIT
              : rec[1] == 2 ? CUBERT_VIOLATION_INFO
                            : CUBERT_VIOLATION_BUFFER,
      .buffer = rec[2],
      .has_unit = 1,
      .unit = {rec[3], rec[4], rec[5]},
      .cube = {rec[6], rec[7], rec[8]},
      .index = (uint64_t)rec[10] << 32 | rec[9],
      .length = (uint64_t)rec[12] << 32 | rec[11],
  };
  cubert_status s =
      cubert_kernel_violation_status(tag < kernels ? stream->validate_kernels[tag] : NULL, &v);
  uint32_t zeros[CUBERT_OCL_RECORD_WORDS] = {0};
  err = clEnqueueWriteBuffer(stream->queue, stream->record, CL_TRUE, 0, sizeof zeros, zeros, 0,
                             NULL, NULL);
  if (err != CL_SUCCESS)
    cubert_stream_errors_push(stream->errors, cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                                                                "clearing the validate record"));
  return s;
}

/* The kernel variant for `launch`: its mode, plus CUBERT_OCL_OWN_SAFE when it is a checked or
   validate launch of a kernel-language kernel with a static count whose units all lie below
   every buffer's length, so each unit's own element is in range. A few multiplications per
   launch; the variant's program is built once. */
static cubert_execution_mode launch_variant(const cubert_launch *launch) {
  const cubert_kernel_signature *sig = launch->kernel->signature;
  if (!sig || launch->mode == CUBERT_EXECUTION_UNCHECKED || launch->dynamic_count ||
      sig->buffer_count != launch->binding_count)
    return launch->mode;
  uint64_t units = (uint64_t)launch->cube_dim.x * launch->cube_dim.y * launch->cube_dim.z;
  for (int i = 0; i < 3; ++i)
    if (__builtin_mul_overflow(units, (uint64_t)launch->cube_count[i], &units)) return launch->mode;
  for (uint32_t i = 0; i < sig->buffer_count; ++i)
    if (sig->buffers[i].elem_bytes == 0 ||
        launch->bindings[i].size / sig->buffers[i].elem_bytes < units)
      return launch->mode;
  return (cubert_execution_mode)(launch->mode | CUBERT_OCL_OWN_SAFE);
}

/* SHARED_MEMORY for a kernel whose own local memory (CL_KERNEL_LOCAL_MEM_SIZE) and `local_args`
   bytes of __local arguments (a program kernel's, sized by the launch) exceed the device's:
   with __local arguments, the most they may take beside the kernel's own. */
static cubert_status local_memory_status(const cubert_server *base, const cubert_ocl_kernel *k,
                                         uint64_t local_args) {
  const uint64_t max = base->properties.hardware.max_shared_memory_size;
  const uint64_t local = k->local_mem + local_args;
  if (!local_args)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "%s needs %llu bytes of shared (local) memory, maximum %llu bytes on "
                           "'%s'",
                           k->what, (unsigned long long)local, (unsigned long long)max,
                           base->properties.name),
        local, max);
  return cubert_status_set_limits(
      cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                         "%s: its __local arguments take %llu bytes and the kernel's own local "
                         "memory (CL_KERNEL_LOCAL_MEM_SIZE) %llu, over the %llu bytes of "
                         "CL_DEVICE_LOCAL_MEM_SIZE on '%s'; pass at most %llu bytes of __local "
                         "arguments",
                         k->what, (unsigned long long)local_args, (unsigned long long)k->local_mem,
                         (unsigned long long)max, base->properties.name,
                         (unsigned long long)(k->local_mem < max ? max - k->local_mem : 0)),
      local, max);
}

/* Checks the launch against the kernel object's own limits, before anything is enqueued: the
   argument count its source declares, its units per cube and its shared memory. */
static cubert_status check_kernel_limits(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                         const cubert_launch *launch) {
  const cubert_server *base = &server->base;
  const cubert_kernel_signature *sig = launch->kernel->signature;
  const int language = sig != NULL;
  /* A dynamic shared array is two more arguments: the __local pointer and its size. */
  const uint32_t dynamic = language && sig->dynamic_shared ? 2u : 0u;
  uint32_t expected = language ? 2u + launch->binding_count + dynamic
                               : launch->binding_count + (launch->info_count ? 1u : 0u);
  /* Program kernels: their own arguments, and the __local sizes they pass. */
  uint64_t local_args = 0;
  if (launch->kernel->flags & CUBERT_KERNEL_ARG_LIST)
    CUBERT_RETURN_IF_ERROR(cubert_ocl_arg_list_check(server, k, launch, &local_args));
  else if (k->arg_count != expected)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s declares %u arguments; the launch passes %u buffers%s", k->what,
                              k->arg_count, launch->binding_count,
                              launch->info_count ? " and the info pointer" : "");
  uint64_t units = (uint64_t)launch->cube_dim.x * launch->cube_dim.y * launch->cube_dim.z;
  if (units > k->max_units)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_UNITS,
                           "%s: cube dim (%u, %u, %u) has %llu units; this kernel runs at most "
                           "%llu units per cube on '%s' (the device allows %u)",
                           k->what, launch->cube_dim.x, launch->cube_dim.y, launch->cube_dim.z,
                           (unsigned long long)units, (unsigned long long)k->max_units,
                           base->properties.name, base->properties.hardware.max_units_per_cube),
        units, k->max_units);
  const uint64_t local = k->local_mem + local_args;
  if (local > base->properties.hardware.max_shared_memory_size)
    return local_memory_status(base, k, local_args);
  /* The static part as the compiler laid it out (CL_KERNEL_LOCAL_MEM_SIZE) with the dynamic
     array: the core checked the declared sizes, the driver's may be larger. */
  const uint64_t max_local = base->properties.hardware.max_shared_memory_size;
  if (launch->dynamic_shared_bytes > max_local - local)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "%s: %llu bytes of static shared (local) memory and %llu dynamic bytes "
                           "exceed the %llu bytes of CL_DEVICE_LOCAL_MEM_SIZE on '%s'; pass at "
                           "most %llu dynamic bytes",
                           k->what, (unsigned long long)local,
                           (unsigned long long)launch->dynamic_shared_bytes,
                           (unsigned long long)max_local, base->properties.name,
                           (unsigned long long)(max_local - local)),
        local + launch->dynamic_shared_bytes, max_local);
  return NULL;
}

/* The dynamic shared array's arguments (cube_opencl.h, CUBERT_CUBE_KPARAM_3): a __local buffer
   of the launch's size (at least 1 byte: OpenCL refuses 0) and the size itself. Set on every
   launch: the size is the launch's, and local arguments have no memory object to cache. */
static cubert_status set_dynamic_shared(cubert_ocl_kernel *k, uint32_t index, uint64_t bytes) {
  cl_ulong size = bytes;
  cl_int err = clSetKernelArg(k->kernel, index, bytes ? (size_t)bytes : 1, NULL);
  if (err == CL_SUCCESS) err = clSetKernelArg(k->kernel, index + 1, sizeof size, &size);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_INVALID_ARGUMENT,
                             "%s: clSetKernelArg(%u) for the dynamic shared array of %llu bytes",
                             k->what, index, (unsigned long long)bytes);
  return NULL;
}

/* Sets the arguments of cubert's calling conventions: for kernel-language kernels the info words
   and the validate record first, then the buffers, then (other kernels) the info pointer. */
static cubert_status set_convention_args(cubert_ocl_server *server, cubert_server_stream *stream,
                                         cubert_ocl_kernel *k, const cubert_launch *launch,
                                         int valid) {
  const int language = launch->kernel->signature != NULL;
  const uint32_t first = language ? 2u : 0u;
  cubert_status s = NULL;
  if (language) {
    cl_mem info = NULL, record = NULL;
    s = language_info(server, stream, launch, &info);
    if (!s) s = cubert_ocl_kernel_set_mem(k, 0, info, valid);
    if (!s) s = stream_record(server, stream, &record);
    if (!s) s = cubert_ocl_kernel_set_mem(k, 1, record, valid);
  }
  for (uint32_t i = 0; i < launch->binding_count && !s; ++i) {
    cl_mem mem = NULL;
    s = cubert_ocl_binding_kernel_mem(server, &launch->bindings[i], &mem);
    if (!s) s = cubert_ocl_kernel_set_mem(k, first + i, mem, valid);
  }
  if (!s && language && launch->kernel->signature->dynamic_shared)
    s = set_dynamic_shared(k, first + launch->binding_count, launch->dynamic_shared_bytes);
  if (!s && !language && launch->info_count) {
    cl_mem info = NULL;
    s = cubert_ocl_info_buffer(server, launch->info, launch->info_count, &info);
    if (!s) s = cubert_ocl_kernel_set_mem(k, launch->binding_count, info, valid);
  }
  return s;
}

/* Sets the kernel's arguments for `launch`: a program kernel's in its own order (arg_list.c),
   others by cubert's conventions. On failure the kernel's argument cache is marked stale and
   the deferred objects are released. */
static cubert_status set_launch_args(cubert_ocl_server *server, cubert_server_stream *stream,
                                     cubert_ocl_kernel *k, const cubert_launch *launch) {
  /* Objects replaced while setting arguments are released only after the enqueue, so the
     generation cannot change in between and `valid` holds for the whole launch. */
  int valid = k->args_generation == server->mem_generation;
  cubert_status s = launch->kernel->flags & CUBERT_KERNEL_ARG_LIST
                        ? cubert_ocl_arg_list_set(server, k, launch, valid)
                        : set_convention_args(server, stream, k, launch, valid);
  if (s) {
    k->args_generation = 0; /* partly set: set every argument next time */
    cubert_ocl_release_deferred(server);
  }
  return s;
}

cubert_status cubert_ocl_launch_kernel(cubert_ocl_server *server, const cubert_launch *launch,
                                       cubert_ocl_kernel **out) {
  *out = NULL;
  cubert_ocl_kernel *k = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_kernel_get(server, launch->kernel, launch_variant(launch), &k));
  CUBERT_RETURN_IF_ERROR(check_kernel_limits(server, k, launch));
  if (!launch->dynamic_count) {
    const uint32_t dim[3] = {launch->cube_dim.x, launch->cube_dim.y, launch->cube_dim.z};
    CUBERT_RETURN_IF_ERROR(check_count(server, k, launch->cube_count, dim, "cube count"));
  }
  *out = k;
  return NULL;
}

cubert_status cubert_ocl_launch(cubert_server *base, cubert_server_stream *stream,
                                const cubert_launch *launch) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  /* Released wrapped buffers first: freeing them bumps mem_generation, which the argument
     cache (set_launch_args) reads. */
  cubert_ocl_external_drain(server);
  cubert_ocl_kernel *k = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_launch_kernel(server, launch, &k));

  uint32_t count[3] = {launch->cube_count[0], launch->cube_count[1], launch->cube_count[2]};
  if (launch->dynamic_count)
    CUBERT_RETURN_IF_ERROR(read_dynamic_count(stream, launch->dynamic_count, count));
  if (count[0] == 0 || count[1] == 0 || count[2] == 0) return NULL; /* nothing to run */
  const uint32_t dim[3] = {launch->cube_dim.x, launch->cube_dim.y, launch->cube_dim.z};
  if (launch->dynamic_count)
    CUBERT_RETURN_IF_ERROR(check_count(server, k, count, dim, "dynamic cube count"));
  size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    global[i] = (size_t)count[i] * dim[i];
    local[i] = dim[i];
  }
  /* The smallest work dimension that covers the launch: get_work_dim() and some drivers'
     fast paths prefer it, and get_global_id(1/2) is 0 either way. */
  cl_uint work_dim = global[2] > 1 || dim[2] > 1 ? 3 : (global[1] > 1 || dim[1] > 1 ? 2 : 1);

  CUBERT_RETURN_IF_ERROR(set_launch_args(server, stream, k, launch));

  /* No event unless a profile region wants timestamps: events cost more than the rest of the
     launch on some drivers (queue.c). */
  cl_event event = NULL;
  cl_int err = clEnqueueNDRangeKernel(stream->queue, k->kernel, work_dim, NULL, global, local, 0,
                                      NULL, cubert_ocl_wants_event(stream) ? &event : NULL);
  k->args_generation = server->mem_generation;
  /* Bumps mem_generation when it releases anything, invalidating every kernel's cache. */
  cubert_ocl_release_deferred(server);
  if (err != CL_SUCCESS) return enqueue_error(server, k, err, global, &launch->cube_dim);
  /* A first launch at this local size may add compiled code to the program's binary: the next
     sync refreshes its disk cache file (program.c). Three compares on the usual path. */
  if (k->local_last[0] != dim[0] || k->local_last[1] != dim[1] || k->local_last[2] != dim[2])
    cubert_ocl_kernel_note_local(server, k, dim);
  return cubert_ocl_track(stream, event, k->what, launch->bindings, launch->binding_count, NULL, 0,
                          1);
}
