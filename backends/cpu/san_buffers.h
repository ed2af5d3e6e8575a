/* cubert CPU server — the kernel sanitizer's race check on buffers (san_buffers.c): a shadow per
   element of each buffer a sanitized launch may write, shared by every participant that runs the
   launch's cubes, the server's sanitizer table, and the writes of launches the sanitizer did not
   watch. */
#ifndef CUBERT_CPU_SAN_BUFFERS_H
#define CUBERT_CPU_SAN_BUFFERS_H

#include <stddef.h>
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
/* The access [a, a + size) of the running unit inside region `r`. `value` (NULL: none): a store
   declared with STORE_SAME, whose bytes this stores (under the cell's lock). */
void cubert_cpu_san_buffer_access(cubert_cpu_san *s, cubert_cpu_san_region *r, uintptr_t a,
                                  uint64_t size, int write, int atomic, const void *value,
                                  const void *pc);
/* The binding that holds address `a` of region `r` (the region's own first, since bindings over
   one memory merge into one region), for naming the buffer and element. */
uint32_t cubert_cpu_san_binding_at(const cubert_cpu_san *s, const cubert_cpu_san_region *r,
                                   uintptr_t a);
/* "buffer 1 'x' element 5 (of 16)" for address `a` of region `r`. */
void cubert_cpu_san_element_name(const cubert_cpu_san *s, const cubert_cpu_san_region *r,
                                 uintptr_t a, char *out, size_t size);
/* Reports "<kind> on buffer b 'name' element i (of n): <other> <other_did> it at <line> in the
   same launch; this <write|read> is <place>": a race of the running unit's access at `a` of
   region `r` with recorded access `other`. */
void cubert_cpu_san_buffer_race(cubert_cpu_san *s, const cubert_cpu_san_region *r, uintptr_t a,
                                const char *kind, cubert_cpu_san_access other,
                                const char *other_did, int write, const void *pc);

#endif /* CUBERT_CPU_SAN_BUFFERS_H */
