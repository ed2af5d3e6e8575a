/* cubert CPU server — integer division faults of kernel code (checked and unchecked modes, and
   validate mode where the sanitizer is off; the sanitize copy reports a zero divisor before it
   divides: sanitize.c).

   x86-64's idiv faults on a zero divisor and on the most negative value divided by -1; Linux
   sends SIGFPE to the thread, whose default action ends the process. A GPU gives an unspecified
   value, and no input the API accepts may end the process, so a fault of kernel code becomes the
   launch's error instead:
   - A signal handler, not a test per division: the main copy stays the code the compiler made
     (a test before each division of every kernel in checked and unchecked modes would cost in
     every one), and the handler costs nothing until a fault. A participant runs each chunk
     inside cubert_cpu_trap_run: one sigsetjmp without the signal mask (no system call) and two
     thread-local stores per chunk.
   - Signals are the process's: the handler is installed once, when the first CPU device is
     made, and acts only on a thread inside cubert_cpu_trap_run (a thread-local). Any other
     SIGFPE goes to the action installed before it, and where that was the default (or to ignore
     it) that action is put back and the fault happens again, which ends the process as it would
     have without cubert. A handler installed later replaces this one: a kernel's fault then
     reaches that one.
   - The handler only redirects the thread: it points the interrupted context at land(), as if
     the faulting instruction had called it, and returns. The rest runs outside the handler, so
     that switching fibers and siglongjmp are ordinary calls (ASan and TSan follow those; a jump
     out of a handler across fiber stacks they would not, nor would glibc's shadow-stack or
     _FORTIFY_SOURCE checks of a longjmp from one stack to another).
   - land() runs on the stack the fault happened on. On a fiber (a CUBE_KERNEL's unit between
     barriers) it switches back to the thread that runs the cube (fiber.c), leaving the cube's
     fibers, which are prepared afresh at the next cube; on that thread's stack a siglongjmp to
     cubert_cpu_trap_run's frame, further up the same stack, ends the run. Phased kernels and
     unit kernels run on the thread's stack, and jump at once.
   - The handler runs with SA_NODEFER: the siglongjmp does not restore the signal mask, so SIGFPE
     must not be blocked by the handler's delivery.
   - The rest of the chunk (its later cubes or units) does not run; other chunks run, and each
     that faults stops alike. Kernel code holds no lock, and runners reset their fibers at every
     cube, so the client, its streams and buffers stay usable.
   Only x86-64 Linux installs it: AArch64, RISC-V and POWER give a value without a fault, as a
   GPU does. */
#include "cpu/trap.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "cpu/fiber.h"
#include "cpu/san_symbols.h"
#include "cpu/scheduler.h"
#include "cpu/server.h"

static __thread cubert_cpu_trap *tls_trap __attribute__((tls_model("initial-exec")));

#if defined(__x86_64__) && defined(__linux__)

static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

/* Where a faulting thread continues, outside the signal handler (the file's comment). */
static __attribute__((noreturn, noinline)) void land(void) {
  cubert_cpu_fiber_leave_cube(__builtin_frame_address(0)); /* returns when not on a fiber */
  cubert_cpu_trap_leave(UINT64_MAX);
}

/* A SIGFPE that is not a fault of kernel code: the action before cubert's. */
static void chain(int sig, siginfo_t *info, void *context) {
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  } else {
    /* A fault runs its instruction again on return and gets that action; a signal sent by
       kill() or raise() is sent again. */
    sigaction(sig, &previous, NULL);
    if (info->si_code <= 0) raise(sig);
  }
}

static void on_fpe(int sig, siginfo_t *info, void *context) {
  cubert_cpu_trap *t = tls_trap;
  if (!t || (info->si_code != FPE_INTDIV && info->si_code != FPE_INTOVF)) {
    chain(sig, info, context);
    return;
  }
  greg_t *g = ((ucontext_t *)context)->uc_mcontext.gregs;
  t->fault = 1;
  t->pc = (const void *)(uintptr_t)g[REG_RIP];
  /* A call of land() from the faulting instruction: its address as the return address (so a
     debugger's backtrace shows the kernel), the stack aligned as at a call. The faulting frame
     is never returned to, so its red zone below the stack pointer may be overwritten. */
  uintptr_t sp = ((uintptr_t)g[REG_RSP] & ~(uintptr_t)15) - sizeof(uintptr_t);
  *(uintptr_t *)sp = (uintptr_t)g[REG_RIP];
  g[REG_RSP] = (greg_t)sp;
  g[REG_RIP] = (greg_t)(uintptr_t)land;
}

static void install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fpe;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  sigaction(SIGFPE, &action, &previous);
}

void cubert_cpu_trap_install(void) {
  pthread_once(&installed, install);
}

#else

void cubert_cpu_trap_install(void) {}

#endif

__attribute__((noinline)) int cubert_cpu_trap_run(cubert_cpu_trap *t, void (*body)(void *),
                                                  void *arg) {
  t->outer = tls_trap;
  t->fault = 0;
  t->pc = NULL;
  t->unit = t->cube_first = UINT64_MAX;
  if (sigsetjmp(t->jump, 0) == 0) {
    tls_trap = t;
    body(arg);
  }
  tls_trap = t->outer;
  return t->fault;
}

void cubert_cpu_trap_leave(uint64_t unit) {
  cubert_cpu_trap *t = tls_trap;
  t->unit = unit;
  siglongjmp(t->jump, 1);
}

void cubert_cpu_trap_fail(const cubert_cpu_trap *t, cubert_cpu_job *job, const cubert_cpu_ctx *ctx,
                          uint64_t begin, uint64_t end) {
  const cubert_kernel_signature *sig = job->kernel->signature;
  char at[256], who[128], what[640];
  /* pc + 1: the lookup takes a return address and names the instruction before it. */
  cubert_cpu_san_symbols_where((const char *)t->pc + 1, sig ? sig->file : NULL, at, sizeof at);
  uint32_t u[3], c[3];
  /* A unit kernel in a seeded order runs one unit per call (the context's range). */
  const uint64_t unit =
      t->unit == UINT64_MAX && t->cube_first == UINT64_MAX && ctx->unit_end == ctx->unit_begin + 1
          ? ctx->unit_begin
          : t->unit;
  const uint64_t id = unit != UINT64_MAX ? unit : t->cube_first;
  if (id != UINT64_MAX) {
    cubert_cpu_unit_pos(ctx, id, u);
    cubert_cpu_cube_pos(ctx, id, c);
    if (unit != UINT64_MAX)
      snprintf(who, sizeof who,
               "in unit (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ") of cube (%" PRIu32 ", %" PRIu32
               ", %" PRIu32 ")",
               u[0], u[1], u[2], c[0], c[1], c[2]);
    else
      snprintf(who, sizeof who, "in a unit of cube (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")", c[0],
               c[1], c[2]);
  } else {
    snprintf(who, sizeof who, "in one of the units %" PRIu64 " to %" PRIu64 " of the launch", begin,
             end - 1);
  }
  snprintf(what, sizeof what,
           "integer division by zero (or of the most negative value by -1) at %s, %s; the "
           "launch's later units there did not run. A GPU gives an unspecified value: test the "
           "divisor before dividing (validate mode names the division and its unit)",
           at, who);
  cubert_cpu_job_fail(job, what);
}
