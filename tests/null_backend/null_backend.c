/* cubert's smallest backend: one device, "null", that implements the 16 entries every server
   must (cubert/server.h) and none of the optional capability tables, so the core runs without
   asynchronous transfers, pinned memory, a profiler, gates, device combination or a
   sanitizer. It is built outside libcubert, against the installed headers and the shared
   library's exports only, and registered at run time (cubert_backend_register): the
   conformance suite's portable part runs on it (tests/CMakeLists.txt, cts_null_*).

   Everything happens on the calling thread when it is queued, so a stream is always idle:
   events are complete the moment they are recorded, and waits, flushes and syncs have nothing
   to do. Kernels run their CPU form (kernel_form CPU). A cube barrier needs the units of a cube
   to run concurrently (the CPU server's fibers), which a backend this small does not have: a
   kernel that uses them is refused (UNAVAILABLE); kernels without barriers, shared memory
   included, run cube by cube. */
#include "null_backend.h"

#include <stdlib.h>
#include <string.h>

#include "cubert/backend.h"
#include "cubert/server.h"

enum { NULL_ALIGNMENT = 64, NULL_UNITS = 256 };

typedef struct null_server {
  cubert_server base;
} null_server;

/* A stream has no state; it exists so the core has something to point at. */
struct cubert_server_stream {
  int unused;
};
struct cubert_event {
  int unused;
};

static cubert_status oom(const char *what, uint64_t size) {
  return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                            "the null backend's host allocation of %llu bytes (%s) failed",
                            (unsigned long long)size, what);
}

static void destroy(cubert_server *server) {
  free(server);
}

static cubert_status storage_alloc(cubert_server *server, uint64_t size, cubert_storage *out) {
  static uint64_t next_id;
  (void)server;
  uint64_t rounded = (size + NULL_ALIGNMENT - 1) / NULL_ALIGNMENT * NULL_ALIGNMENT;
  void *p = aligned_alloc(NULL_ALIGNMENT, rounded ? rounded : NULL_ALIGNMENT);
  if (!p) return oom("a page", size);
  *out = (cubert_storage){.host_ptr = p, .size = size, .id = ++next_id};
  return NULL;
}

static void storage_free(cubert_server *server, cubert_storage *storage) {
  (void)server;
  free(storage->host_ptr);
}

static void slice_cache_release(cubert_server *server, cubert_slice *slice) {
  (void)server, (void)slice; /* nothing is cached per slice */
}

static cubert_status stream_create(cubert_server *server, cubert_stream_errors *errors,
                                   cubert_server_stream **out) {
  (void)server, (void)errors;
  *out = calloc(1, sizeof **out);
  return *out ? NULL : oom("a stream", sizeof **out);
}

static void stream_destroy(cubert_server *server, cubert_server_stream *stream) {
  (void)server;
  free(stream);
}

/* Runs the units of cubes [0, cubes) of `fn`, one call per cube where the kernel is written
   per cube (shared memory, PHASED), else one call for all of them. */
static cubert_status run(const cubert_launch *l, cubert_cpu_ctx *ctx, uint64_t cubes) {
  const cubert_kernel_def *k = l->kernel;
  uint64_t units = (uint64_t)l->cube_dim.x * l->cube_dim.y * l->cube_dim.z;
  int per_cube = (k->flags & (CUBERT_KERNEL_SYNC_CUBE | CUBERT_KERNEL_PHASED)) || k->shared_bytes;
  if ((k->flags & CUBERT_KERNEL_SYNC_CUBE) && !(k->flags & CUBERT_KERNEL_PHASED) && units > 1)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "kernel \"%s\" uses cube barriers, which the null backend cannot "
                              "run (its units run one after another)",
                              k->name ? k->name : "(unnamed)");
  if (!per_cube) {
    ctx->unit_begin = 0;
    ctx->unit_end = cubes * units;
    if (ctx->unit_end) k->cpu(ctx);
    return NULL;
  }
  void *shared = k->shared_bytes ? malloc(k->shared_bytes) : NULL;
  if (k->shared_bytes && !shared) return oom("shared memory", k->shared_bytes);
  ctx->shared = shared;
  for (uint64_t c = 0; c < cubes; ++c) {
    ctx->unit_begin = c * units;
    ctx->unit_end = ctx->unit_begin + units;
    k->cpu(ctx);
  }
  free(shared);
  return NULL;
}

static cubert_status launch(cubert_server *server, cubert_server_stream *stream,
                            const cubert_launch *l) {
  (void)server, (void)stream;
  enum { MAX_BUFFERS = 64 };
  if (l->binding_count > MAX_BUFFERS)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              "the null backend binds at most %d buffers, not %u", MAX_BUFFERS,
                              l->binding_count);
  void *buffers[MAX_BUFFERS];
  uint64_t bytes[MAX_BUFFERS];
  for (uint32_t i = 0; i < l->binding_count; ++i) {
    buffers[i] = cubert_binding_host_ptr(&l->bindings[i]);
    bytes[i] = l->bindings[i].size;
  }
  cubert_cpu_ctx ctx = {
      .cube_dim = {l->cube_dim.x, l->cube_dim.y, l->cube_dim.z},
      .buffers = buffers,
      .buffer_bytes = bytes,
      .info = l->info,
      .buffer_count = l->binding_count,
      .info_count = l->info_count,
      .mode = (uint32_t)l->mode,
  };
  memcpy(ctx.cube_count, l->cube_count, sizeof ctx.cube_count);
  if (l->dynamic_count) memcpy(ctx.cube_count, cubert_binding_host_ptr(l->dynamic_count), 12);
  uint64_t cubes = (uint64_t)ctx.cube_count[0] * ctx.cube_count[1] * ctx.cube_count[2];
  return run(l, &ctx, cubes);
}

