/* cubert CPU server — the kernel sanitizer's check of private memory read before it is written
   (san_private.c; docs/debugging.md): a validate-mode launch that found nothing runs again, whole,
   on copies of its writable buffers with the kernel's zeroed-private copy, and an output element
   that differs is reported. */
#ifndef CUBERT_CPU_SAN_PRIVATE_H
#define CUBERT_CPU_SAN_PRIVATE_H

#include <stdint.h>

#include "cpu/sanitize.h"

struct cubert_cpu_job;

/* When the launch is built (san_buffers.c): keeps what its writable regions hold before any cube
   runs, when the kernel has a zeroed-private copy. Without memory for it the check is skipped
   (never a false report). */
void cubert_cpu_san_private_keep(cubert_cpu_san_launch *l, const struct cubert_cpu_job *job);
/* Frees what cubert_cpu_san_private_keep kept. */
void cubert_cpu_san_private_free(cubert_cpu_san_launch *l);

/* A second run of a finished launch: the function, the buffers and the regions it runs with. */
typedef struct cubert_cpu_san_twin {
  cubert_cpu_kernel_fn fn;        /* the copy that runs: zeroed, then filled private memory */
  void **buffers;                 /* per binding: its copy (writable), or the buffer itself */
  cubert_cpu_san_region *regions; /* the launch's regions over the copies (no shadow) */
  uint32_t region_count;
  uint8_t **zeroed; /* per writable region: the zeroed run's result */
  int pass; /* 0: the zeroed copy runs; 1: the filled one; 2: the filled one after the zeroed one
               divided by zero */
} cubert_cpu_san_twin;

/* After the last chunk of sanitized launch `job` (the caller runs `t` over the launch's chunks on
   every participant, or over the whole launch on one thread): when the launch has no finding and
   its inputs were kept, prepares the zeroed copy's run over copies of the inputs and returns 1;
   else 0 (no check). */
int cubert_cpu_san_private_begin(cubert_cpu_san_twin *t, struct cubert_cpu_job *job);
/* After a run of `t` (the caller ran t->fn over every cube with t->buffers, the sanitizer quiet:
   cubert_cpu_san_quiet): returns 1 when another run is needed, with `t` prepared for it. The
   zeroed run's output is compared with the launch's: equal, no finding; else the filled copy
   runs too (the caller runs the zeroed one first again, in one order on one thread, when the zeroed
   run ran on several: scheduler.c), so that only private memory can make the two differ (the
   launch itself ran on several threads, an order atomics may show), and the first element where
   they differ is reported through `ctx` (kernel, buffer by parameter name, element, both
   values). */
int cubert_cpu_san_private_next(cubert_cpu_san_twin *t, struct cubert_cpu_job *job,
                                const cubert_cpu_ctx *ctx);
/* Frees `t`. */
void cubert_cpu_san_private_end(cubert_cpu_san_twin *t);

#endif /* CUBERT_CPU_SAN_PRIVATE_H */
