/* Test helper: captures what the library writes to stderr (fd 2) between begin and end. */
#ifndef CUBERT_TESTS_CORE_CAPTURE_H
#define CUBERT_TESTS_CORE_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct core_capture {
  FILE *file;
  int saved_fd;
  char text[16384];
} core_capture;

static inline int core_capture_begin(core_capture *c) {
  fflush(stderr);
  c->file = tmpfile();
  if (!c->file) return 0;
  c->saved_fd = dup(2);
  return c->saved_fd >= 0 && dup2(fileno(c->file), 2) >= 0;
}

/* Restores stderr and returns everything written since begin (NUL-terminated). */
static inline const char *core_capture_end(core_capture *c) {
  fflush(stderr);
  dup2(c->saved_fd, 2);
  close(c->saved_fd);
  rewind(c->file);
  size_t n = fread(c->text, 1, sizeof(c->text) - 1, c->file);
  c->text[n] = '\0';
  fclose(c->file);
  return c->text;
}

#endif /* CUBERT_TESTS_CORE_CAPTURE_H */
