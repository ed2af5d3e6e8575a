/* cubert CPU server — the kernel sanitizer's race check on buffers (san_buffers.c): a shadow per
   element of each buffer a sanitized launch may write, the server's sanitizer table, and the
   writes of launches the sanitizer did not watch. A sanitized launch runs on one thread, so
   none of these takes a lock. */
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

/* The buffer regions of `s->job`'s launch; 0 without memory. */
int cubert_cpu_san_buffers_begin(cubert_cpu_san *s);
void cubert_cpu_san_buffers_end(cubert_cpu_san *s);
/* Forgets every access (the epochs start again). */
void cubert_cpu_san_buffers_clear(cubert_cpu_san *s);
/* The access [a, a + size) of the running unit inside region `r`. */
void cubert_cpu_san_buffer_access(cubert_cpu_san *s, cubert_cpu_san_region *r, uintptr_t a,
                                  uint64_t size, int write, int atomic, const void *pc);

#endif /* CUBERT_CPU_SAN_BUFFERS_H */
