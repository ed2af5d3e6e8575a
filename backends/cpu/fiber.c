/* cubert CPU server — fibers: a cube's units as cooperative contexts on one thread.

   Why fibers: a cube barrier must hold every unit of the cube at the same point. Running each
   unit on its own thread (the reference CPU runtime) needs as many threads as units and spins;
   running them as fibers on one thread needs one context switch per unit per barrier, cannot
   deadlock (the fibers of a cube only ever wait for each other, and always make progress in
   turn) and lets other cubes run on other threads meanwhile.

   Scheduling inside a cube is a ring in unit order: a unit reaching cubert_cpu_sync_cube switches
   to the next live unit; the last one switches back to the first, which then continues past the
   barrier because every unit has arrived. A unit that returns leaves the ring (so kernels whose
   finished units skip later barriers still complete, like exited threads on a GPU), and the last
   one to return switches back to the thread that started the cube.

   The switch is a few instructions of x86-64 assembly (callee-saved registers + stack pointer;
   no system call, no signal mask) written as a top-level asm block so the build's *.c glob picks
   it up. Other architectures, and x86-64 processes with an active CET shadow stack (a bare stack
   swap would trip it), use ucontext instead, which is correct but slower (swapcontext changes
   the signal mask with a system call). The switch does not save MXCSR or the x87 control word:
   the fibers of a cube run the same kernel, which is not expected to change them.

   A division fault of kernel code (trap.c) leaves the cube from its fiber:
   cubert_cpu_fiber_leave_cube switches back to the thread that runs the cube, the other units
   stay where they waited, and no fiber of the cube is resumed (each is prepared afresh at the
   next cube, as after any cube).

   Stacks are 64 KiB with a PROT_NONE guard page below each, mapped on demand in batches and
   reused by every cube of the runner. When the guard page cannot be set (mprotect splits the
   mapping, and the process may be at vm.max_map_count), a canary at the bottom of the stack is
   checked after each cube instead. Each fiber's first frame is offset by (unit % 64) cache
   lines: stacks are a page multiple apart, so without the offset the hot top of every stack
   would fall in the same L1 set. */
#include "cpu/fiber.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/status.h"
#include "cpu/scheduler.h"
#include "cpu/server.h"
#include "cpu/trap.h"

/* ---- sanitizer annotations (only in sanitizer builds) ---------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#define CUBERT_CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUBERT_CPU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CUBERT_CPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUBERT_CPU_TSAN 1
#endif
#endif

#ifdef CUBERT_CPU_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif
#ifdef CUBERT_CPU_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* ---- the assembly switch ------------------------------------------------------------------- */

/* Building with -DCUBERT_CPU_FORCE_UCONTEXT tests the portable path on x86-64. */
#if defined(__x86_64__) && defined(__ELF__) && !defined(CUBERT_CPU_FORCE_UCONTEXT)
#define CUBERT_CPU_FIBER_ASM 1
/* cubert_cpu_fiber_swap(save, load): pushes the callee-saved registers, stores the stack pointer
   in *save, loads `load` as the stack pointer, pops the registers saved there and returns into
   that context. cubert_cpu_fiber_boot is where a new fiber's first swap returns to: its initial
   frame carries the fiber in r12 and the C entry in r13. */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl cubert_cpu_fiber_swap\n"
    ".hidden cubert_cpu_fiber_swap\n"
    ".type cubert_cpu_fiber_swap,@function\n"
    "cubert_cpu_fiber_swap:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size cubert_cpu_fiber_swap,.-cubert_cpu_fiber_swap\n"
    ".p2align 4\n"
    ".globl cubert_cpu_fiber_boot\n"
    ".hidden cubert_cpu_fiber_boot\n"
    ".type cubert_cpu_fiber_boot,@function\n"
    "cubert_cpu_fiber_boot:\n"
    "  movq %r12, %rdi\n"
    "  callq *%r13\n"
    "  ud2\n"
    ".size cubert_cpu_fiber_boot,.-cubert_cpu_fiber_boot\n");
void cubert_cpu_fiber_swap(void **save, void *load);
void cubert_cpu_fiber_boot(void);

/* True when the process runs with a CET shadow stack: rdssp reads the shadow stack pointer, and
   is a no-op leaving 0 where shadow stacks are off or unsupported. */
static int shadow_stack_active(void) {
  unsigned long long ssp = 0;
  __asm__ volatile("rdsspq %0" : "+r"(ssp));
  return ssp != 0;
}
#else
#define CUBERT_CPU_FIBER_ASM 0
#endif

