/* cubert OpenCL server — build logs that name the kernel file and line.

   Kernel-language sources carry `#line` directives (cmake/flatten.cmake), so a compiler that
   honours them (PoCL, Clang) reports `.../saxpy.cube.c:11:8: error: ...`. Others ignore them and
   name the program itself with the physical line: NVIDIA's driver writes `<kernel>:122:8:`.
   This file rewrites such locations (a name in angle brackets, a line number, a colon) through
   the source's own `#line` directives, so every driver's log points at the user's file. Logs
   without such locations, and sources without directives, are left as they are. */
#include "opencl/build_log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The file and line that physical line `line` (1-based) of `source` stands for, through the last
   `#line N "file"` directive above it. 0 when no directive precedes it. */
static int presumed(const char *source, unsigned long line, char *file, size_t file_size,
                    unsigned long *out_line) {
  unsigned long physical = 1, base_physical = 0, base_line = 0;
  int found = 0;
  for (const char *p = source; *p && physical < line; ++physical) {
    if (strncmp(p, "#line ", 6) == 0) {
      char *end = NULL;
      unsigned long n = strtoul(p + 6, &end, 10);
      const char *q = strchr(end, '"'), *r = q ? strchr(q + 1, '"') : NULL;
      const char *nl = strchr(p, '\n');
      if (q && r && (!nl || r < nl) && (size_t)(r - q - 1) < file_size) {
        memcpy(file, q + 1, (size_t)(r - q - 1));
        file[r - q - 1] = '\0';
        base_physical = physical;
        base_line = n;
        found = 1;
      }
    }
    const char *nl = strchr(p, '\n');
    if (!nl) return 0; /* the source has fewer lines: not a location in it */
    p = nl + 1;
  }
  if (!found || physical != line) return 0;
  *out_line = base_line + (line - base_physical - 1);
  return 1;
}

char *cubert_ocl_log_relocate(const char *source, char *log) {
  if (!source || !log || !strstr(source, "#line ") || !strstr(log, ">:")) return log;
  size_t cap = strlen(log) * 2 + 256, len = 0;
  char *out = malloc(cap);
  if (!out) return log;
  for (const char *p = log; *p;) {
    /* `<name>:LINE:` */
    const char *close = *p == '<' ? strchr(p, '>') : NULL;
    /* Clang's pseudo-files are not the program. */
    int pseudo = strncmp(p, "<built-in>", 10) == 0 || strncmp(p, "<command line>", 14) == 0 ||
                 strncmp(p, "<scratch space>", 15) == 0;
    if (close && !pseudo && close[1] == ':' && isdigit((unsigned char)close[2]) &&
        !memchr(p, '\n', (size_t)(close - p))) {
      char *end = NULL;
      unsigned long line = strtoul(close + 2, &end, 10);
      char file[512];
      unsigned long mapped = 0;
      if (*end == ':' && presumed(source, line, file, sizeof file, &mapped)) {
        size_t need = strlen(file) + 32;
        if (len + need + 1 > cap) {
          cap = (len + need + 1) * 2;
          char *grown = realloc(out, cap);
          if (!grown) break;
          out = grown;
        }
        len += (size_t)snprintf(out + len, cap - len, "%s:%lu", file, mapped);
        p = end;
        continue;
      }
    }
    if (len + 2 > cap) {
      cap *= 2;
      char *grown = realloc(out, cap);
      if (!grown) break;
      out = grown;
    }
    out[len++] = *p++;
  }
  out[len] = '\0';
  free(log);
  return out;
}
