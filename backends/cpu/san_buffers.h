/* cubert CPU server — the kernel sanitizer's race check on buffers (san_buffers.c): a shadow per
   element of each buffer a sanitized launch may write, shared by every participant that runs the
   launch's cubes, the server's sanitizer table, and the writes of launches the sanitizer did not
   watch. */
#ifndef CUBERT_CPU_SAN_BUFFERS_H
#define CUBERT_CPU_SAN_BUFFERS_H

#include <stdint.h>

#include "cpu/sanitize.h"
#include "cubert/server/sanitizer.h"

/* The server's sanitizer table (cubert/server.h): buffers from cubert_client_empty. */
extern const cubert_server_sanitizer cubert_cpu_sanitizer_table;
/* A finished launch the sanitizer did not watch: every binding it could write counts as
   written (scheduler.c, when some buffer byte is unwritten). */
void cubert_cpu_san_launch_wrote(const struct cubert_cpu_job *job);

/* ---- for sanitize.c ---- */

/* The buffer regions of sanitized launch `job`, built by the first participant that calls this
   (the others wait for it); NULL without memory. Thread-safe. */
cubert_cpu_san_launch *cubert_cpu_san_launch_join(struct cubert_cpu_job *job);
/* When `job` finished (scheduler.c, once every chunk ran): stores what it left unwritten, frees
   the shadow. Does nothing for a launch no participant joined. */
void cubert_cpu_san_launch_finish(struct cubert_cpu_job *job);
/* The access [a, a + size) of the running unit inside region `r`. */
void cubert_cpu_san_buffer_access(cubert_cpu_san *s, cubert_cpu_san_region *r, uintptr_t a,
                                  uint64_t size, int write, int atomic, const void *pc);

#endif /* CUBERT_CPU_SAN_BUFFERS_H */
