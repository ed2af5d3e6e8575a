/* cubert CPU server — cube runners: the cooperative contexts (fibers) that run one cube's units on
   one thread and switch at each cubert_cpu_sync_cube (internal; see README.md "Barriers").

   A runner belongs to one participant (a worker, or a host thread helping in sync) and is used by
   one thread at a time. It holds up to `capacity` fiber stacks, created on demand and reused by
   every cube, and the participant's shared-memory buffer. */
#ifndef CUBERT_CPU_FIBER_H
#define CUBERT_CPU_FIBER_H

#include <stdint.h>

#include "cubert/kernel.h"
#include "cubert/status.h"

struct cubert_cpu_job;
typedef struct cubert_cpu_fiber cubert_cpu_fiber;
typedef struct cubert_cpu_runner cubert_cpu_runner;

/* What cubert_cpu_ctx.priv_ points to during a kernel call. */
typedef struct cubert_cpu_call {
  struct cubert_cpu_job *job; /* the launch (cubert_cpu_fail reports on it) */
  cubert_cpu_fiber *fiber;    /* the unit's fiber; NULL outside a multi-unit SYNC_CUBE cube */
} cubert_cpu_call;

/* Usable bytes of one fiber stack (a guard page sits below each). */
#define CUBERT_CPU_FIBER_STACK_BYTES (64u * 1024u)

/* A runner for cubes of up to `capacity` units. Stacks are mapped later, as cubes need them.
   OUT_OF_MEMORY when the host refuses the fiber table. */
cubert_status cubert_cpu_runner_create(uint32_t capacity, cubert_cpu_runner **out);
/* Unmaps every stack and frees the shared buffer. Accepts NULL. */
void cubert_cpu_runner_destroy(cubert_cpu_runner *runner);
/* The runner's shared-memory buffer, at least `bytes` long and 64-byte aligned, uninitialised
   (like a GPU's). NULL when bytes is 0 or the host refuses. */
void *cubert_cpu_runner_shared(cubert_cpu_runner *runner, uint64_t bytes);
/* Runs one cube of `units` units (2 <= units <= capacity): unit i gets a copy of `tmpl` with
   unit_begin = first_unit + i, unit_end = unit_begin + 1, and runs on its own fiber; the fibers
   take turns at each barrier in unit order. Returns NULL, or an error (nothing ran) when the
   stacks cannot be mapped, or after the fact when a stack without guard page overflowed. */
cubert_status cubert_cpu_runner_run_cube(cubert_cpu_runner *runner, cubert_cpu_kernel_fn fn,
                                         const cubert_cpu_ctx *tmpl, struct cubert_cpu_job *job,
                                         uint64_t first_unit, uint32_t units);

#endif /* CUBERT_CPU_FIBER_H */
