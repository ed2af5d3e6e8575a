/* cubert — OpenCL programs and kernel objects: the in-memory cache and building.

   Two levels, both per server (one device):
   - kernel refs: kernel definition address (+ the addresses of its strings, flags and the
     execution mode) -> kernel object. This is the launch path: one hash of a pointer. A
     pointer only names the text while the text cannot change: when the source, options and
     entry strings all lie in read-only segments of a loaded object (string literals, the
     kernel library's embedded sources) the pointers are the key and the launch never reads
     the text; otherwise (heap, stack, writable data) each launch compares the text with the
     program's copy (one strcmp per string) and a definition rewritten in place is looked up
     again by content (issue 10 #6).
   - programs: (source text, build options) -> cl_program, compared by content, so two
     definitions with the same source share a program; each program keeps one cl_kernel per
     entry point. A kernel-language kernel whose strings cannot change is built from its
     file's text with the other entry points blanked (kernel_source.c): one program per
     kernel, compiled at its first launch, not with every kernel of its file.
   A miss builds from the disk cache (disk_cache.c) or from source. clSetKernelArg on a shared
   cl_kernel is not thread-safe; the core serialises launches with the device lock.

   The disk cache file of a program is written after its first launches, not at build time,
   and refreshed after launches at new local sizes (disk_cache.c says why): each kernel keeps
   the local sizes it ran at, the launch compares against the last one only, and sync
   refreshes the marked programs once their launches completed. */
#include "opencl/program.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "cubert/program.h"
#include "opencl/build_log.h"
#include "opencl/disk_cache.h"
#include "opencl/errors.h"
#include "opencl/kernel_source.h"
#include "opencl/server.h"

static const char *kernel_name(const cubert_kernel_def *kernel) {
  return kernel->name ? kernel->name : (kernel->opencl_entry ? kernel->opencl_entry : "(unnamed)");
}

cubert_status cubert_ocl_check_kernel_features(const cubert_device_properties *properties,
                                               const cubert_kernel_def *kernel) {
  if ((kernel->flags & CUBERT_KERNEL_NEEDS_FP64) && !(properties->features & CUBERT_FEATURE_FP64))
    return cubert_status_make(CUBERT_CODE_COMPILATION,
                              "kernel '%s' needs fp64 (cl_khr_fp64), which OpenCL device '%s' "
                              "does not support",
                              kernel_name(kernel), properties->name);
  if ((kernel->flags & CUBERT_KERNEL_NEEDS_FP16) && !(properties->features & CUBERT_FEATURE_FP16))
    return cubert_status_make(CUBERT_CODE_COMPILATION,
                              "kernel '%s' needs fp16 (cl_khr_fp16), which OpenCL device '%s' "
                              "does not support",
                              kernel_name(kernel), properties->name);
  return NULL;
}

char *cubert_ocl_build_options(const cubert_kernel_def *kernel, cubert_execution_mode variant) {
  const cubert_execution_mode mode = (cubert_execution_mode)(variant & ~CUBERT_OCL_OWN_SAFE);
  /* A program's kernel (cubert/program.h) is foreign OpenCL C: the mode cannot change what it
     does, so it builds with -cl-std alone (and its own options), one program for every mode. */
  const int foreign = (kernel->flags & CUBERT_KERNEL_ARG_LIST) != 0;
  /* Checked kernels bound-check their accesses; VALIDATE additionally reports them. Kernels
     test the macros with #if, so UNCHECKED leaves them undefined. */
  const char *mode_flags = foreign || mode == CUBERT_EXECUTION_UNCHECKED ? ""
                           : mode == CUBERT_EXECUTION_VALIDATE
                               ? " -DCUBERT_CHECKED=1 -DCUBERT_VALIDATE=1"
                               : " -DCUBERT_CHECKED=1";
  const char *user = kernel->opencl_options ? kernel->opencl_options : "";
  /* Kernel-language sources (cubert/cube_prelude.cl) read the mode as one number. */
  char mode_number[48] = "";
  if (!foreign)
    snprintf(mode_number, sizeof mode_number, " -DCUBERT_MODE=%d%s", (int)mode,
             variant & CUBERT_OCL_OWN_SAFE ? " -DCUBERT_OWN_SAFE=1" : "");
  size_t size =
      strlen("-cl-std=CL1.2") + strlen(mode_flags) + strlen(mode_number) + 1 + strlen(user) + 1;
  char *options = malloc(size);
  if (!options) return NULL;
  snprintf(options, size, "-cl-std=CL1.2%s%s%s%s", mode_flags, mode_number, user[0] ? " " : "",
           user);
  return options;
}

