/* Checks of kernel-language kernels in the core: the declared signature against a launch's
   buffers (every server, before anything is queued), the execution mode after
   CUBERT_CHECK_MODE, and the one message format of a validate-mode violation, which the CPU
   server builds from a kernel's report and the OpenCL server from the record a kernel wrote. */
#include "kernel_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "base/status.h"
#include "cubert/config.h"
#include "cubert/server/violation.h"
#include "device.h"

void cubert_kernel_describe(const cubert_kernel_signature *sig, int scalars, char *out,
                            size_t size) {
  size_t used = 0;
  out[0] = '\0';
  const uint32_t count = scalars ? sig->scalar_count : sig->buffer_count;
  for (uint32_t i = 0; i < count && used < size; ++i) {
    const char *name = scalars ? sig->scalars[i].name : sig->buffers[i].name;
    const char *type = scalars ? sig->scalars[i].type : sig->buffers[i].type;
    int n = snprintf(out + used, size - used, "%s%s: %s", i ? ", " : "", name, type);
    if (n < 0) break;
    used += (size_t)n;
  }
}

cubert_status cubert_kernel_check_signature(const cubert_kernel_def *kernel,
                                            const cubert_binding *bindings, uint32_t got) {
  const cubert_kernel_signature *sig = kernel->signature;
  if (!sig) return NULL;
  const char *name = kernel->name ? kernel->name : "(unnamed)";
  if (got != sig->buffer_count) {
    char decl[512];
    cubert_kernel_describe(sig, 0, decl, sizeof decl);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" expects %" PRIu32 " buffers (%s), got %" PRIu32, name,
                              sig->buffer_count, decl, got);
  }
  for (uint32_t i = 0; i < got; ++i) {
    const cubert_kernel_buffer_decl *d = &sig->buffers[i];
    uint64_t size = bindings[i].size;
    if (d->elem_bytes && size % d->elem_bytes != 0)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "kernel \"%s\" buffer %" PRIu32
                                " (%s: %s) expects whole "
                                "%" PRIu32 "-byte elements, got a buffer of %" PRIu64 " bytes",
                                name, i, d->name, d->type, d->elem_bytes, size);
    /* The page is aligned for any element (memory.alignment): the offset decides. A view at
       an offset that breaks the element's alignment would make every access a misaligned
       load or store (undefined in C; OpenCL refuses such a sub-buffer). */
    const uint64_t align = d->elem_bytes ? (d->elem_bytes & (~d->elem_bytes + 1)) : 1;
    if (size && bindings[i].offset % align != 0)
      return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                                "kernel \"%s\" buffer %" PRIu32
                                " (%s: %s) starts at byte offset "
                                "%" PRIu64
                                " of its allocation, not a multiple of its elements' "
                                "%" PRIu64
                                "-byte alignment; bind a view at an aligned offset "
                                "or copy the data",
                                name, i, d->name, d->type, bindings[i].offset, align);
  }
  return NULL;
}

cubert_status cubert_kernel_check_scalars(const cubert_kernel_def *kernel, uint32_t info_count) {
  const cubert_kernel_signature *sig = kernel->signature;
  if (!sig || info_count >= sig->scalar_count) return NULL;
  char decl[512];
  cubert_kernel_describe(sig, 1, decl, sizeof decl);
  return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                            "kernel \"%s\" declares %" PRIu32
                            " named scalars (%s), info words "
                            "0 .. %" PRIu32 ", but the launch passes %" PRIu32
                            " info words; set each with cubert_kernel_scalar_set_*",
                            kernel->name ? kernel->name : "(unnamed)", sig->scalar_count, decl,
                            sig->scalar_count - 1, info_count);
}

