/* cubert — diagnostic logging and the monotonic clock.

   The library never prints on its own for an error (errors are returned); this logger is for
   what a user asks to see through CUBERT_LOG. Filtering is decided by config.c, which owns the
   parsing of CUBERT_LOG.

   Why format into a local buffer and write under flockfile: concurrent threads would otherwise
   interleave pieces of their lines; one locked fputs keeps each line whole without a lock of
   our own. */
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
   may come from any thread until exit), else stderr. A path that cannot be opened, or that is
   not a regular file, leaves the lines on stderr, with one line there saying why.

   Why only regular files, opened with O_NONBLOCK: opening a FIFO for writing waits for a
   reader, and writing to a FIFO, a socket or a terminal waits for its reader too; every thread
   that logs would wait behind the sink's lock, possibly forever. A regular file never waits
   for anyone (O_NONBLOCK has no effect on it); anything else is refused. */
static FILE *log_file;
static char *log_file_path; /* the path log_file belongs to, owned (any length) */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;

/* What a non-regular file is, for the warning. */
static const char *file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}

/* Opens `path` for appending without ever waiting; NULL with one line on stderr saying why. */
static FILE *open_sink(const char *path) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  int open_errno = errno;
  struct stat st;
  /* A FIFO without a reader fails to open (ENXIO) and a folder fails (EISDIR): stat says what
     the path is, so the line names the real reason rather than the errno of the attempt. */
  int have_stat = fd >= 0 ? fstat(fd, &st) == 0 : stat(path, &st) == 0;
  FILE *f = NULL;
  if (have_stat && !S_ISREG(st.st_mode)) {
    fprintf(stderr,
            "cubert[warn][config]: CUBERT_LOG_FILE '%s' is %s, not a regular file (writing to "
            "it could block the program); logging to stderr\n",
            path, file_kind(st.st_mode));
  } else if (fd < 0 || !(f = fdopen(fd, "a"))) {
    fprintf(stderr,
            "cubert[warn][config]: CUBERT_LOG_FILE '%s' cannot be opened for appending (%s); "
            "logging to stderr\n",
            path, strerror(fd < 0 ? open_errno : errno));
  }
  if (!f && fd >= 0) close(fd);
  if (f) setvbuf(f, NULL, _IOLBF, 0);
  return f;
}

static FILE *sink(void) {
  const char *path = cubert_config_get()->log_path;
  if (!path || !*path) return stderr;
  pthread_mutex_lock(&sink_lock);
  /* The tests reload the configuration: follow a new path. */
  if (!log_file_path || strcmp(log_file_path, path) != 0) {
    if (log_file) fclose(log_file);
    free(log_file_path);
    log_file_path = strdup(path);
    log_file = open_sink(path);
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
  FILE *out = sink();
  flockfile(out);
  fputs(line, out);
  funlockfile(out);
}

uint64_t cubert_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