void cubert_ocl_drop_options(char *options, const char *prefix) {
  const size_t n = strlen(prefix);
  char *out = options;
  for (const char *p = options; *p;) {
    const char *word = p;
    while (*p && *p != ' ') ++p;
    const size_t len = (size_t)(p - word);
    while (*p == ' ') ++p;
    if (len == 0 || (len >= n && strncmp(word, prefix, n) == 0)) continue;
    if (out != options) *out++ = ' ';
    memmove(out, word, len);
    out += len;
  }
  *out = '\0';
}

/* ---- building ---------------------------------------------------------------------------- */

static char *build_log(cubert_ocl_server *server, cl_program program) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, server->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
      CL_SUCCESS)
    size = 0;
  char *log = calloc(1, size + 1);
  if (!log) return NULL;
  if (size && clGetProgramBuildInfo(program, server->device, CL_PROGRAM_BUILD_LOG, size, log,
                                    NULL) != CL_SUCCESS)
    log[0] = '\0';
  /* Drivers end the log with NULs and newlines; trim them for a tidy message. */
  size_t len = strlen(log);
  while (len && (log[len - 1] == '\n' || log[len - 1] == ' ')) log[--len] = '\0';
  return log;
}

static cubert_status build_from_source(cubert_ocl_server *server, const cubert_kernel_def *kernel,
                                       const char *source, const char *options, cl_program *out) {
  *out = NULL;
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(server->context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_COMPILATION, "kernel '%s': clCreateProgramWithSource",
                             kernel_name(kernel));
  err = clBuildProgram(program, 1, &server->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char *log = cubert_ocl_log_relocate(source, build_log(server, program));
    /* The status's full message ends with the build log (status.h). */
    cubert_status s =
        cubert_ocl_status(err, CUBERT_CODE_COMPILATION,
                          "kernel '%s' failed to build for OpenCL device '%s' with options \"%s\"",
                          kernel_name(kernel), server->base.properties.name, options);
    cubert_status_set_build_log(s, log && log[0] ? log : "(the driver gave no build log)");
    free(log);
    clReleaseProgram(program);
    return s;
  }
  server->stats.builds_from_source++;
  *out = program;
  return NULL;
}

/* ---- programs ---------------------------------------------------------------------------- */

static void kernel_free(cubert_ocl_kernel *k) {
  if (k->kernel) clReleaseKernel(k->kernel);
  free(k->entry);
  free(k->what);
  free(k->args);
  free(k->locals);
  free(k->arg_info);
  free(k);
}

static void ref_free(cubert_ocl_kernel_ref *r) {
  free(r->user_options);
  free(r);
}

static void program_free(cubert_ocl_program *p) {
  while (p->kernels) {
    cubert_ocl_kernel *next = p->kernels->next;
    kernel_free(p->kernels);
    p->kernels = next;
  }
  if (p->program) clReleaseProgram(p->program);
  free(p->source);
  free(p->options);
  free(p->disk_key);
  free(p);
}

void cubert_ocl_program_cache_clear(cubert_ocl_server *server) {
  for (size_t i = 0; i < CUBERT_OCL_KERNEL_BUCKETS; ++i) {
    while (server->kernel_refs[i]) {
      cubert_ocl_kernel_ref *next = server->kernel_refs[i]->next;
      ref_free(server->kernel_refs[i]);
      server->kernel_refs[i] = next;
    }
  }
  while (server->programs) {
    cubert_ocl_program *next = server->programs->next;
    /* A program never written (no sync after its launches, or never launched) is written now;
       one launched at new local sizes since its last refresh is compared once more. */
    if (!server->programs->disk_size || server->programs->refresh)
      cubert_ocl_disk_refresh(server, server->programs);
    program_free(server->programs);
    server->programs = next;
  }
  server->refresh_pending = 0;
}

