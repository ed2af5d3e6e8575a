/* cubert — CUBERT_TRACE=<path>: every launch of a device is timed (inside its own profile
   region, as CUBERT_PROFILE=basic does) and recorded; when the device is destroyed the events
   are written to <path> as Chrome trace JSON ("X" complete events: the kernel's name, the
   host time it started at, its measured duration, one track per stream slot), to open in
   chrome://tracing or Perfetto. Writing goes through a temporary file and rename, so a reader
   never sees half a trace; a failure to write is logged (the user asked for the file) and
   otherwise ignored. Lock: the device lock. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cubert_trace_event {
  char name[64];
  uint64_t start_ns, duration_ns;
  uint32_t slot;
};

void cubert_trace_record(cubert_device *device, const char *name, uint64_t start_ns,
                         uint64_t duration_ns, uint32_t slot) {
  if (device->trace_count == device->trace_cap) {
    size_t cap = device->trace_cap ? device->trace_cap * 2 : 256;
    cubert_trace_event *grown = realloc(device->trace, cap * sizeof(*grown));
    if (!grown) return; /* the trace loses this launch; the launch itself succeeded */
    device->trace = grown;
    device->trace_cap = cap;
  }
  cubert_trace_event *e = &device->trace[device->trace_count++];
  snprintf(e->name, sizeof e->name, "%s", name ? name : "(unnamed)");
  e->start_ns = start_ns;
  e->duration_ns = duration_ns;
  e->slot = slot;
}

/* Writes `s` as a JSON string body (quotes and backslashes escaped, control bytes dropped). */
static void json_string(FILE *f, const char *s) {
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
}

void cubert_trace_flush(cubert_device *device) {
  const char *path = cubert_config_get()->trace_path;
  if (path && *path && device->trace_count) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
      cubert_log(CUBERT_LOG_WARN, "trace", "CUBERT_TRACE: cannot write %s", tmp);
    } else {
      uint64_t origin = device->trace[0].start_ns;
      fputs("{\"traceEvents\":[\n", f);
      for (size_t i = 0; i < device->trace_count; ++i) {
        const cubert_trace_event *e = &device->trace[i];
        fputs("{\"name\":\"", f);
        json_string(f, e->name);
        fprintf(
            f,
            "\",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%u}%s\n",
            (double)(e->start_ns - origin) / 1e3, (double)e->duration_ns / 1e3, e->slot,
            i + 1 < device->trace_count ? "," : "");
      }
      fprintf(f, "],\"otherData\":{\"device\":\"");
      json_string(f, device->server ? device->server->properties.name : "");
      fputs("\"}}\n", f);
      int bad = ferror(f);
      if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        cubert_log(CUBERT_LOG_WARN, "trace", "CUBERT_TRACE: writing %s failed", path);
        remove(tmp);
      }
    }
  }
  free(device->trace);
  device->trace = NULL;
  device->trace_count = device->trace_cap = 0;
}
