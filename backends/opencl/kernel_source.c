/* cubert — one kernel-language kernel per OpenCL program (the tuner's "compile candidates
   lazily").

   A kernel-language file flattens into one OpenCL C text that holds every kernel of the file:
   kernels/reduce_axis.cube.c is 65 kernels in 830 KB. Built whole, the first launch of any one
   of them compiles all 65: 7–10 s on PoCL (2-core VM), against 1.8–2.1 s for a text holding
   one entry point; a program's load on NVIDIA grows with its kernels too. So the OpenCL server
   builds a kernel-language kernel (one with a signature, whose strings cannot change) from its
   file's text with every other kernel's `__kernel void name(...) { ... }` wrapper blanked out.
   The wrappers are all the generated code that calls a kernel's body (cube_opencl.h). The
   other kernels' body functions (`static inline void <name>_body_(...) { ... }`) are blanked
   too: nothing calls them any more, and although a compiler emits no code for them it still
   parses them, which was most of a program's build on PoCL for the large files (the reduce
   file's 1.1 MB: docs/benchmarks-history.md, "Tuning in seconds"). Their prototypes, the files'
   helpers and types stay. Blanking keeps every newline, so the #line directives and the
   build log's line numbers still match the kernel file. Hand-written OpenCL C is built whole:
   its kernels may call each other. */
#include "opencl/kernel_source.h"

#include <stdlib.h>
#include <string.h>

static const char wrapper[] = "__kernel void ";
static const char body_def[] = "static inline void ";
static const char body_suffix[] = "_body_";

/* One past the character that closes the bracket opening at `open` ('{' or '('), skipping
   string and character literals; NULL when it does not balance. */
static const char *closing(const char *open) {
  const char in = *open, out = in == '{' ? '}' : ')';
  int depth = 0;
  for (const char *p = open; *p; ++p) {
    if (*p == '"' || *p == '\'') {
      const char quote = *p;
      for (++p; *p && *p != quote; ++p)
        if (*p == '\\' && p[1]) ++p;
      if (!*p) return NULL;
      continue;
    }
    if (*p == in) ++depth;
    if (*p == out && --depth == 0) return p + 1;
  }
  return NULL;
}

/* The end (one past the closing brace) of the wrapper whose text starts at `at`; NULL when
   its braces do not balance. */
static const char *wrapper_end(const char *at) {
  const char *p = strchr(at, '{');
  return p ? closing(p) : NULL;
}

static void blank(char *from, const char *to) {
  for (; from < to; ++from)
    if (*from != '\n') *from = ' ';
}

/* The name of a blanked wrapper: a pointer into the text, not terminated. */
typedef struct blanked_name {
  const char *text;
  size_t len;
} blanked_name;

/* The names of the wrappers blanked so far. */
typedef struct blanked {
  blanked_name *names;
  size_t count, capacity;
} blanked;

static int was_blanked(const blanked *b, const char *name, size_t len) {
  for (size_t i = 0; i < b->count; ++i)
    if (b->names[i].len == len && memcmp(b->names[i].text, name, len) == 0) return 1;
  return 0;
}

/* Blanks the definition of each blanked kernel's body function; its prototype stays. */
static void blank_bodies(char *text, const blanked *b) {
  for (char *at = strstr(text, body_def); at; at = strstr(at + 1, body_def)) {
    const char *name = at + sizeof body_def - 1;
    const size_t len = strcspn(name, "( \t\n"), suffix = sizeof body_suffix - 1;
    if (len <= suffix || memcmp(name + len - suffix, body_suffix, suffix) != 0 ||
        !was_blanked(b, name, len - suffix))
      continue;
    const char *params = strchr(name, '(');
    const char *after = params ? closing(params) : NULL;
    if (!after) return;
    after += strspn(after, " \t\n");
    if (*after != '{') continue; /* the prototype */
    const char *end = closing(after);
    if (!end) return;
    blank(at, end);
  }
}

char *cubert_ocl_kernel_only_source(const char *source, const char *entry) {
  if (!source || !entry || !entry[0]) return NULL;
  const size_t len = strlen(source), entry_len = strlen(entry);
  char *out = malloc(len + 1);
  blanked b = {0};
  if (!out) return NULL;
  memcpy(out, source, len + 1);
  int found = 0, complete = 1;
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
    if (complete && b.count == b.capacity) {
      const size_t capacity = b.capacity ? 2 * b.capacity : 16;
      blanked_name *names = realloc(b.names, capacity * sizeof(*names));
      if (names) {
        b.names = names;
        b.capacity = capacity;
      }
      complete = names != NULL; /* without memory, the bodies stay (still correct) */
    }
    if (complete) /* the name's text in `source`: `out` is about to be blanked */
      b.names[b.count++] = (blanked_name){source + (name - out), name_len};
    blank(at, end);
    at += end - at;
  }
  if (found && complete) blank_bodies(out, &b);
  free(b.names);
  if (!found) {
    free(out);
    return NULL;
  }
  return out;
}
