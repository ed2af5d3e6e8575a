/* cubert — programs (cubert/program.h): OpenCL C source and build options, and the kernel
   definitions made from them. A program only owns text: the OpenCL server builds and caches it
   per device like any kernel's source (backends/opencl/program.c), so every kernel of one
   program shares one cl_program, and the disk cache serves it as it serves cubert's kernels. */
#include "cubert/program.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

/* -cl-kernel-arg-info keeps the arguments' names and kinds in the program, which the launch's
   checks and errors read (clGetKernelArgInfo). */
static const char kArgInfoOption[] = "-cl-kernel-arg-info";

typedef struct program_kernel {
  cubert_kernel_def def;
  char *name;
  char *entry;
  struct program_kernel *next;
} program_kernel;

struct cubert_program {
  char *source;
  char *options;
  program_kernel *kernels;
};

void cubert_program_release(cubert_program *program) {
  if (!program) return;
  for (program_kernel *k = program->kernels; k;) {
    program_kernel *next = k->next;
    free(k->name);
    free(k->entry);
    free(k);
    k = next;
  }
  free(program->source);
  free(program->options);
  free(program);
}

/* Takes ownership of `source` (malloc'd), also on failure. */
static cubert_status program_make(char *source, const char *build_options, cubert_program **out) {
  const char *user = build_options ? build_options : "";
  size_t size = sizeof kArgInfoOption + 1 + strlen(user);
  cubert_program *p = calloc(1, sizeof(*p));
  char *options = malloc(size);
  if (!p || !options) {
    free(p);
    free(options);
    free(source);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  snprintf(options, size, "%s%s%s", kArgInfoOption, user[0] ? " " : "", user);
  p->source = source;
  p->options = options;
  *out = p;
  return NULL;
}

cubert_status cubert_program_create(const char *source, const char *build_options,
                                    cubert_program **out) {
  if (out) *out = NULL;
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  if (!source || !source[0])
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "source is %s; pass the program's OpenCL C text",
                              source ? "empty" : "NULL");
  char *copy = strdup(source);
  if (!copy) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  return program_make(copy, build_options, out);
}

/* The whole file at `path` as a string, in *out (malloc'd). */
static cubert_status read_text(const char *path, char **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "cannot open the OpenCL C file \"%s\": %s",
                              path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *text = malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - 1 - len, f);
    if (len < cap - 1) break;
    char *bigger = realloc(text, cap * 2);
    if (!bigger) free(text);
    text = bigger;
    cap *= 2;
  }
  int failed = ferror(f);
  fclose(f);
  if (!text) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (failed || len == 0) {
    free(text);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "the OpenCL C file \"%s\" %s; pass a file holding the program's text",
                              path, failed ? "could not be read" : "is empty");
  }
  text[len] = '\0';
  *out = text;
  return NULL;
}

cubert_status cubert_program_create_from_file(const char *path, const char *build_options,
                                              cubert_program **out) {
  if (out) *out = NULL;
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  if (!path || !path[0])
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "path is %s; pass an OpenCL C file",
                              path ? "empty" : "NULL");
  char *text = NULL;
  CUBERT_RETURN_IF_ERROR(read_text(path, &text));
  return program_make(text, build_options, out);
}

cubert_status cubert_program_kernel(cubert_program *program, const char *entry,
                                    const cubert_program_kernel_options *options,
                                    const cubert_kernel_def **out) {
  if (out) *out = NULL;
  if (!program || !entry || !out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s is NULL",
                              !program ? "program"
                              : !entry ? "entry"
                                       : "out");
  if (!entry[0])
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "entry is empty; pass the name of a __kernel function");
  const cubert_program_kernel_options none = {0};
  if (!options) options = &none;
  program_kernel *k = calloc(1, sizeof(*k));
  if (k) {
    k->entry = strdup(entry);
    k->name = strdup(options->name ? options->name : entry);
  }
  if (!k || !k->entry || !k->name) {
    if (k) free(k->entry), free(k->name);
    free(k);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  k->def = (cubert_kernel_def){
      .name = k->name,
      .opencl_source = program->source,
      .opencl_entry = k->entry,
      .opencl_options = program->options,
      .cpu = options->cpu,
      .flags = (options->flags & ~(uint32_t)CUBERT_KERNEL_ARG_LIST) | CUBERT_KERNEL_ARG_LIST,
      .shared_bytes = options->cpu_local_bytes,
  };
  k->next = program->kernels;
  program->kernels = k;
  *out = &k->def;
  return NULL;
}
