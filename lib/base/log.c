/* cubert — diagnostic logging and the monotonic clock.

   The library never prints on its own for an error (errors are returned); this logger is for
   what a user asks to see through CUBERT_LOG. Filtering is decided by config.c, which owns the
   parsing of CUBERT_LOG.

   Why format into a local buffer and write under flockfile: concurrent threads would otherwise
   interleave pieces of their lines; one locked fputs keeps each line whole without a lock of
   our own. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "cubert/config.h"

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

/* The sink: CUBERT_LOG_FILE, opened once for appending (and kept open for the process: lines
   may come from any thread until exit), else stderr. A file that cannot be opened leaves the
   lines on stderr, with one line there saying why. */
static FILE *log_file;
static char log_file_path[4096];
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;

static FILE *sink(int *out_failed) {
  const char *path = cubert_config_get()->log_path;
  *out_failed = 0;
  if (!path || !*path) return stderr;
  pthread_mutex_lock(&sink_lock);
  /* The tests reload the configuration: follow a new path. */
  if (strcmp(log_file_path, path) != 0) {
    if (log_file) fclose(log_file);
    snprintf(log_file_path, sizeof log_file_path, "%s", path);
    log_file = fopen(path, "a");
    if (log_file) setvbuf(log_file, NULL, _IOLBF, 0);
    *out_failed = !log_file;
  }
  FILE *f = log_file ? log_file : stderr;
  pthread_mutex_unlock(&sink_lock);
  return f;
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
  int failed = 0;
  FILE *out = sink(&failed);
  if (failed)
    fprintf(stderr,
            "cubert[warn][config]: CUBERT_LOG_FILE '%s' cannot be opened for appending; "
            "logging to stderr\n",
            cubert_config_get()->log_path);
  flockfile(out);
  fputs(line, out);
  funlockfile(out);
}

uint64_t cubert_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