/* ---- objects ------------------------------------------------------------------------------- */

/* A saved execution context: a fiber's, or the thread that runs the cube. */
typedef struct fiber_context {
  void *sp;             /* assembly switch */
  ucontext_t *uc;       /* ucontext switch */
  const void *stack_lo; /* stack bounds, for ASan */
  size_t stack_bytes;
  void *tsan;
} fiber_context;

struct cubert_cpu_fiber {
  fiber_context context;
  cubert_cpu_fiber *next, *prev; /* ring of the cube's live units */
  cubert_cpu_runner *runner;
  char *stack_lo; /* lowest usable byte */
  int guarded;    /* a guard page sits below stack_lo; else a canary is at stack_lo */
  uint32_t color; /* bytes the first frame is moved down (cache set spreading) */
  cubert_cpu_call call;
  cubert_cpu_ctx ctx;
  uint32_t barriers; /* barriers this unit passed in the current cube */
#ifdef CUBERT_CPU_TSAN
  uint32_t tsan_cubes; /* cubes run on context.tsan (see fiber_prepare) */
#endif
};

typedef struct stack_batch {
  struct stack_batch *next;
  void *base;
  size_t bytes;
} stack_batch;

struct cubert_cpu_runner {
  fiber_context main; /* the thread running the cube */
  int use_ucontext;
  uint32_t capacity;       /* most units per cube */
  uint32_t fiber_capacity; /* entries of `fibers` (grown to the largest cube seen) */
  uint32_t ready;          /* fibers with a stack */
  uint32_t live;           /* units of the current cube not yet returned */
  /* Validate mode: units waiting at the current barrier, its source line, and the global id of
     the unit that reached it first (barrier reports name both units). */
  uint32_t arrived, barrier_line;
  uint64_t barrier_unit;
  cubert_cpu_kernel_fn fn;
  cubert_cpu_fiber *fibers;
  stack_batch *batches;
  size_t page;
  void *shared;
  uint64_t shared_bytes;
  _Atomic uint32_t *fail_injections; /* test-only fault injection, or NULL */
  uint32_t units;                    /* of the running cube */
  uint64_t left_unit;                /* the unit whose fault left the cube (trap.c) */
  int left;                          /* a fault left the running cube */
};

/* The runner whose cube's fibers run on this thread (NULL: none), for a division fault. */
static __thread cubert_cpu_runner *tls_cube_runner __attribute__((tls_model("initial-exec")));

#define CUBERT_CPU_CANARY 0x5ca1ab1e0ddba11ull

/* ---- switching ------------------------------------------------------------------------------ */

/* Saves the current context into `from` and resumes `to`. `dying`: `from` never resumes (a
   finished unit), which ASan needs to know to drop its fake stack. */
