/* cubert — CUBERT_TRACE=<path>: every launch is timed (inside its own profile region, as
   CUBERT_PROFILE=basic does) and recorded in one Chrome trace JSON file per process ("X"
   complete events: the kernel's name, the host time it started at, its measured duration), to
   open in chrome://tracing or Perfetto. Each device is one track group ("pid", named after
   the device by a process_name metadata event), each stream slot one track ("tid").

   Why one file per process, streamed: devices used to buffer their events without bound and
   each wrote the whole file when it was destroyed, so the last device destroyed replaced the
   others' events (issue 10 #9). Now the file is created at the process's first event and each
   event is appended as it is recorded: memory stays bounded (stdio's buffer), and the file is
   valid JSON after every event. The closing text ("],...}") follows the last event, and the next
   event is written over it (it is longer, so no stale byte remains). Each event is flushed
   (one write, which the seek back would cost anyway), so the file on disk is complete at any
   time and no buffered bytes are left for a forked child to write again. Kernel names are escaped
   as JSON strings: quotes, backslashes and control bytes as escapes, bytes that are not UTF-8 as
   U+FFFD.

   Lock: a process-wide mutex (several devices record concurrently), taken inside the device
   lock and never the other way round. A failure to write is logged once (the user asked for
   the file) and otherwise ignored. */
#include "trace.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/log.h"
#include "cubert/config.h"
#include "device.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *g_file;
static char *g_path;       /* the path g_file was opened at */
static int g_failed;       /* opening or writing g_path failed: warned, nothing more is tried */
static long g_body_end;    /* file offset just after the last event */
static uint64_t g_events;  /* events written to g_file */
static uint64_t g_origin;  /* host ns of the first event: ts 0 */
static uint32_t g_next_id; /* track groups handed out */

/* The tail must stay shorter than the shortest event (see above). */
static const char kHead[] = "{\"traceEvents\":[";
static const char kTail[] = "\n],\"displayTimeUnit\":\"ns\"}\n";
/* Longest name written per event; longer ones are cut (the cut may split a character, which
   then reads as U+FFFD). */
enum { NAME_MAX_BYTES = 256 };

/* Writes `s` (at most `max` bytes of it) as the body of a JSON string. */
static void json_string(FILE *f, const char *s, size_t max) {
  cubert_json_string_body(f, s, strnlen(s, max));
}

static void fail_locked(const char *what) {
  cubert_log(CUBERT_LOG_WARN, "trace", "CUBERT_TRACE: %s %s failed; launches are not traced", what,
             g_path ? g_path : "(no path)");
  if (g_file) fclose(g_file);
  g_file = NULL;
  g_failed = 1;
}

/* The open trace file for `path`, creating it at the first event of the process (or when the
   configured path changed, which only tests do). NULL when it cannot be written. */
static FILE *file_locked(const char *path) {
  if (g_path && strcmp(g_path, path) != 0) {
    if (g_file) fclose(g_file);
    g_file = NULL;
    free(g_path);
    g_path = NULL;
    g_failed = 0;
  }
  if (g_file || g_failed) return g_file;
  if (!g_path && !(g_path = strdup(path))) return NULL;
  /* Not fopen(path, "w"): a FIFO at the path would block the first launch until a reader
     appeared (forever, in a program that traces itself), and a device node would take the
     events without the seeks back over the closing text. So the open never blocks and only a
     regular file is traced; it is emptied only once known to be one. */
  int fd = open(g_path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ftruncate(fd, 0) != 0)) {
    close(fd);
    fd = -1;
  }
  g_file = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!g_file) {
    if (fd >= 0) close(fd);
    fail_locked("creating the regular file");
    return NULL;
  }
  g_events = 0;
  g_next_id = 0;
  fputs(kHead, g_file);
  g_body_end = ftell(g_file);
  fputs(kTail, g_file);
  if (fflush(g_file) != 0) fail_locked("writing");
  return g_file;
}

/* Starts the next event: back over the closing text, then the separator. */
static void begin_event_locked(FILE *f) {
  fseek(f, g_body_end, SEEK_SET);
  fputs(g_events++ ? ",\n" : "\n", f);
}

/* Ends an event: its end is where the next one starts, the closing text follows it. */
static void end_event_locked(FILE *f) {
  g_body_end = ftell(f);
  fputs(kTail, f);
  if (fflush(f) != 0 || ferror(f) || g_body_end < 0) fail_locked("writing");
}

void cubert_trace_record(cubert_device *device, const char *name, uint64_t start_ns,
                         uint64_t duration_ns, uint32_t slot) {
  const char *path = cubert_config_get()->trace_path;
  if (!path || !*path) return;
  pthread_mutex_lock(&g_lock);
  FILE *f = file_locked(path);
  if (f) {
    if (g_events == 0) g_origin = start_ns;
    if (device->trace.id == 0 || device->trace.id > g_next_id) {
      /* First event of this device in this file: name its track group. */
      device->trace.id = ++g_next_id;
      begin_event_locked(f);
      fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"",
              device->trace.id);
      json_string(f, device->server ? device->server->properties.name : "", NAME_MAX_BYTES);
      fputs(" (", f);
      json_string(f, device->server ? device->server->properties.backend : "", NAME_MAX_BYTES);
      fputs(")\"}}", f);
      end_event_locked(f);
    }
  }
  if (g_file) {
    begin_event_locked(f);
    fputs("{\"name\":\"", f);
    json_string(f, name ? name : "(unnamed)", NAME_MAX_BYTES);
    /* Signed: a launch that started before the first recorded one (another thread) is < 0. */
    double ts = (double)(int64_t)(start_ns - g_origin) / 1e3;
    fprintf(f, "\",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,\"tid\":%u}",
            ts, (double)duration_ns / 1e3, device->trace.id, slot);
    end_event_locked(f);
  }
  pthread_mutex_unlock(&g_lock);
}

void cubert_trace_flush(cubert_device *device) {
  if (!device->trace.id) return;
  pthread_mutex_lock(&g_lock);
  if (g_file && fflush(g_file) != 0) fail_locked("writing");
  pthread_mutex_unlock(&g_lock);
}