static cubert_status check_size(const cubert_binding *b, uint64_t size, const char *what) {
  if (size <= b->size) return NULL;
  return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                            "%s of %llu bytes is larger than the binding (%llu bytes)", what,
                            (unsigned long long)size, (unsigned long long)b->size);
}

static cubert_status read_host(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *src, void *dst, uint64_t size) {
  (void)server, (void)stream;
  CUBERT_RETURN_IF_ERROR(check_size(src, size, "read"));
  if (size) memcpy(dst, cubert_binding_host_ptr(src), size);
  return NULL;
}

static cubert_status write_host(cubert_server *server, cubert_server_stream *stream,
                                const cubert_binding *dst, const void *src, uint64_t size) {
  (void)server, (void)stream;
  CUBERT_RETURN_IF_ERROR(check_size(dst, size, "write"));
  if (size) memcpy(cubert_binding_host_ptr(dst), src, size);
  return NULL;
}

static cubert_status idle(cubert_server *server, cubert_server_stream *stream) {
  (void)server, (void)stream;
  return NULL; /* the stream's work finished when it was queued */
}

static cubert_status event_record(cubert_server *server, cubert_server_stream *stream,
                                  cubert_event **out) {
  (void)server, (void)stream;
  *out = calloc(1, sizeof **out);
  return *out ? NULL : oom("an event", sizeof **out);
}

static cubert_status event_wait(cubert_server *server, cubert_server_stream *stream,
                                cubert_event *event) {
  (void)server, (void)stream, (void)event;
  return NULL;
}

static cubert_status event_sync(cubert_server *server, cubert_event *event) {
  (void)server, (void)event;
  return NULL;
}

static int event_done(cubert_server *server, cubert_event *event) {
  (void)server, (void)event;
  return 1;
}

static void event_release(cubert_server *server, cubert_event *event) {
  (void)server;
  free(event);
}

static const cubert_server_vtable vtable = {
    .kernel_form = CUBERT_KERNEL_FORM_CPU,
    .destroy = destroy,
    .storage_alloc = storage_alloc,
    .storage_free = storage_free,
    .slice_cache_release = slice_cache_release,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .launch = launch,
    .read = read_host,
    .write = write_host,
    .flush = idle,
    .sync = idle,
    .event_record = event_record,
    .event_wait = event_wait,
    .event_sync = event_sync,
    .event_done = event_done,
    .event_release = event_release,
};

static void properties(cubert_device_properties *p) {
  memset(p, 0, sizeof *p);
  strcpy(p->name, "null device");
  strcpy(p->backend, "null");
  strcpy(p->vendor, "cubert tests");
  strcpy(p->driver_version, "1");
  strcpy(p->platform_version, "1");
  p->hardware = (cubert_hardware_properties){
      .load_width = 128,
      .plane_size_min = 1,
      .plane_size_max = 1,
      .max_bindings = 64,
      .max_shared_memory_size = 48 * 1024,
      .max_cube_count = {65535, 65535, 65535},
      .max_units_per_cube = NULL_UNITS,
      .max_cube_dim = {NULL_UNITS, NULL_UNITS, 64},
      .max_vector_size = 4,
      .num_compute_units = 1,
  };
  p->memory.max_page_size = 1ull << 30;
  p->memory.alignment = NULL_ALIGNMENT;
  p->timing_method = CUBERT_TIMING_SYSTEM;
  p->type = CUBERT_DEVICE_TYPE_OTHER;
  p->vector_widths = (cubert_vector_widths){16, 8, 4, 2, 0, 4, 2};
  p->plane_sizes[0] = 1;
  p->plane_size_count = 1;
}

static cubert_status enumerate(cubert_device_info *out, size_t capacity, size_t *out_count) {
  *out_count = 1;
  if (capacity) {
    memset(out, 0, sizeof *out);
    strcpy(out->selector, "null");
    out->available = 1;
    properties(&out->properties);
  }
  return NULL;
}

/* "" and "0" name the one device; clients of it share one instance (lib/device_registry.c). */
static cubert_status resolve(const char *spec, size_t *out_index) {
  *out_index = 0;
  if (!spec[0] || strcmp(spec, "0") == 0) return NULL;
  return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                            "the null backend has one device, \"null\" (or \"null:0\"), not "
                            "\"null:%s\"",
                            spec);
}

static cubert_status create(const char *spec, cubert_server **out) {
  *out = NULL;
  size_t index = 0;
  CUBERT_RETURN_IF_ERROR(resolve(spec, &index));
  null_server *s = calloc(1, sizeof *s);
  if (!s) return oom("the server", sizeof *s);
  s->base.vtable = &vtable; /* every capability table stays NULL */
  s->base.layout = CUBERT_LAYOUT_POLICY_CONTIGUOUS;
  properties(&s->base.properties);
  *out = &s->base;
  return NULL;
}

const cubert_backend cubert_null_backend = {
    .name = "null",
    .enumerate = enumerate,
    .create = create,
    .resolve = resolve,
};