cubert_status cubert_kernel_check_dynamic_shared(const cubert_kernel_def *kernel,
                                                 uint64_t dynamic_bytes, uint64_t max_shared,
                                                 const char *device_name) {
  const char *name = kernel->name ? kernel->name : "(unnamed)";
  const cubert_kernel_buffer_decl *d = kernel->signature ? kernel->signature->dynamic_shared : NULL;
  if (!dynamic_bytes) return NULL;
  if (!d)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" declares no (dynamic_shared, type, name) array, but "
                              "the launch gives it %" PRIu64
                              " bytes of dynamic shared memory; pass 0",
                              name, dynamic_bytes);
  if (d->elem_bytes && dynamic_bytes % d->elem_bytes)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" dynamic shared array \"%s\" (%s) takes whole "
                              "%" PRIu32 "-byte elements, got %" PRIu64 " bytes",
                              name, d->name, d->type, d->elem_bytes, dynamic_bytes);
  const uint64_t offset = (kernel->shared_bytes + CUBERT_DYNAMIC_SHARED_ALIGN - 1) &
                          ~(uint64_t)(CUBERT_DYNAMIC_SHARED_ALIGN - 1);
  if (offset > max_shared || dynamic_bytes > max_shared - offset)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "kernel \"%s\" dynamic shared array \"%s\": %" PRIu64
                           " bytes after %" PRIu64 " bytes of static shared memory exceed the "
                           "maximum of %" PRIu64 " bytes per cube on '%s'; pass at most %" PRIu64
                           " bytes",
                           name, d->name, dynamic_bytes, offset, max_shared, device_name,
                           offset < max_shared ? max_shared - offset : 0),
        offset + dynamic_bytes, max_shared);
  return NULL;
}

cubert_execution_mode cubert_kernel_effective_mode(cubert_execution_mode requested) {
  switch (cubert_config_get()->check_mode) {
    case 1: /* enforce */
      return requested == CUBERT_EXECUTION_UNCHECKED ? CUBERT_EXECUTION_CHECKED : requested;
    case 2: /* validate */
      return CUBERT_EXECUTION_VALIDATE;
    default:
      return requested;
  }
}

cubert_status cubert_kernel_violation_status(const cubert_kernel_def *kernel,
                                             const cubert_kernel_violation *v) {
  const char *name = kernel && kernel->name ? kernel->name : "(unnamed)";
  char where[128] = "";
  if (v->has_unit)
    snprintf(where, sizeof where, "unit (%u, %u, %u) of cube (%u, %u, %u)", v->unit[0], v->unit[1],
             v->unit[2], v->cube[0], v->cube[1], v->cube[2]);
  else
    snprintf(where, sizeof where, "the launch");
  switch (v->kind) {
    case CUBERT_VIOLATION_BUFFER: {
      const cubert_kernel_signature *sig = kernel ? kernel->signature : NULL;
      char buffer[160];
      if (sig && v->buffer < sig->buffer_count)
        snprintf(buffer, sizeof buffer, "buffer %u \"%s\" (%s)", v->buffer,
                 sig->buffers[v->buffer].name, sig->buffers[v->buffer].type);
      else
        snprintf(buffer, sizeof buffer, "buffer %u", v->buffer);
      return cubert_status_make(CUBERT_CODE_GENERIC,
                                "kernel \"%s\" (validate mode): %s accessed element %" PRIu64
                                " of %s, which holds %" PRIu64 " elements%s%s",
                                name, where, v->index, buffer, v->length, v->what ? ", at " : "",
                                v->what ? v->what : "");
    }
    case CUBERT_VIOLATION_INFO:
      return cubert_status_make(CUBERT_CODE_GENERIC,
                                "kernel \"%s\" (validate mode): %s read info word %" PRIu64
                                ", but the launch passed %" PRIu64 " info words%s%s",
                                name, where, v->index, v->length, v->what ? ", at " : "",
                                v->what ? v->what : "");
    case CUBERT_VIOLATION_INFO_LIMIT:
      return cubert_status_make(CUBERT_CODE_GENERIC,
                                "kernel \"%s\" (validate mode): %s read info word %" PRIu32
                                " = %" PRIu64 ", above the kernel's limit of %" PRIu64,
                                name, where, v->buffer, v->index, v->length);
    case CUBERT_VIOLATION_SANITIZER:
      return cubert_status_make(CUBERT_CODE_GENERIC,
                                "kernel \"%s\" (validate mode, sanitizer): %s: %s", name, where,
                                v->what ? v->what : "kernel sanitizer finding");
    default: {
      /* "at bugs.cube.c:100": the kernel's file, where the signature names it. */
      const cubert_kernel_signature *sig = kernel ? kernel->signature : NULL;
      const char *file = sig && sig->file ? strrchr(sig->file, '/') : NULL;
      char at[160];
      if (sig && sig->file)
        snprintf(at, sizeof at, "at %s:%u", file ? file + 1 : sig->file, v->line);
      else
        snprintf(at, sizeof at, "line %u", v->line);
      return cubert_status_make(CUBERT_CODE_GENERIC, "kernel \"%s\" (validate mode): %s: %s (%s)",
                                name, where, v->what ? v->what : "barrier misuse", at);
    }
  }
}
