/* cubert CPU server — the scheduler (scheduler.c): records of queued commands, their
   submission and publication, the chunks participants claim, completion and the waits of host
   threads. See README.md for the design. */
#ifndef CUBERT_CPU_SCHEDULER_H
#define CUBERT_CPU_SCHEDULER_H

#include <stdint.h>

#include "cpu/server.h"

/* A record for the next command on `stream`, arrays sized for the counts. NULL when the host
   is out of memory. Submit side only. */
cubert_cpu_job *cubert_cpu_job_obtain(cubert_server_stream *stream, uint32_t binding_count,
                                      uint32_t info_count);
/* Returns the stream's spare records to the device (stream destroy). */
void cubert_cpu_stream_drop_spares(cubert_server_stream *stream);
/* Queues `job` (kind and description filled) after the stream's earlier commands and starts it
   when the stream is idle. Submit side only. */
void cubert_cpu_stream_submit(cubert_server_stream *stream, cubert_cpu_job *job);
/* Waits until `stream` completed `target` commands; the calling host thread runs chunks
   meanwhile when the device lets callers help. */
void cubert_cpu_wait(cubert_cpu_device *device, cubert_server_stream *stream, uint64_t target);
/* Runs chunks of one published launch (part->prefer's first). Returns 1 when it ran any. */
int cubert_cpu_try_work(cubert_cpu_device *device, cubert_cpu_participant *part);
/* True when some published launch has a chunk left to claim. */
int cubert_cpu_work_available(cubert_cpu_device *device);
/* Reports a failure of `job` on its stream, once per launch. */
void cubert_cpu_job_fail(cubert_cpu_job *job, const char *reason);
/* Reports `error` (ownership moves in) as the failure of `job` unless one was reported already,
   and skips the cubes of the launch not started yet. */
void cubert_cpu_job_abandon(cubert_cpu_job *job, cubert_status error);
/* Completes one command of a stream that runs nothing itself (a gate's counter, gate.c):
   bumps its counter, wakes host waiters and starts the streams that waited for it. Any
   thread, no lock held. */
void cubert_cpu_stream_signal(cubert_server_stream *stream);
/* Stream references (events and waits keep the counters alive). */
void cubert_cpu_stream_ref(cubert_server_stream *stream);
void cubert_cpu_stream_unref(cubert_server_stream *stream);
/* Frees every record (device destroy, after the workers stopped). */
void cubert_cpu_jobs_free_all(cubert_cpu_device *device);
/* Returns a borrowed helper runner (host threads), if any. */
void cubert_cpu_participant_finish(cubert_cpu_participant *part);

#endif /* CUBERT_CPU_SCHEDULER_H */
