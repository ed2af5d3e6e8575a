/* cubert — launches of program kernels (cubert/program.h). The argument list travels through
   the ordinary launch (launch.c) as the buffers of its buffer arguments and info words that
   encode the list (the layout is in program.h, beside the CPU helpers that read it), so streams,
   cross-stream order, pins, profiles, dry run and autotune's scratch copies treat it as any
   launch; the OpenCL server decodes the words into clSetKernelArg calls in the kernel's order
   (backends/opencl/arg_list.c). */
#include "launch_args.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/program.h"

/* Bytes of local memory the arguments take on the CPU server (program.h: each argument at a
   multiple of 16 bytes). */
static uint64_t cpu_local_total(const uint64_t *info) {
  uint64_t total = 0;
  uint32_t n = (uint32_t)info[0];
  for (uint32_t i = 0; i < n; ++i)
    if (info[1 + i] >> 56 == CUBERT_ARG_LOCAL) total += ((uint32_t)info[1 + i] + 15) & ~15ull;
  return total;
}

cubert_status cubert_launch_args_check(const cubert_kernel_def *kernel,
                                       const cubert_kernel_args *args, int is_cpu) {
  if (!(kernel->flags & CUBERT_KERNEL_ARG_LIST)) return NULL;
  if (is_cpu && !kernel->cpu)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "kernel \"%s\" is OpenCL C without a CPU function: it is not "
                              "supported on the CPU server; run it on an \"opencl\" device "
                              "(\"opencl:cpu\" runs OpenCL C on the CPU) or give its definition "
                              "a CPU function (cubert_program_kernel_options.cpu)",
                              kernel->name);
  if (!args || !args->info_count ||
      (args->info[0] & 0xffffffff00000000ull) != CUBERT_ARG_LIST_MAGIC)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" comes from a program (cubert/program.h): launch it "
                              "with cubert_client_launch_args, not with cubert_kernel_args",
                              kernel->name);
  uint64_t local = is_cpu ? cpu_local_total(args->info) : 0;
  if (local > kernel->shared_bytes)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_SHARED_MEMORY,
                           "kernel \"%s\": its __local arguments take %llu bytes on the CPU server "
                           "(each rounded up to 16), its definition allows %llu; raise "
                           "cubert_program_kernel_options.cpu_local_bytes",
                           kernel->name, (unsigned long long)local,
                           (unsigned long long)kernel->shared_bytes),
        local, kernel->shared_bytes);
  return NULL;
}

/* Checks argument `i` on its own (what needs no server). */
static cubert_status check_arg(const cubert_kernel_def *kernel, const cubert_arg *a, uint32_t i) {
  const char *what = a->kind == CUBERT_ARG_SCALAR ? "scalar" : "local";
  switch (a->kind) {
    case CUBERT_ARG_BUFFER:
      if (!a->handle)
        return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                  "kernel \"%s\": argument %u is a buffer with a NULL handle",
                                  kernel->name, i);
      return NULL;
    case CUBERT_ARG_SCALAR:
      if (!a->value)
        return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                  "kernel \"%s\": argument %u is a scalar with a NULL value",
                                  kernel->name, i);
      /* fall through */
    case CUBERT_ARG_LOCAL:
      if (a->size == 0 || a->size > UINT32_MAX)
        return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                  "kernel \"%s\": argument %u is a %s of %llu bytes; expected 1 "
                                  "to 4294967295 bytes",
                                  kernel->name, i, what, (unsigned long long)a->size);
      return NULL;
    default:
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "kernel \"%s\": argument %u has kind %d; expected "
                                "CUBERT_ARG_BUFFER (1), _SCALAR (2) or _LOCAL (3)",
                                kernel->name, i, (int)a->kind);
  }
}

/* Encodes the list (program.h) into `words` and the buffer arguments' handles into
   `handles`; *out_buffers counts them. */
static void encode(const cubert_arg *args, uint32_t n, uint64_t *words, cubert_handle **handles,
                   uint32_t *out_buffers) {
  uint32_t buffers = 0;
  uint64_t next = 1 + (uint64_t)n;
  words[0] = CUBERT_ARG_LIST_MAGIC | n;
  for (uint32_t i = 0; i < n; ++i) {
    const cubert_arg *a = &args[i];
    uint64_t index = 0;
    if (a->kind == CUBERT_ARG_BUFFER) {
      index = buffers;
      handles[buffers++] = a->handle;
    } else if (a->kind == CUBERT_ARG_SCALAR) {
      index = next;
      words[next + (a->size - 1) / 8] = 0; /* the last word's padding */
      memcpy(words + next, a->value, (size_t)a->size);
      next += (a->size + 7) / 8;
    }
    words[1 + i] =
        (uint64_t)a->kind << 56 | index << 32 | (a->kind == CUBERT_ARG_BUFFER ? 0 : a->size);
  }
  *out_buffers = buffers;
}

cubert_status cubert_client_launch_args(cubert_client *client, const cubert_kernel_def *kernel,
                                        cubert_cube_count count, cubert_cube_dim dim,
                                        const cubert_arg *args, uint32_t arg_count) {
  if (!kernel) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "kernel is NULL");
  if (!(kernel->flags & CUBERT_KERNEL_ARG_LIST))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" is not a program kernel: make it with "
                              "cubert_program_kernel (cubert/program.h), or launch it with "
                              "cubert_client_launch",
                              kernel->name ? kernel->name : "(unnamed)");
  if (arg_count && !args)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "args is NULL but arg_count is %u",
                              arg_count);
  if (arg_count > CUBERT_ARGS_MAX)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\": %u arguments; at most %u (CUBERT_ARGS_MAX)",
                              kernel->name, arg_count, CUBERT_ARGS_MAX);
  uint64_t words = 1 + (uint64_t)arg_count;
  for (uint32_t i = 0; i < arg_count; ++i) {
    CUBERT_RETURN_IF_ERROR(check_arg(kernel, &args[i], i));
    if (args[i].kind == CUBERT_ARG_SCALAR) words += (args[i].size + 7) / 8;
  }
  if (words > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\": the scalar arguments take %llu words of 8 bytes; at "
                              "most 4294967295",
                              kernel->name, (unsigned long long)words);
  enum { INLINE_WORDS = 64 };
  uint64_t inline_words[INLINE_WORDS];
  cubert_handle *handles[CUBERT_ARGS_MAX];
  uint64_t *info = words <= INLINE_WORDS ? inline_words : malloc(words * sizeof(uint64_t));
  if (!info) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  uint32_t buffers = 0;
  encode(args, arg_count, info, handles, &buffers);
  cubert_kernel_args kargs = {handles, buffers, info, (uint32_t)words};
  cubert_status s =
      cubert_client_launch_mode(client, kernel, count, dim, &kargs, CUBERT_EXECUTION_CHECKED);
  if (info != inline_words) free(info);
  return s;
}