static void fiber_switch(cubert_cpu_runner *r, fiber_context *from, fiber_context *to, int dying) {
#ifdef CUBERT_CPU_ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(dying ? NULL : &fake, to->stack_lo, to->stack_bytes);
#else
  (void)dying;
#endif
#ifdef CUBERT_CPU_TSAN
  __tsan_switch_to_fiber(to->tsan, 0);
#endif
#if CUBERT_CPU_FIBER_ASM
  if (!r->use_ucontext) {
    cubert_cpu_fiber_swap(&from->sp, to->sp);
  } else
#endif
  {
    (void)r;
    swapcontext(from->uc, to->uc);
  }
#ifdef CUBERT_CPU_ASAN
  __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

/* First code a fiber runs; never returns (its stack has no caller). */
static void fiber_main(cubert_cpu_fiber *f) {
  cubert_cpu_runner *r = f->runner;
#ifdef CUBERT_CPU_ASAN
  const void *old_lo = NULL;
  size_t old_bytes = 0;
  __sanitizer_finish_switch_fiber(NULL, &old_lo, &old_bytes);
  /* Only the first unit is entered from the thread that runs the cube: learn its stack. */
  if (f == &r->fibers[0]) {
    r->main.stack_lo = old_lo;
    r->main.stack_bytes = old_bytes;
  }
#endif
  r->fn(&f->ctx);
  /* Returned while units wait at a barrier: the round completes without it. */
  if (r->arrived && r->arrived + 1 >= r->live) r->arrived = 0;
  cubert_cpu_fiber *next = f->next;
  next->prev = f->prev;
  f->prev->next = next;
  fiber_switch(r, &f->context, --r->live == 0 ? &r->main : &next->context, 1);
  abort(); /* unreachable: a finished fiber is never resumed */
}

static void fiber_main_uc(unsigned hi, unsigned lo) {
  fiber_main((cubert_cpu_fiber *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo));
}

/* Sets up f's stack so the next switch to it enters fiber_main. */
static void fiber_prepare(cubert_cpu_runner *r, cubert_cpu_fiber *f) {
  char *top = f->stack_lo + CUBERT_CPU_FIBER_STACK_BYTES - f->color;
#ifdef CUBERT_CPU_ASAN
  /* The previous unit on this stack never returned from its frames, so their redzones are
     still poisoned. */
  __asan_unpoison_memory_region(f->stack_lo, CUBERT_CPU_FIBER_STACK_BYTES);
#endif
#ifdef CUBERT_CPU_TSAN
  /* Likewise TSan's shadow call stack of the fiber still holds the two frames the previous unit
     never left (fiber_main and its last switch): reused cube after cube it would grow until
     TSan's stack depot refuses it (a CHECK failure after some 30,000 cubes per fiber). A fresh
     TSan fiber starts empty; renewing it every 1024 cubes bounds the stack and the cost. */
  if (++f->tsan_cubes >= 1024) {
    __tsan_destroy_fiber(f->context.tsan);
    f->context.tsan = __tsan_create_fiber(0);
    f->tsan_cubes = 0;
  }
#endif
#if CUBERT_CPU_FIBER_ASM
  if (!r->use_ucontext) {
    /* After the six pops and the ret into cubert_cpu_fiber_boot, rsp must be 16-byte aligned so
       that its call gives fiber_main the ABI's entry alignment. */
    uintptr_t s = (((uintptr_t)top) & ~(uintptr_t)15) - 16;
    uintptr_t *frame = (uintptr_t *)(s - 7 * sizeof(uintptr_t));
    frame[0] = 0;                                /* r15 */
    frame[1] = 0;                                /* r14 */
    frame[2] = (uintptr_t)fiber_main;            /* r13: C entry */
    frame[3] = (uintptr_t)f;                     /* r12: its argument */
    frame[4] = 0;                                /* rbx */
    frame[5] = 0;                                /* rbp */
    frame[6] = (uintptr_t)cubert_cpu_fiber_boot; /* return address */
    *(uintptr_t *)s = 0;                         /* ends backtraces */
    f->context.sp = frame;
    return;
  }
#endif
  (void)top;
  ucontext_t *uc = f->context.uc;
  uc->uc_stack.ss_sp = f->stack_lo;
  uc->uc_stack.ss_size = CUBERT_CPU_FIBER_STACK_BYTES - f->color;
  uc->uc_link = NULL;
  uintptr_t p = (uintptr_t)f;
  makecontext(uc, (void (*)(void))fiber_main_uc, 2, (unsigned)(p >> 16 >> 16), (unsigned)p);
}

/* A ucontext initialised by getcontext (makecontext needs one). Kept out of line: getcontext
   returns twice, which would make the compiler doubt every local of a bigger caller. */
static __attribute__((noinline)) int context_init(ucontext_t *uc) {
  return getcontext(uc);
}

static ucontext_t *context_new(void) {
  ucontext_t *uc = malloc(sizeof *uc);
  if (uc && context_init(uc) != 0) {
    free(uc);
    return NULL;
  }
  return uc;
}

/* ---- runner --------------------------------------------------------------------------------- */

static cubert_status out_of_memory(const char *kernel_name, uint64_t bytes, const char *what) {
  return cubert_status_set_size(
      cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                         "CPU kernel \"%s\" not run: host allocation of %llu bytes for %s failed",
                         kernel_name ? kernel_name : "(unnamed)", (unsigned long long)bytes, what),
      bytes);
}

cubert_status cubert_cpu_runner_create(uint32_t capacity, _Atomic uint32_t *fail_injections,
                                       const char *kernel_name, cubert_cpu_runner **out) {
  *out = NULL;
  cubert_cpu_runner *r = cubert_cpu_inject_failure(fail_injections) ? NULL : calloc(1, sizeof *r);
  if (!r) return out_of_memory(kernel_name, sizeof *r, "a cube runner");
  r->capacity = capacity;
  r->fail_injections = fail_injections;
  long page = sysconf(_SC_PAGESIZE);
  r->page = page > 0 ? (size_t)page : 4096;
#if CUBERT_CPU_FIBER_ASM
  r->use_ucontext = shadow_stack_active();
#else
  r->use_ucontext = 1;
#endif
  if (r->use_ucontext) {
    r->main.uc = cubert_cpu_inject_failure(fail_injections) ? NULL : context_new();
    if (!r->main.uc) {
      cubert_cpu_runner_destroy(r);
      return out_of_memory(kernel_name, sizeof(ucontext_t), "a cube runner's context");
    }
  }
  *out = r;
  return NULL;
}