void cubert_ocl_programs_refresh(cubert_ocl_server *server) {
  server->refresh_pending = 0;
  for (cubert_ocl_program *p = server->programs; p; p = p->next)
    if (p->refresh) cubert_ocl_disk_refresh(server, p);
}

void cubert_ocl_kernel_note_local(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                  const uint32_t local[3]) {
  memcpy(k->local_last, local, sizeof(k->local_last));
  for (uint32_t i = 0; i < k->local_count; ++i)
    if (memcmp(k->locals[i], local, sizeof(k->locals[i])) == 0) return;
  if (k->local_count == CUBERT_OCL_MAX_LOCAL_SIZES) return; /* stop refreshing (internal.h) */
  if (!k->locals) {
    k->locals = calloc(CUBERT_OCL_MAX_LOCAL_SIZES, sizeof(*k->locals));
    if (!k->locals) return; /* no refresh: the disk cache is only an optimisation */
  }
  memcpy(k->locals[k->local_count++], local, sizeof(k->locals[0]));
  if (!k->program->disk_key) return;
  k->program->refresh = 1;
  server->refresh_pending = 1;
}

/* The text `kernel`'s program is built from: for a kernel-language kernel whose strings cannot
   change (`per_kernel`), its file's text with the other kernels' entry points blanked
   (kernel_source.c), in *own (to free); otherwise the definition's source, *own NULL. */
static const char *program_text(const cubert_kernel_def *kernel, int per_kernel, char **own) {
  *own = NULL;
  if (per_kernel && kernel->signature)
    *own = cubert_ocl_kernel_only_source(
        kernel->opencl_source, kernel->opencl_entry ? kernel->opencl_entry : kernel->name);
  return *own ? *own : kernel->opencl_source;
}

static cubert_status program_get(cubert_ocl_server *server, const cubert_kernel_def *kernel,
                                 cubert_execution_mode mode, int per_kernel,
                                 cubert_ocl_program **out) {
  *out = NULL;
  char *options = cubert_ocl_build_options(kernel, mode);
  const char *driver = server->driver_options ? server->driver_options : "";
  if (options && driver[0]) {
    char *all = realloc(options, strlen(options) + strlen(driver) + 1);
    if (all) strcat(all, driver);
    options = all ? all : (free(options), NULL);
  }
  if (!options) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (!server->nvidia) cubert_ocl_drop_options(options, "-cl-nv-");
  char *own = NULL;
  const char *text = program_text(kernel, per_kernel, &own);
  size_t len = strlen(text);
  uint64_t hash = cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, text, len);
  for (cubert_ocl_program *p = server->programs; p; p = p->next) {
    if (p->source_hash == hash && p->source_len == len && strcmp(p->options, options) == 0 &&
        memcmp(p->source, text, len) == 0) {
      free(options);
      free(own);
      server->stats.memory_hits++;
      cubert_log(CUBERT_LOG_DEBUG, "compile", "kernel \"%s\" on '%s': program cache hit (memory)",
                 kernel_name(kernel), server->base.properties.name);
      *out = p;
      return NULL;
    }
  }
  cubert_ocl_program *p = calloc(1, sizeof(*p));
  char *source = own ? own : malloc(len + 1);
  if (!p || !source) {
    free(p);
    free(source);
    free(options);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  if (!own) memcpy(source, text, len + 1);
  p->source = source;
  p->source_len = len;
  p->source_hash = hash;
  p->options = options;
  /* Without memory for the key the program simply bypasses the disk cache. */
  p->disk_key = cubert_ocl_disk_key(server, hash, len, options);
  cubert_status s = NULL;
  const uint64_t start = cubert_now_ns();
  if (p->disk_key) p->program = cubert_ocl_disk_load(server, p->disk_key, options, &p->disk_size);
  const int from_disk = p->program != NULL;
  /* Built from source: written after its first launches (disk_cache.c). */
  if (!p->program) s = build_from_source(server, kernel, p->source, options, &p->program);
  if (s) {
    program_free(p);
    return s;
  }
  cubert_log(CUBERT_LOG_INFO, "compile", "kernel \"%s\" on '%s': %s in %.1f ms",
             kernel_name(kernel), server->base.properties.name,
             from_disk ? "program cache hit (disk)" : "program cache miss, built from source",
             (double)(cubert_now_ns() - start) / 1e6);
  p->next = server->programs;
  server->programs = p;
  *out = p;
  return NULL;
}

