/* cubert — CUBERT_TRACE: launches recorded as Chrome trace events (core-internal; trace.c). */
#ifndef CUBERT_TRACE_H
#define CUBERT_TRACE_H

#include "client_internal.h"

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