void cubert_cpu_runner_destroy(cubert_cpu_runner *r) {
  if (!r) return;
  for (uint32_t i = 0; i < r->ready; ++i) {
#ifdef CUBERT_CPU_TSAN
    if (r->fibers[i].context.tsan) __tsan_destroy_fiber(r->fibers[i].context.tsan);
#endif
    free(r->fibers[i].context.uc);
  }
  for (stack_batch *b = r->batches, *next; b; b = next) {
    next = b->next;
#ifdef CUBERT_CPU_ASAN
    /* Frames of units that never returned leave poisoned shadow; whoever maps this range next
       must not inherit it. */
    for (size_t off = r->page; off < b->bytes; off += r->page + CUBERT_CPU_FIBER_STACK_BYTES)
      __asan_unpoison_memory_region((char *)b->base + off, CUBERT_CPU_FIBER_STACK_BYTES);
#endif
    munmap(b->base, b->bytes);
    free(b);
  }
  free(r->main.uc);
  free(r->shared);
  free(r->fibers);
  free(r);
}

/* Grows the fiber table to at least `units` entries. Doubling keeps a runner that grows one cube
   size at a time from copying the table at every launch; the table only moves between cubes,
   when no fiber is running. */
static cubert_status ensure_fibers(cubert_cpu_runner *r, uint32_t units, const char *kernel_name) {
  if (units <= r->fiber_capacity) return NULL;
  uint32_t want = r->fiber_capacity * 2 > units ? r->fiber_capacity * 2 : units;
  if (want < 16) want = 16;
  if (want > r->capacity) want = r->capacity;
  size_t bytes = (size_t)want * sizeof(cubert_cpu_fiber);
  cubert_cpu_fiber *fibers =
      cubert_cpu_inject_failure(r->fail_injections) ? NULL : realloc(r->fibers, bytes);
  if (!fibers) return out_of_memory(kernel_name, bytes, "a cube runner's fiber table");
  memset(fibers + r->fiber_capacity, 0, (size_t)(want - r->fiber_capacity) * sizeof *fibers);
  /* Fibers point at their runner, not at each other, between cubes: moving them is safe. */
  r->fibers = fibers;
  r->fiber_capacity = want;
  return NULL;
}

/* Maps stacks until `units` fibers have one (units <= fiber_capacity). */
static cubert_status ensure_stacks(cubert_cpu_runner *r, uint32_t units, const char *kernel_name) {
  while (r->ready < units) {
    /* Batches of at least 16 stacks keep the number of mappings (and system calls) low when a
       runner grows one cube size at a time. */
    uint32_t want = units - r->ready < 16 ? 16 : units - r->ready;
    if (want > r->fiber_capacity - r->ready) want = r->fiber_capacity - r->ready;
    size_t stride = r->page + CUBERT_CPU_FIBER_STACK_BYTES;
    size_t bytes = stride * want;
    int refuse = cubert_cpu_inject_failure(r->fail_injections);
    stack_batch *batch = refuse ? NULL : malloc(sizeof *batch);
    void *base = batch ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                       : MAP_FAILED;
    if (base == MAP_FAILED) {
      free(batch);
      char what[96];
      snprintf(what, sizeof what, "%u fiber stacks of %u bytes (cube of %u units)", want,
               CUBERT_CPU_FIBER_STACK_BYTES, units);
      return out_of_memory(kernel_name, bytes, what);
    }
    batch->base = base;
    batch->bytes = bytes;
    batch->next = r->batches;
    r->batches = batch;
    for (uint32_t i = 0; i < want; ++i) {
      cubert_cpu_fiber *f = &r->fibers[r->ready];
      char *guard = (char *)base + stride * i;
      f->stack_lo = guard + r->page;
      f->guarded = mprotect(guard, r->page, PROT_NONE) == 0;
      if (!f->guarded) memcpy(f->stack_lo, &(uint64_t){CUBERT_CPU_CANARY}, sizeof(uint64_t));
      f->runner = r;
      f->color = (r->ready % 64) * CUBERT_CPU_LINE;
      f->context.stack_lo = f->stack_lo;
      f->context.stack_bytes = CUBERT_CPU_FIBER_STACK_BYTES;
      /* The rest of this batch stays mapped (freed with the runner); the next call maps a
         fresh batch for the fibers still without a stack. */
      if (r->use_ucontext && !(f->context.uc = context_new()))
        return out_of_memory(kernel_name, sizeof(ucontext_t), "a fiber context");
#ifdef CUBERT_CPU_TSAN
      f->context.tsan = __tsan_create_fiber(0);
#endif
      r->ready++;
    }
  }
  return NULL;
}