static cubert_status kernel_object_get(cubert_ocl_server *server, cubert_ocl_program *program,
                                       const cubert_kernel_def *kernel, cubert_ocl_kernel **out) {
  const char *entry = kernel->opencl_entry ? kernel->opencl_entry : kernel->name;
  if (!entry)
    return cubert_status_make(CUBERT_CODE_COMPILATION,
                              "kernel '%s' names no OpenCL entry point (opencl_entry and name "
                              "are NULL)",
                              kernel_name(kernel));
  for (cubert_ocl_kernel *k = program->kernels; k; k = k->next) {
    if (strcmp(k->entry, entry) == 0) {
      *out = k;
      return NULL;
    }
  }
  cubert_ocl_kernel *k = calloc(1, sizeof(*k));
  size_t what_size = strlen(kernel_name(kernel)) + 16;
  if (k) {
    k->entry = strdup(entry);
    k->what = malloc(what_size);
  }
  if (!k || !k->entry || !k->what) {
    if (k) kernel_free(k);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  snprintf(k->what, what_size, "kernel '%s'", kernel_name(kernel));
  cl_int err = CL_SUCCESS;
  k->kernel = clCreateKernel(program->program, entry, &err);
  if (err != CL_SUCCESS) {
    kernel_free(k);
    return cubert_ocl_status(err, CUBERT_CODE_COMPILATION,
                             "kernel '%s': clCreateKernel(\"%s\") on OpenCL device '%s'",
                             kernel_name(kernel), entry, server->base.properties.name);
  }
  cl_uint args = 0;
  err = clGetKernelInfo(k->kernel, CL_KERNEL_NUM_ARGS, sizeof(args), &args, NULL);
  if (err == CL_SUCCESS && args) {
    k->args = calloc(args, sizeof(*k->args));
    if (!k->args) err = CL_OUT_OF_HOST_MEMORY;
  }
  if (err != CL_SUCCESS) {
    kernel_free(k);
    return cubert_ocl_status(err, CUBERT_CODE_COMPILATION,
                             "kernel '%s': clGetKernelInfo(CL_KERNEL_NUM_ARGS)",
                             kernel_name(kernel));
  }
  k->arg_count = args;
  /* The kernel's own limits (registers, local memory), checked at every launch before the
     enqueue. A driver that cannot answer leaves the device's limits in force. */
  size_t wg = 0;
  cl_ulong local = 0;
  k->max_units = clGetKernelWorkGroupInfo(k->kernel, server->device, CL_KERNEL_WORK_GROUP_SIZE,
                                          sizeof(wg), &wg, NULL) == CL_SUCCESS &&
                         wg
                     ? wg
                     : server->base.properties.hardware.max_units_per_cube;
  k->local_mem = clGetKernelWorkGroupInfo(k->kernel, server->device, CL_KERNEL_LOCAL_MEM_SIZE,
                                          sizeof(local), &local, NULL) == CL_SUCCESS
                     ? local
                     : 0;
  k->program = program;
  k->next = program->kernels;
  program->kernels = k;
  *out = k;
  return NULL;
}

static size_t ref_bucket(const cubert_kernel_def *kernel, cubert_execution_mode mode) {
  uintptr_t h = (uintptr_t)kernel;
  h ^= h >> 17;
  h *= 0x9e3779b97f4a7c15ull;
  return (size_t)((h >> 32) + (uintptr_t)mode) % CUBERT_OCL_KERNEL_BUCKETS;
}

/* ---- read-only strings ------------------------------------------------------------------- */

typedef struct span_query {
  uintptr_t begin, end; /* [begin, end) */
  int read_only;
} span_query;

static int find_segment(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  span_query *q = data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (q->begin >= lo && q->end <= hi) {
      q->read_only = !(ph->p_flags & PF_W);
      return 1;
    }
  }
  return 0;
}

