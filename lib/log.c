/* cubert — diagnostic logging and the monotonic clock.

   The library never prints on its own for an error (errors are returned); this logger is for
   what a user asks to see through CUBERT_LOG. Filtering is decided by config.c, which owns the
   parsing of CUBERT_LOG.

   Why format into a local buffer and write under flockfile: concurrent threads would otherwise
   interleave pieces of their lines; one locked fputs keeps each line whole without a lock of
   our own. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "config_internal.h"
#include "cubert/server.h"

static const char *level_name(int level) {
  switch (level) {
    case CUBERT_LOG_ERROR:
      return "error";
    case CUBERT_LOG_WARN:
      return "warn";
    case CUBERT_LOG_INFO:
      return "info";
    default:
      return "debug";
  }
}

void cubert_log(int level, const char *category, const char *fmt, ...) {
  if (!fmt || !cubert_config_log_wants(level, category)) return;
  char line[1024];
  int prefix = category
                   ? snprintf(line, sizeof(line), "cubert[%s][%s]: ", level_name(level), category)
                   : snprintf(line, sizeof(line), "cubert[%s]: ", level_name(level));
  if (prefix < 0 || (size_t)prefix >= sizeof(line)) return;
  va_list ap;
  va_start(ap, fmt);
  int body = vsnprintf(line + prefix, sizeof(line) - (size_t)prefix, fmt, ap);
  va_end(ap);
  if (body < 0) return;
  size_t len = (size_t)prefix + (size_t)body;
  if (len > sizeof(line) - 2) {
    /* Truncated: mark it so a reader does not mistake the cut line for the whole message. */
    len = sizeof(line) - 5;
    line[len++] = '.';
    line[len++] = '.';
    line[len++] = '.';
  }
  line[len++] = '\n';
  line[len] = '\0';
  flockfile(stderr);
  fputs(line, stderr);
  funlockfile(stderr);
}

uint64_t cubert_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