cubert_status cubert_cpu_runner_prepare(cubert_cpu_runner *r, uint32_t units, uint64_t shared_bytes,
                                        const char *kernel_name, void **out_shared) {
  *out_shared = NULL;
  if (units > r->ready) {
    if (units > r->capacity)
      return cubert_status_set_limits(
          cubert_status_make(CUBERT_CODE_UNITS,
                             "CPU kernel \"%s\": a cube of %u units, the runner holds at most %u",
                             kernel_name ? kernel_name : "(unnamed)", units, r->capacity),
          units, r->capacity);
    CUBERT_RETURN_IF_ERROR(ensure_fibers(r, units, kernel_name));
    CUBERT_RETURN_IF_ERROR(ensure_stacks(r, units, kernel_name));
  }
  if (shared_bytes == 0) return NULL;
  if (shared_bytes > r->shared_bytes) {
    uint64_t rounded = (shared_bytes + CUBERT_CPU_LINE - 1) & ~(uint64_t)(CUBERT_CPU_LINE - 1);
    void *p = rounded >= shared_bytes && rounded <= SIZE_MAX &&
                      !cubert_cpu_inject_failure(r->fail_injections)
                  ? aligned_alloc(CUBERT_CPU_LINE, (size_t)rounded)
                  : NULL;
    if (!p) return out_of_memory(kernel_name, shared_bytes, "a cube's shared memory");
    /* The old contents need not survive: shared memory is uninitialised at each cube. */
    free(r->shared);
    r->shared = p;
    r->shared_bytes = rounded;
  }
  *out_shared = r->shared;
  return NULL;
}

/* "unit (x, y, z)" of global unit `id`, for barrier reports. */
static void unit_name(const cubert_cpu_ctx *ctx, uint64_t id, char *out, size_t size) {
  uint32_t p[3];
  cubert_cpu_unit_pos(ctx, id, p);
  snprintf(out, size, "unit (%u, %u, %u)", p[0], p[1], p[2]);
}

cubert_status cubert_cpu_runner_run_cube(cubert_cpu_runner *r, cubert_cpu_kernel_fn fn,
                                         const cubert_cpu_ctx *tmpl, struct cubert_cpu_job *job,
                                         uint64_t first_unit, uint32_t units,
                                         const uint16_t *order) {
  if (units > r->ready)
    return cubert_status_make(CUBERT_CODE_GENERIC,
                              "internal: a cube of %u units on a runner prepared for %u", units,
                              r->ready);
  r->fn = fn;
  cubert_cpu_fiber *fibers = r->fibers;
  for (uint32_t i = 0; i < units; ++i) {
    cubert_cpu_fiber *f = &fibers[i];
    f->ctx = *tmpl;
    f->ctx.unit_begin = first_unit + i;
    f->ctx.unit_end = first_unit + i + 1;
    f->call.job = job;
    f->call.fiber = f;
    f->ctx.priv_ = &f->call;
    f->barriers = 0;
    f->next = &fibers[i + 1 == units ? 0 : i + 1];
    f->prev = &fibers[i == 0 ? units - 1 : i - 1];
    fiber_prepare(r, f);
  }
  cubert_cpu_fiber *start = &fibers[0];
  if (order) {
    /* CUBERT_VALIDATE_SEED: the ring, and so every round between barriers, in the seeded
       order. */
    for (uint32_t k = 0; k < units; ++k) {
      fibers[order[k]].next = &fibers[order[k + 1 == units ? 0 : k + 1]];
      fibers[order[k]].prev = &fibers[order[k == 0 ? units - 1 : k - 1]];
    }
    start = &fibers[order[0]];
  }
  r->live = r->units = units;
  r->arrived = 0;
#ifdef CUBERT_CPU_TSAN
  r->main.tsan = __tsan_get_current_fiber();
#endif
  tls_cube_runner = r;
  fiber_switch(r, &r->main, &start->context, 0);
  tls_cube_runner = NULL;
  if (r->left) {
    r->left = 0;
    cubert_cpu_trap_leave(r->left_unit);
  }
  /* Validate mode: a unit that passed fewer barriers than another skipped one (it returned
     while others waited, which a GPU leaves undefined and PoCL does not survive). */
  if (tmpl->mode == CUBERT_EXECUTION_VALIDATE)
    for (uint32_t i = 1; i < units; ++i)
      if (fibers[i].barriers != fibers[0].barriers) {
        cubert_cpu_fiber *fewer = fibers[i].barriers < fibers[0].barriers ? &fibers[i] : &fibers[0];
        const cubert_cpu_fiber *more = fewer == &fibers[0] ? &fibers[i] : &fibers[0];
        char what[192], them[64];
        unit_name(&more->ctx, more->ctx.unit_begin, them, sizeof them);
        snprintf(what, sizeof what,
                 "passed %u cube barriers where %s of its cube passed %u, the last of them",
                 fewer->barriers, them, more->barriers);
        cubert_cpu_report_barrier(&fewer->ctx, r->barrier_line, what);
        break;
      }
  for (uint32_t i = 0; i < units; ++i) {
    uint64_t canary;
    if (fibers[i].guarded) continue;
    memcpy(&canary, fibers[i].stack_lo, sizeof canary);
    if (canary != CUBERT_CPU_CANARY)
      return cubert_status_make(CUBERT_CODE_GENERIC, "unit %u overflowed its %u-byte fiber stack",
                                i, CUBERT_CPU_FIBER_STACK_BYTES);
  }
  return NULL;
}

