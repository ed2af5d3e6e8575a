/* cubert — the OpenCL server's launches of program kernels (cubert/program.h). The core hands
   such a launch over as its buffers plus info words that encode the argument list (program.h:
   one word per argument, then the scalars' bytes); this file checks the list against the
   kernel's own arguments and sets them in the kernel's order. */
#include "opencl/arg_list.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/program.h"
#include "opencl/errors.h"
#include "opencl/launch.h"
#include "opencl/memory.h"

static const char *arg_name(const cubert_ocl_kernel *k, uint32_t i) {
  return k->arg_info_state == 1 && k->arg_info[i].name[0] ? k->arg_info[i].name : "?";
}

/* Reads the argument info once per kernel object; a driver that kept none (a program built
   without -cl-kernel-arg-info, or loaded from a binary without it) leaves only the count. */
static void query_info(cubert_ocl_kernel *k) {
  if (k->arg_info_state) return;
  k->arg_info_state = 2;
  if (!k->arg_count) return;
  cubert_ocl_arg_info *info = calloc(k->arg_count, sizeof(*info));
  if (!info) return;
  for (cl_uint i = 0; i < k->arg_count; ++i) {
    cubert_ocl_arg_info *a = &info[i];
    if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof a->address,
                           &a->address, NULL) != CL_SUCCESS) {
      free(info);
      return;
    }
    /* A name or type longer than the field is simply not shown. */
    if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_NAME, sizeof a->name, a->name, NULL) !=
        CL_SUCCESS)
      a->name[0] = '\0';
    if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof a->type, a->type, NULL) !=
        CL_SUCCESS)
      a->type[0] = '\0';
  }
  k->arg_info = info;
  k->arg_info_state = 1;
}

/* The size of a built-in scalar or vector type named `type` ("uint", "float4", "half8"), or 0
   for any other (a struct, a typedef): those are left to clSetKernelArg. */
static uint64_t builtin_size(const char *type) {
  static const struct {
    const char *name;
    uint32_t bytes;
  } kTypes[] = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"half", 2},  {"int", 4},
                {"uint", 4}, {"float", 4}, {"long", 8},  {"ulong", 8},  {"double", 8}};
  for (size_t t = 0; t < sizeof kTypes / sizeof kTypes[0]; ++t) {
    size_t len = strlen(kTypes[t].name);
    if (strncmp(type, kTypes[t].name, len) != 0) continue;
    const char *rest = type + len;
    if (!rest[0]) return kTypes[t].bytes;
    long n = strtol(rest, NULL, 10);
    if (strcmp(rest, "2") && strcmp(rest, "3") && strcmp(rest, "4") && strcmp(rest, "8") &&
        strcmp(rest, "16"))
      return 0;
    return kTypes[t].bytes * (uint64_t)(n == 3 ? 4 : n); /* a 3-vector is stored as a 4-vector */
  }
  return 0;
}

static const char *kind_text(uint32_t kind) {
  return kind == CUBERT_ARG_BUFFER   ? "a buffer"
         : kind == CUBERT_ARG_LOCAL  ? "a __local size"
         : kind == CUBERT_ARG_SCALAR ? "a scalar"
                                     : "an unknown kind";
}

/* What the kernel declares for argument `a`: the kind it takes, its words for errors and the
   call that passes it. */
static uint32_t expected_kind(const cubert_ocl_arg_info *a, const char **out_text,
                              const char **out_fix) {
  switch (a->address) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
      *out_text = a->address == CL_KERNEL_ARG_ADDRESS_GLOBAL ? "a __global pointer"
                                                             : "a __constant pointer";
      *out_fix = "pass cubert_arg_buffer";
      return CUBERT_ARG_BUFFER;
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
      *out_text = "a __local pointer";
      *out_fix = "pass cubert_arg_local with its size in bytes";
      return CUBERT_ARG_LOCAL;
    default:
      *out_text = "a value";
      *out_fix = "pass cubert_arg_scalar (CUBERT_ARG_VALUE) with its bytes";
      return CUBERT_ARG_SCALAR;
  }
}

