/* cubert CPU server — integer division faults of kernel code (trap.c): a kernel that divides an
   integer by zero (or the most negative value by -1) makes its launch fail instead of ending the
   process. */
#ifndef CUBERT_CPU_TRAP_H
#define CUBERT_CPU_TRAP_H

#include <setjmp.h>
#include <stdint.h>

#include "cubert/kernel.h"

struct cubert_cpu_job;

/* A run of kernel code on one thread that a division fault ends (cubert_cpu_trap_run). */
typedef struct cubert_cpu_trap {
  sigjmp_buf jump;
  struct cubert_cpu_trap *outer; /* the thread's trap before this one (NULL: none) */
  int fault;                     /* 1 after a fault ended the run */
  const void *pc;                /* the faulting instruction */
  uint64_t unit;                 /* the faulting unit (a fiber's), UINT64_MAX when unknown */
  uint64_t cube_first;           /* the running cube's first unit, UINT64_MAX outside cubes */
} cubert_cpu_trap;

/* Installs the process's SIGFPE handler, once (every call after the first does nothing); the
   CPU server calls it when it creates a device. Thread-safe. */
void cubert_cpu_trap_install(void);

/* Runs body(arg) on this thread; a division fault of the code it runs ends it there. Returns 0
   when body returned, 1 after a fault (t->pc, t->unit and t->cube_first say where). The caller
   keeps t->cube_first up to date while cubes run. */
int cubert_cpu_trap_run(cubert_cpu_trap *t, void (*body)(void *), void *arg);

/* Ends this thread's innermost cubert_cpu_trap_run after a fault, naming `unit` (UINT64_MAX:
   unknown); called on the stack that run began on (fiber.c, once it left the faulting cube's
   fibers). */
_Noreturn void cubert_cpu_trap_leave(uint64_t unit);

/* Makes the fault that ended `t` the error of `job`: "integer division by zero (or of the most
   negative value by -1) at <file:line or module+offset>, in unit ... of cube ...". `ctx`: the
   launch's context (positions); [begin, end): the units the run covered, named when neither
   the unit nor the cube is known. */
void cubert_cpu_trap_fail(const cubert_cpu_trap *t, struct cubert_cpu_job *job,
                          const cubert_cpu_ctx *ctx, uint64_t begin, uint64_t end);

#endif /* CUBERT_CPU_TRAP_H */