void cubert_cpu_fiber_leave_cube(const void *sp) {
  cubert_cpu_runner *r = tls_cube_runner;
  if (!r) return;
  for (uint32_t i = 0; i < r->units; ++i) {
    cubert_cpu_fiber *f = &r->fibers[i];
    if ((uintptr_t)sp - (uintptr_t)f->stack_lo >= CUBERT_CPU_FIBER_STACK_BYTES) continue;
    r->left = 1;
    r->left_unit = f->ctx.unit_begin;
    fiber_switch(r, &f->context, &r->main, 1); /* never resumed */
  }
}

/* ---- kernel services --------------------------------------------------------------------- */

void cubert_cpu_sync_cube(const cubert_cpu_ctx *ctx) {
  cubert_cpu_sync_cube_at(ctx, 0);
}

void cubert_cpu_sync_cube_at(const cubert_cpu_ctx *ctx, uint32_t line) {
  const cubert_cpu_call *call = ctx->priv_;
  if (!call) return;
  cubert_cpu_fiber *f = call->fiber;
  if (f) {
    /* Units arrive in ring order; the last live one to arrive completes the round. */
    cubert_cpu_runner *r = f->runner;
    if (r->arrived == 0) {
      r->barrier_line = line;
      r->barrier_unit = ctx->unit_begin;
    } else if (line != r->barrier_line && ctx->mode == CUBERT_EXECUTION_VALIDATE) {
      char what[256], them[64];
      const cubert_kernel_signature *sig = call->job ? call->job->kernel->signature : NULL;
      const char *file = sig && sig->file ? sig->file : "?", *slash = strrchr(file, '/');
      unit_name(ctx, r->barrier_unit, them, sizeof them);
      snprintf(what, sizeof what,
               "reached a different barrier than %s of its cube, which waits at the one at %s:%u; "
               "this unit's barrier is",
               them, slash ? slash + 1 : file, r->barrier_line);
      cubert_cpu_report_barrier(ctx, line, what);
    }
    if (++r->arrived >= r->live) r->arrived = 0;
    ++f->barriers;
    /* Alone in the ring (the other units returned): nothing to wait for. */
    if (f->next != f) fiber_switch(f->runner, &f->context, &f->next->context, 0);
    return;
  }
  /* A one-unit cube has nothing to wait for; a kernel without the flag runs over ranges of
     units, where a barrier is meaningless: report it instead of silently ignoring it. */
  if (call->job && !(call->job->kernel->flags & CUBERT_KERNEL_SYNC_CUBE))
    cubert_cpu_job_fail(call->job,
                        "cubert_cpu_sync_cube called by a kernel not flagged "
                        "CUBERT_KERNEL_SYNC_CUBE");
}
