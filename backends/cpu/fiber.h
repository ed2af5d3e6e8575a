/* cubert CPU server — cube runners: the cooperative contexts (fibers) that run one cube's units on
   one thread and switch at each cubert_cpu_sync_cube (internal; see README.md "Barriers").

   A runner belongs to one participant (a worker, or a host thread helping in sync) and is used by
   one thread at a time. It holds up to `capacity` fiber stacks, created on demand and reused by
   every cube, and the participant's shared-memory buffer. Everything sized by a launch is
   allocated when a launch that needs it runs, so a refused allocation fails that launch (as an
   asynchronous OUT_OF_MEMORY on its stream), not the server. */
#ifndef CUBERT_CPU_FIBER_H
#define CUBERT_CPU_FIBER_H

#include <stdatomic.h>
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

/* Test-only fault injection (cubert_cpu_debug_fail_allocations): true when the execution-time
   allocation about to be made must fail, consuming one of the `counter` armed failures. Only the
   allocating paths call it, so it costs nothing on a launch that allocates nothing, and one
   relaxed load when the counter is 0. */
static inline int cubert_cpu_inject_failure(_Atomic uint32_t *counter) {
  if (!counter) return 0;
  uint32_t n = atomic_load_explicit(counter, memory_order_relaxed);
  while (n)
    if (atomic_compare_exchange_weak_explicit(counter, &n, n - 1, memory_order_relaxed,
                                              memory_order_relaxed))
      return 1;
  return 0;
}

/* A runner for cubes of up to `capacity` units. Only the runner itself is allocated here: the
   fiber table, the stacks and the shared buffer are grown by cubert_cpu_runner_prepare as
   launches need them. `fail_injections` (the device's test-only counter, or NULL) is consulted
   before every allocation the runner makes. `kernel_name` names the launch that needs the runner
   in the error. OUT_OF_MEMORY with the size when the host refuses. */
cubert_status cubert_cpu_runner_create(uint32_t capacity, _Atomic uint32_t *fail_injections,
                                       const char *kernel_name, cubert_cpu_runner **out);
/* Unmaps every stack and frees the fiber table and the shared buffer. Accepts NULL. */
void cubert_cpu_runner_destroy(cubert_cpu_runner *runner);
/* Makes the runner ready for cubes of `units` fibers (0: the cube runs without fibers) with
   `shared_bytes` of shared memory: grows the fiber table, maps stacks and grows the shared
   buffer when the runner has less, and sets *out_shared to the shared buffer (64-byte aligned,
   uninitialised like a GPU's; NULL when shared_bytes is 0). Nothing is allocated when the runner
   already has enough. OUT_OF_MEMORY naming `kernel_name`, with the size of the refused
   allocation, when the host refuses; what was allocated before stays with the runner. */
cubert_status cubert_cpu_runner_prepare(cubert_cpu_runner *runner, uint32_t units,
                                        uint64_t shared_bytes, const char *kernel_name,
                                        void **out_shared);
/* Runs one cube of `units` units (2 <= units, prepared by cubert_cpu_runner_prepare): unit i
   gets a copy of `tmpl` with unit_begin = first_unit + i, unit_end = unit_begin + 1, and runs on
   its own fiber; the fibers take turns at each barrier in unit order, or, when `order` is not
   NULL (CUBERT_VALIDATE_SEED), in the order order[0], order[1], ... of unit positions.
   Allocates nothing. Returns NULL, or an error after the fact when a stack without guard page
   overflowed. */
cubert_status cubert_cpu_runner_run_cube(cubert_cpu_runner *runner, cubert_cpu_kernel_fn fn,
                                         const cubert_cpu_ctx *tmpl, struct cubert_cpu_job *job,
                                         uint64_t first_unit, uint32_t units,
                                         const uint16_t *order);

/* After a division fault of kernel code on this thread (trap.c), with `sp` an address on the
   faulting stack: when a cube's fibers run on this thread, leaves the cube (its units are not
   resumed; every fiber is prepared afresh at the next cube) and resumes the thread inside
   cubert_cpu_runner_run_cube, which ends the trap's run there naming the faulting unit
   (cubert_cpu_trap_leave). Returns at once when no fiber runs here. */
void cubert_cpu_fiber_leave_cube(const void *sp);

#endif /* CUBERT_CPU_FIBER_H */
