/* cubert — CUBERT_TRACE: launches recorded as Chrome trace events (core-internal; trace.c). */
#ifndef CUBERT_TRACE_H
#define CUBERT_TRACE_H

#include "client_internal.h"

/* Records one launch: host start time and duration in ns, on stream slot `slot`. Lock held. */
void cubert_trace_record(cubert_device *device, const char *name, uint64_t start_ns,
                         uint64_t duration_ns, uint32_t slot);
/* Writes the trace to CUBERT_TRACE (when set and non-empty) and frees it; at device destroy. */
void cubert_trace_flush(cubert_device *device);

#endif
