/* cubert — one kernel-language kernel per OpenCL program (the tuner's "compile candidates
   lazily").

   A kernel-language file flattens into one OpenCL C text that holds every kernel of the file:
   kernels/reduce_axis.cube.c is 65 kernels in 830 KB. Built whole, the first launch of any one
   of them compiles all 65: 7–10 s on PoCL (2-core VM), against 1.8–2.1 s for a text holding
   one entry point; a program's load on NVIDIA grows with its kernels too. So the OpenCL server
   builds a kernel-language kernel (one with a signature, whose strings cannot change) from its
   file's text with every other kernel's `__kernel void name(...) { ... }` wrapper blanked out.
   The wrappers are all the generated code that calls a kernel's body (cube_opencl.h), so the
   other bodies are left as unused `static inline` functions, which compilers parse but emit no
   code for. Blanking keeps every newline, so the #line directives and the build log's line
   numbers still match the kernel file. Hand-written OpenCL C is built whole: its kernels may
   call each other. */
#include "opencl/kernel_source.h"

#include <stdlib.h>
#include <string.h>

static const char wrapper[] = "__kernel void ";

/* The end (one past the closing brace) of the wrapper whose text starts at `at`; NULL when
   its braces do not balance. The generated wrappers hold no strings or comments. */
static const char *wrapper_end(const char *at) {
  const char *p = strchr(at, '{');
  if (!p) return NULL;
  int depth = 0;
  for (; *p; ++p) {
    if (*p == '{') ++depth;
    if (*p == '}' && --depth == 0) return p + 1;
  }
  return NULL;
}

char *cubert_ocl_kernel_only_source(const char *source, const char *entry) {
  if (!source || !entry || !entry[0]) return NULL;
  const size_t len = strlen(source), entry_len = strlen(entry);
  char *out = malloc(len + 1);
  if (!out) return NULL;
  memcpy(out, source, len + 1);
  int found = 0;
  for (char *at = strstr(out, wrapper); at; at = strstr(at, wrapper)) {
    const char *name = at + sizeof wrapper - 1;
    const size_t name_len = strcspn(name, "( \t\n");
    if (name_len == entry_len && memcmp(name, entry, entry_len) == 0) {
      found = 1;
      at += sizeof wrapper - 1;
      continue;
    }
    const char *end = wrapper_end(at);
    if (!end) break;
    for (; at < end; ++at)
      if (*at != '\n') *at = ' ';
  }
  if (!found) {
    free(out);
    return NULL;
  }
  return out;
}
