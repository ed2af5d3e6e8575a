/* cubert — CUBERT_TRACE: launches recorded as Chrome trace events (core-internal; trace.c).

   Its per-device state (cubert_device.trace) is the device's track group in the process's
   trace: valid when zeroed, nothing to free. Lock: the trace's process-wide lock (trace.c)
   guards both the file and each device's id; callers also hold the device lock. */
#ifndef CUBERT_TRACE_H
#define CUBERT_TRACE_H

#include <stdint.h>

typedef struct cubert_device cubert_device;

typedef struct cubert_trace_state {
  uint32_t id; /* the device's track group (pid); 0 until its first launch was recorded */
} cubert_trace_state;

/* Appends one launch to the process's trace file: host start time and duration in ns, on
   stream slot `slot` of `device` (the device's first event also names its track group).
   Thread-safe (a process-wide lock); called with the device lock held. A trace that cannot be
   written is logged once and otherwise ignored. */
void cubert_trace_record(cubert_device *device, const char *name, uint64_t start_ns,
                         uint64_t duration_ns, uint32_t slot);
/* At device destroy: makes sure every event written so far is in the file (each event is
   flushed as it is recorded; this catches a failed write). The file stays open for the other
   devices of the process. */
void cubert_trace_flush(cubert_device *device);

#endif