/* True when the NUL-terminated string `s` (NULL counts) lies wholly in a segment of a loaded
   object that is mapped without write permission, so its bytes cannot change while the object
   stays loaded. Conservative: RELRO data and anything outside a loaded object are writable. */
static int string_read_only(const char *s) {
  if (!s) return 1;
  span_query q = {(uintptr_t)s, (uintptr_t)s + strlen(s) + 1, 0};
  dl_iterate_phdr(find_segment, &q);
  return q.read_only;
}

/* For a ref whose strings may change: whether the definition's text is still the text its
   kernel was built from. */
static int ref_text_unchanged(const cubert_ocl_kernel_ref *r, const cubert_kernel_def *kernel) {
  const cubert_ocl_kernel *k = r->kernel;
  const char *entry = kernel->opencl_entry ? kernel->opencl_entry : kernel->name;
  const char *user = kernel->opencl_options ? kernel->opencl_options : "";
  return strcmp(k->program->source, kernel->opencl_source) == 0 && entry &&
         strcmp(k->entry, entry) == 0 && strcmp(r->user_options ? r->user_options : "", user) == 0;
}

cubert_status cubert_ocl_kernel_get(cubert_ocl_server *server, const cubert_kernel_def *kernel,
                                    cubert_execution_mode mode, cubert_ocl_kernel **out) {
  size_t bucket = ref_bucket(kernel, mode);
  for (cubert_ocl_kernel_ref **link = &server->kernel_refs[bucket]; *link; link = &(*link)->next) {
    cubert_ocl_kernel_ref *r = *link;
    if (r->def == kernel && r->mode == mode && r->source == kernel->opencl_source &&
        r->entry == kernel->opencl_entry && r->options == kernel->opencl_options &&
        r->flags == kernel->flags) {
      if (r->immutable || ref_text_unchanged(r, kernel)) {
        *out = r->kernel;
        return NULL;
      }
      /* Rewritten in place: forget this ref and look the new text up by content. The old
         program stays cached (other definitions may share it). */
      *link = r->next;
      ref_free(r);
      break;
    }
  }
  *out = NULL;
  if (!kernel->opencl_source)
    return cubert_status_make(CUBERT_CODE_COMPILATION,
                              "kernel '%s' has no implementation for backend 'opencl' "
                              "(opencl_source is NULL)",
                              kernel_name(kernel));
  CUBERT_RETURN_IF_ERROR(cubert_ocl_check_kernel_features(&server->base.properties, kernel));
  const int immutable = string_read_only(kernel->opencl_source) &&
                        string_read_only(kernel->opencl_options) &&
                        string_read_only(kernel->opencl_entry) &&
                        (kernel->opencl_entry || string_read_only(kernel->name));
  cubert_ocl_program *program = NULL;
  CUBERT_RETURN_IF_ERROR(program_get(server, kernel, mode, immutable, &program));
  cubert_ocl_kernel *k = NULL;
  CUBERT_RETURN_IF_ERROR(kernel_object_get(server, program, kernel, &k));
  cubert_ocl_kernel_ref *r = calloc(1, sizeof(*r));
  if (!r) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  r->immutable = immutable;
  if (!r->immutable && kernel->opencl_options &&
      !(r->user_options = strdup(kernel->opencl_options))) {
    free(r);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  r->def = kernel;
  r->source = kernel->opencl_source;
  r->entry = kernel->opencl_entry;
  r->options = kernel->opencl_options;
  r->flags = kernel->flags;
  r->mode = mode;
  r->kernel = k;
  r->next = server->kernel_refs[bucket];
  server->kernel_refs[bucket] = r;
  *out = k;
  return NULL;
}