/* Checks argument `i` (its info word `w`) against the kernel's declaration. */
static cubert_status check_one(const cubert_ocl_server *server, const cubert_ocl_kernel *k,
                               const cubert_launch *launch, uint32_t i, uint64_t w) {
  uint32_t kind = (uint32_t)(w >> 56);
  if (k->arg_info_state == 1) {
    const cubert_ocl_arg_info *a = &k->arg_info[i];
    const char *text = NULL, *fix = NULL;
    if (expected_kind(a, &text, &fix) != kind)
      return cubert_status_make(
          CUBERT_CODE_INVALID_ARGUMENT,
          "%s: argument %u ('%s') is declared as %s (%s): %s; the launch passes %s", k->what, i,
          a->name, text, a->type, fix, kind_text(kind));
    uint64_t want = kind == CUBERT_ARG_SCALAR ? builtin_size(a->type) : 0;
    if (want && want != (uint32_t)w)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: argument %u ('%s') has type %s, %llu bytes; the launch "
                                "passes %llu bytes",
                                k->what, i, a->name, a->type, (unsigned long long)want,
                                (unsigned long long)(uint32_t)w);
  }
  if (kind != CUBERT_ARG_BUFFER) return NULL;
  const cubert_binding *b = &launch->bindings[(w >> 32) & 0xffffff];
  uint64_t align = server->base.properties.memory.alignment;
  if (b->size && align > 1 && b->offset % align)
    return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                              "%s: argument %u ('%s') is a view starting at byte %llu of its "
                              "buffer's memory, not a multiple of the device's base address "
                              "alignment (%llu bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN), so OpenCL "
                              "cannot bind it; pass the whole buffer and the offset as an "
                              "integer argument",
                              k->what, i, arg_name(k, i), (unsigned long long)b->offset,
                              (unsigned long long)align);
  return NULL;
}

cubert_status cubert_ocl_arg_list_check(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                        const cubert_launch *launch, uint64_t *out_local) {
  *out_local = 0;
  uint32_t n = (uint32_t)launch->info[0];
  query_info(k);
  if (n != k->arg_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s declares %u arguments; the launch passes %u", k->what,
                              k->arg_count, n);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t w = launch->info[1 + i];
    CUBERT_RETURN_IF_ERROR(check_one(server, k, launch, i, w));
    if (w >> 56 == CUBERT_ARG_LOCAL) *out_local += (uint32_t)w;
  }
  return NULL;
}

cubert_status cubert_ocl_arg_list_set(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                      const cubert_launch *launch, int valid) {
  uint32_t n = (uint32_t)launch->info[0];
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t w = launch->info[1 + i];
    uint32_t kind = (uint32_t)(w >> 56), index = (uint32_t)(w >> 32) & 0xffffff;
    if (kind == CUBERT_ARG_BUFFER) {
      cl_mem mem = NULL;
      CUBERT_RETURN_IF_ERROR(cubert_ocl_binding_kernel_mem(server, &launch->bindings[index], &mem));
      CUBERT_RETURN_IF_ERROR(cubert_ocl_kernel_set_mem(k, i, mem, valid));
      continue;
    }
    /* A scalar or local argument replaces whatever buffer the cache remembers there. */
    k->args[i] = NULL;
    cl_int err =
        clSetKernelArg(k->kernel, i, (size_t)(uint32_t)w,
                       kind == CUBERT_ARG_SCALAR ? (const void *)(launch->info + index) : NULL);
    if (err != CL_SUCCESS)
      return cubert_ocl_status(err, CUBERT_CODE_INVALID_ARGUMENT,
                               "%s: clSetKernelArg(%u) for argument %u ('%s'), %s of %u bytes",
                               k->what, i, i, arg_name(k, i), kind_text(kind), (uint32_t)w);
  }
  return NULL;
}
