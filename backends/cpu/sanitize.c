/* cubert CPU server — the kernel sanitizer (validate mode; docs/debugging.md).

   A kernel file's sanitize copy (cubert/cube.h, CUBERT_CUBE_SANITIZE) is compiled with GCC's
   -fsanitize=thread,bounds-strict,integer-divide-by-zero and its __tsan_* / __ubsan_* calls
   renamed cubert_san_tsan_* /
   cubert_san_ubsan_* (cmake/sanitize_rename.cmake), so they never meet a real TSan or UBSan
   runtime. Every load and store of that copy calls in here first. Accesses outside the running
   cube's shared memory and its redzones return at once; inside it a shadow record per 4-byte word
   (per byte for a word an access of fewer bytes, or an unaligned one, reached in the cube) keeps
   the last writer and the interval's first two readers with their barrier interval (epoch), and
   finds:
     - data races: two units in one interval, at least one writing, not both atomically (a
       write after a write of the same value is a same-value race, no finding where STORE_SAME
       or SHARED_STORE_SAME declared both stores: san_same.c);
     - reads of shared memory not written since the cube started;
     - accesses in the redzones around the shared memory (pointer arithmetic past the end);
   and units that returned before a barrier the others reached (reported at that barrier), and
   bounds-strict's handler reports array indices past a declared size (private arrays,
   EXCLUSIVE arrays, arrays in the shared struct) with its exact file and line, and the division
   handler a zero integer divisor, before the division (the launch stops there, as after a wild
   pointer, below: the division would fault once the handler returned). The first
   finding becomes the launch's error (checks.c); the chunk's checks stop there.

   An access outside every memory a unit may touch (the launch's buffers, the cube's shared
   memory and its redzones, the unit's own stack frames, its call's context and the kernel's
   static data) is a wild pointer: an uninitialised private pointer (0xfefe... under
   -ftrivial-auto-var-init=pattern), a constant address, an index far past any redzone. The
   instrumented access runs after its callback returns, so the callback never returns: it
   reports and jumps out of the unit's call (siglongjmp to cubert_san_run's frame, on the unit's
   own stack: a fiber's or the thread's), and nothing more of the launch runs. No signal handler
   is involved: signals are the process's, and the access never happens.

   The state is the thread's (one cube at a time runs on a thread, its fibers included), and so
   is the shared memory shadow; the buffer shadow is the launch's, shared by every participant
   that runs its cubes (san_buffers.c says why races between cubes on different threads are
   still found). The callbacks answer the common accesses inline, as leaves that store nothing or
   one record: a plain read or a one-unit write of whole shared words that finds nothing, a read of
   the unit's stack, of a buffer without a shadow or of the info words, a write of the stack;
   everything else goes through check_store, out of line. The scheduler sets the state around a
   chunk (cubert_cpu_san_begin/_cube/_end),
   the sanitize copy says which unit runs (cubert_san_run, _resume, _phase_unit). A report or a
   wild access on one thread stops the checks, or the launch, on the others at their next cube. */
#include "cpu/sanitize.h"

#include <inttypes.h>
#include <link.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "cpu/checks.h"
#include "cpu/san_buffers.h"
#include "cpu/san_same.h"
#include "cpu/san_symbols.h"
#include "cpu/server.h"
#include "cubert/config.h"
#include "cubert/sanitize.h"

/* Initial-exec: one load per access, no __tls_get_addr call (the library is never dlopen'ed
   after start-up with its TLS needs unmet: the block is one pointer). */
static __thread cubert_cpu_san *tls_san __attribute__((tls_model("initial-exec")));

enum {
  W_ATOMIC = 1,
  R_ATOMIC = 2,
  W_SAME = 4, /* the write was declared with SHARED_STORE_SAME */
  BYTES = 8   /* a word's record: its bytes have records of their own (access_shared) */
};

/* Reports the plain store's race left pending by the running unit (san_same.c), before its next
   access, barrier, PHASE change or end, while it is still the running unit. */
static inline void settle(cubert_cpu_san *s) {
  if (__builtin_expect(s->pending.size != 0, 0)) cubert_cpu_san_same_resolve(s);
}

/* Where a unit's call of the sanitize copy began (run_stoppable). */
struct cubert_cpu_san_frame {
  sigjmp_buf jump;    /* without the signal mask: no system call per call */
  uintptr_t stack_hi; /* the unit's frames lie below it */
};

/* The kernel's file, for reports. */
static const char *kernel_file(const cubert_cpu_san *s) {
  const cubert_kernel_signature *sig = s->job->kernel->signature;
  return sig && sig->file ? sig->file : NULL;
}

static const char *base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path ? path : "?";
}

/* ---- set-up (scheduler) ------------------------------------------------------------------- */

int cubert_cpu_san_wanted(const cubert_cpu_job *job) {
  return job->mode == CUBERT_EXECUTION_VALIDATE && job->kernel->cpu_sanitize &&
         cubert_config_get()->sanitizer;
}

uint64_t cubert_cpu_san_redzone(uint64_t shared_bytes) {
  /* A multiple of the cache line, so the shared memory keeps its alignment; large enough for
     an index a whole shared size past the end, up to 64 KiB. */
  uint64_t rz = shared_bytes < 256 ? 256 : shared_bytes > 65536 ? 65536 : shared_bytes;
  return (rz + CUBERT_CPU_LINE - 1) & ~(uint64_t)(CUBERT_CPU_LINE - 1);
}

int cubert_cpu_san_begin(cubert_cpu_san *s, cubert_cpu_job *job, void *shared,
                         uint64_t shared_bytes, uint32_t units, int fibers) {
  memset(s, 0, sizeof *s);
  s->job = job;
  s->fibers = fibers;
  s->phased = (job->kernel->flags & CUBERT_KERNEL_PHASED) != 0;
  s->unit_form = !job->cube_mode;
  s->units = units;
  s->next = 1;
  s->unit = CUBERT_CPU_SAN_ALL;
  s->pc_base = (uintptr_t)job->kernel->cpu_sanitize;
  if (shared && shared_bytes) {
    uint64_t rz = cubert_cpu_san_redzone(shared_bytes);
    s->lo = (uintptr_t)shared;
    s->bytes = shared_bytes;
    s->zone_lo = (uintptr_t)shared - rz;
    s->zone_bytes = shared_bytes + 2 * rz;
    const uint64_t words = (shared_bytes + 3) / 4;
    s->word_bytes = shared_bytes & ~(uint64_t)3;
    /* calloc maps zero pages: the byte records cost memory only where words are split. */
    s->words = calloc(words, sizeof *s->words);
    s->shadow = calloc(words * 4, sizeof *s->shadow);
    if (!s->words || !s->shadow) {
      cubert_cpu_san_end(s);
      return 0;
    }
  }
  if (fibers) {
    s->syncs = calloc(units, sizeof *s->syncs);
    s->lines = calloc(units, sizeof *s->lines);
    s->frames = calloc(units, sizeof *s->frames);
    s->returned = calloc(units, sizeof *s->returned);
    if (!s->syncs || !s->lines || !s->frames || !s->returned) {
      cubert_cpu_san_end(s);
      return 0;
    }
  }
  s->launch = cubert_cpu_san_launch_join(job);
  if (!s->launch) {
    cubert_cpu_san_end(s);
    return 0;
  }
  s->region_count = s->launch->region_count;
  s->regions = s->launch->regions;
  tls_san = s;
  return 1;
}

/* Epochs stay below 2^29 (san_buffers.c keeps three flag bits above them): start the shared
   memory shadow afresh before they would pass it. The buffer shadow compares epochs of one cube
   only, and no cell holds one of the cube about to start, so it keeps its cells. */
static void new_epoch_base(cubert_cpu_san *s) {
  if (s->next > (1u << 29) - 0x10000u) {
    if (s->words) memset(s->words, 0, (s->bytes + 3) / 4 * sizeof *s->words);
    s->next = 1;
  }
  s->base = s->epoch = s->next++;
}

void cubert_cpu_san_cube(cubert_cpu_san *s, uint64_t first_unit, const uint16_t *order) {
  /* Another participant's report stops the checks here too (the launch keeps one). */
  if (atomic_load_explicit(&s->launch->done, memory_order_relaxed)) s->done = 1;
  s->cube_first = first_unit;
  s->order = order;
  new_epoch_base(s);
  s->unit = CUBERT_CPU_SAN_ALL;
  s->line = 0;
  s->in_phase = 0;
  if (s->fibers) {
    memset(s->syncs, 0, s->units * sizeof *s->syncs);
    memset(s->lines, 0, s->units * sizeof *s->lines);
    memset(s->frames, 0, s->units * sizeof *s->frames);
    memset(s->returned, 0, s->units * sizeof *s->returned);
  }
  s->returned_min = UINT32_MAX;
  /* Split words go back to one record each, "not written" (every epoch in them is older than the
     cube's); the byte records are copied afresh when a word splits again. */
  if (s->bytes_used) {
    memset(s->words, 0, (s->bytes + 3) / 4 * sizeof *s->words);
    s->bytes_used = 0;
  }
  /* Uninitialised shared memory reads the same bytes on every run (and the redzones too). */
  if (s->zone_bytes) memset((void *)s->zone_lo, 0xfe, (size_t)s->zone_bytes);
}

void cubert_cpu_san_quiet(cubert_cpu_san *s, cubert_cpu_san_region *regions) {
  s->regions = regions;
  s->done = 1;
}

void cubert_cpu_san_end(cubert_cpu_san *s) {
  if (tls_san == s) tls_san = NULL;
  free(s->words);
  free(s->shadow);
  free(s->syncs);
  free(s->lines);
  free(s->frames);
  free(s->returned);
  s->returned = NULL;
  s->words = s->shadow = NULL;
  s->syncs = s->lines = NULL;
  s->frames = NULL;
}

int cubert_cpu_san_stopped(const cubert_cpu_san *s) {
  return s->stopped || atomic_load_explicit(&s->launch->stopped, memory_order_relaxed);
}

/* ---- where the kernel is (the sanitize copy) ---------------------------------------------- */

typedef void (*san_body)(cubert_cpu_san *s, const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn);

/* A phased kernel's cube: one call, its context a stack copy (as for run_units). */
static void run_phased(cubert_cpu_san *s, const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn) {
  const cubert_cpu_ctx local = *ctx;
  ctx = s->ctx = &local;
  s->unit = CUBERT_CPU_SAN_ALL;
  s->in_phase = 0;
  fn(ctx);
  settle(s);
  if (s->in_phase && !s->done) {
    /* A `return` inside a PHASE leaves the body: the units after this one never ran the rest
       of it, and no barrier after it was reached by any unit. */
    char what[256];
    snprintf(what, sizeof what,
             "barrier divergence: the unit returned inside the PHASE at %s:%" PRIu32
             ", so the units after it skip the rest of the kernel and its barriers",
             base_name(kernel_file(s)), s->line);
    s->done = 1;
    cubert_cpu_report_sanitizer(ctx, s->cube_first + s->unit, what);
  }
}

/* A unit of a CUBE_KERNEL: on its fiber when the cube has several units. */
static void run_fiber(cubert_cpu_san *s, const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn) {
  cubert_san_resume(ctx);
  fn(ctx);
  settle(s);
  /* The barriers it did not reach are the others' divergence (cubert_san_resume). */
  const uint32_t u = (uint32_t)(ctx->unit_begin - s->cube_first);
  if (s->fibers && u < s->units) {
    s->returned[u] = 1;
    if (s->syncs[u] < s->returned_min) s->returned_min = s->syncs[u];
  }
}

/* A unit kernel: one call for the chunk's units, whose loop names each unit (cubert_san_unit),
   so a finding names its unit; the call's own start (its prologue) counts as the first unit's. */
static void run_units(cubert_cpu_san *s, const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn) {
  /* On this frame, the loop's reads of its context are private-memory reads, which the
     callbacks' inline stack test answers, not the wild-pointer lookup. */
  const cubert_cpu_ctx local = *ctx;
  s->ctx = &local;
  s->unit_global = ctx->unit_begin;
  new_epoch_base(s);
  fn(&local);
  settle(s);
}

void cubert_san_unit(uint64_t id) {
  cubert_cpu_san *s = tls_san;
  if (!s) return;
  settle(s); /* the unit before it: its pending race is its own */
  s->unit_global = id;
  new_epoch_base(s); /* no barrier orders two units of a unit kernel */
}

/* Runs `body` as the unit's call, with a way out for a wild access (outside()): the frame is
   this function's, on the stack the unit runs on, so it outlives every frame of the kernel and
   bounds them from above. Out of line for that reason. */
static __attribute__((noinline)) void run_stoppable(cubert_cpu_san *s, const cubert_cpu_ctx *ctx,
                                                    cubert_cpu_kernel_fn fn, san_body body) {
  cubert_cpu_san_frame frame;
  frame.stack_hi = (uintptr_t)__builtin_frame_address(0);
  if (s->fibers) {
    uint32_t u = (uint32_t)(ctx->unit_begin - s->cube_first);
    if (u < s->units) s->frames[u] = &frame;
  }
  s->frame = &frame;
  s->stack_hi = frame.stack_hi;
  if (sigsetjmp(frame.jump, 0) == 0) body(s, ctx, fn);
  s->pending.size = 0; /* left by a wild access: the launch has its report */
  s->frame = NULL;
  s->stack_hi = 0;
}

void cubert_san_run(const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn, uint32_t flags) {
  cubert_cpu_san *s = tls_san;
  if (!s) {
    fn(ctx);
    return;
  }
  if (cubert_cpu_san_stopped(s)) return; /* a wild access stopped the launch */
  s->ctx = ctx;
  run_stoppable(s, ctx, fn,
                flags & CUBERT_KERNEL_PHASED      ? run_phased
                : flags & CUBERT_KERNEL_SYNC_CUBE ? run_fiber
                                                  : run_units);
  s->ctx = ctx;
}

void cubert_san_barrier(const cubert_cpu_ctx *ctx, uint32_t line) {
  cubert_cpu_san *s = tls_san;
  if (!s) return;
  settle(s);
  if (s->phased) {
    if (s->in_phase) return; /* reported by the barrier itself (cube.h's cubert_sync_) */
    s->epoch = s->next++;
    s->line = line;
    return;
  }
  if (s->fibers) {
    uint32_t u = (uint32_t)(ctx->unit_begin - s->cube_first);
    if (u < s->units) {
      ++s->syncs[u];
      s->lines[u] = line;
    }
  }
}

static void unit_name(const cubert_cpu_san *s, uint32_t u, char *out, size_t size);

/* Unit `u` of a CUBE_KERNEL's cube passed its barrier number syncs[u]: once a barrier returns,
   every other unit reached it or returned, so a unit that returned having passed fewer barriers
   skipped this one (a GPU leaves the others waiting, or not). Reported here, at the barrier,
   before the reads of what the returned units never wrote. */
static void returned_before(cubert_cpu_san *s, uint32_t u) {
  char units[200] = "";
  size_t used = 0;
  uint32_t first = CUBERT_CPU_SAN_ALL, count = 0;
  for (uint32_t v = 0; v < s->units; ++v) {
    if (!s->returned[v] || s->syncs[v] >= s->syncs[u]) continue;
    if (first == CUBERT_CPU_SAN_ALL) first = v;
    if (++count > 4) continue; /* the first four are named */
    char name[64];
    unit_name(s, v, name, sizeof name);
    int n = snprintf(units + used, sizeof units - used, "%s%s", count > 1 ? ", " : "", name);
    if (n > 0 && (size_t)n < sizeof units - used) used += (size_t)n;
  }
  if (first == CUBERT_CPU_SAN_ALL) return;
  char what[640];
  snprintf(what, sizeof what,
           "barrier divergence: %" PRIu32
           " unit%s of the cube (%s%s) returned before the barrier at %s:%" PRIu32
           " that the other units reach; every unit of a cube must reach each SYNC_CUBE() "
           "(return after the last one, or skip the work but not the barrier)",
           count, count > 1 ? "s" : "", units, count > 4 ? ", ..." : "", base_name(kernel_file(s)),
           s->lines[u]);
  s->done = 1;
  atomic_store_explicit(&s->launch->done, 1, memory_order_relaxed);
  cubert_cpu_report_sanitizer(s->ctx, s->cube_first + first, what);
}

void cubert_san_resume(const cubert_cpu_ctx *ctx) {
  cubert_cpu_san *s = tls_san;
  if (!s || s->phased) return;
  s->ctx = ctx;
  uint32_t u = (uint32_t)(ctx->unit_begin - s->cube_first);
  if (!s->fibers || u >= s->units) {
    s->unit = u < s->units ? u : CUBERT_CPU_SAN_ALL;
    return;
  }
  s->unit = u;
  /* The unit's call: its stack, and its way out (another unit's wild access stopped the launch
     while this one waited at the barrier). */
  if (s->frames[u]) {
    s->frame = s->frames[u];
    s->stack_hi = s->frame->stack_hi;
    if (s->stopped) siglongjmp(s->frame->jump, 1);
  }
  if (s->returned_min < s->syncs[u] && !s->done) returned_before(s, u);
  /* A unit's interval is the cube's first epoch plus the barriers it passed; units that passed
     as many barriers are in the same interval. */
  s->epoch = s->base + s->syncs[u];
  if (s->epoch >= s->next) s->next = s->epoch + 1;
}

void cubert_san_phase_begin(uint32_t line) {
  cubert_cpu_san *s = tls_san;
  if (!s) return;
  s->in_phase = 1;
  s->line = line;
}

void cubert_san_phase_end(void) {
  cubert_cpu_san *s = tls_san;
  if (!s) return;
  settle(s);
  s->in_phase = 0;
  s->unit = CUBERT_CPU_SAN_ALL;
}

int cubert_san_phase_unit(uint32_t unit) {
  cubert_cpu_san *s = tls_san;
  if (s) {
    settle(s);
    s->unit = unit;
  }
  return 1;
}

uint32_t cubert_san_phase_order(uint32_t k) {
  cubert_cpu_san *s = tls_san;
  return s && s->order ? s->order[k] : k;
}

/* ---- reports ------------------------------------------------------------------------------ */

/* "unit (x, y, z)" of linear position `u` in the running cube. */
static void unit_name(const cubert_cpu_san *s, uint32_t u, char *out, size_t size) {
  if (u == CUBERT_CPU_SAN_ALL) {
    snprintf(out, size, "every unit (outside a PHASE)");
    return;
  }
  uint32_t p[3];
  cubert_cpu_unit_pos(s->ctx, s->cube_first + u, p);
  snprintf(out, size, "unit (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")", p[0], p[1], p[2]);
}

/* Where the access is (san_symbols.c reads its line), and, for the reader's bearings, where its
   barrier interval began: the PHASE or the barrier before it. */
void cubert_cpu_san_place(const cubert_cpu_san *s, const void *pc, char *out, size_t size) {
  const char *file = kernel_file(s);
  uint32_t line = 0;
  const char *how = "";
  if (s->phased) {
    line = s->line;
    how = s->in_phase ? "in the PHASE at" : "after the barrier at";
  } else if (s->fibers && s->unit < s->units) {
    line = s->lines[s->unit];
    how = line ? "after the barrier at" : "before the first barrier";
  }
  char at[256];
  cubert_cpu_san_symbols_where(pc, file, at, sizeof at);
  if (line)
    snprintf(out, size, "at %s (%s %s:%" PRIu32 ")", at, how, base_name(file), line);
  else if (*how)
    snprintf(out, size, "at %s (%s)", at, how);
  else
    snprintf(out, size, "at %s", at);
}

void cubert_cpu_san_other_place(const cubert_cpu_san *s, uint32_t packed, char *out, size_t size) {
  const void *pc = cubert_cpu_san_pc_unpack(packed, s->pc_base);
  char at[256];
  if (!pc) {
    snprintf(out, size, "%s", "");
    return;
  }
  cubert_cpu_san_symbols_where(pc, kernel_file(s), at, sizeof at);
  snprintf(out, size, " at %s", at);
}

uint64_t cubert_cpu_san_unit_id(const cubert_cpu_san *s) {
  return s->unit_form                    ? s->unit_global
         : s->unit == CUBERT_CPU_SAN_ALL ? s->cube_first
                                         : s->cube_first + s->unit;
}

void cubert_cpu_san_report(cubert_cpu_san *s, const char *what) {
  s->done = 1;
  atomic_store_explicit(&s->launch->done, 1, memory_order_relaxed);
  cubert_cpu_report_sanitizer(s->ctx, cubert_cpu_san_unit_id(s), what);
}

/* ---- the shadow --------------------------------------------------------------------------- */

/* A race with the access of unit `other` at `other_pc` (packed); the running unit's access is a
   write or a read. */
static void report_shared(cubert_cpu_san *s, const char *kind, uint64_t offset, uint32_t other,
                          const char *other_did, uint32_t other_pc, int write, const void *pc) {
  char them[64], there[280], where[400], what[900];
  unit_name(s, other, them, sizeof them);
  cubert_cpu_san_other_place(s, other_pc, there, sizeof there);
  cubert_cpu_san_place(s, pc, where, sizeof where);
  snprintf(what, sizeof what,
           "%s on shared memory byte %" PRIu64 " (of %" PRIu64
           "): %s %s it%s in the same barrier interval; this %s is %s",
           kind, offset, s->bytes, them, other_did, there, write ? "write" : "read", where);
  cubert_cpu_san_report(s, what);
}

static void report_zone(cubert_cpu_san *s, uintptr_t a, uint64_t size, int write, const void *pc) {
  char where[400], what[640];
  cubert_cpu_san_place(s, pc, where, sizeof where);
  if (a < s->lo)
    snprintf(what, sizeof what,
             "out-of-bounds shared memory: a %" PRIu64 "-byte %s %" PRIu64
             " bytes before the %" PRIu64 "-byte shared memory, %s",
             size, write ? "write" : "read", (uint64_t)(s->lo - a), s->bytes, where);
  else
    snprintf(what, sizeof what,
             "out-of-bounds shared memory: a %" PRIu64 "-byte %s at byte offset %" PRIu64
             " of the %" PRIu64 "-byte shared memory, %s",
             size, write ? "write" : "read", (uint64_t)(a - s->lo), s->bytes, where);
  cubert_cpu_san_report(s, what);
}

static __attribute__((noinline, cold)) void report_unset(cubert_cpu_san *s, uint64_t byte,
                                                         const void *pc) {
  char where[400], what[640];
  cubert_cpu_san_place(s, pc, where, sizeof where);
  snprintf(what, sizeof what,
           "uninitialised shared memory: read of byte %" PRIu64 " (of %" PRIu64
           "), which no unit of the cube wrote, %s",
           byte, s->bytes, where);
  cubert_cpu_san_report(s, what);
}

void cubert_cpu_san_shared_race(cubert_cpu_san *s, const char *kind, uint64_t offset,
                                uint32_t other, const char *other_did, uint32_t other_pc,
                                const void *pc) {
  report_shared(s, kind, offset, other, other_did, other_pc, 1, pc);
}

/* The running unit's store [a, a + size) wrote after unit h->w_unit's write of `byte` in the same
   interval: a declared store (`declared`, of the value the memory holds: `same`) is named by the
   values, a plain one waits for its value (san_same.c). Returns 0: no finding (both declared, one
   value). */
static int shared_write_race(cubert_cpu_san *s, const cubert_cpu_san_shadow *h, uint64_t byte,
                             uintptr_t a, uint64_t size, int declared, int same, const void *pc) {
  const char *did = "wrote", *kind = "data race (write after write)";
  if (declared) {
    kind = cubert_cpu_san_same_kind(same, (h->flags & W_SAME) != 0, &did);
    if (!kind) return 0;
  } else {
    const cubert_cpu_san_pending race = {.addr = a,
                                         .size = (uint32_t)size,
                                         .at = byte,
                                         .other_unit = h->w_unit,
                                         .other_pc = h->w_pc,
                                         .pc = pc};
    if (cubert_cpu_san_same_defer(s, &race)) return 1;
  }
  report_shared(s, kind, byte, h->w_unit, did, h->w_pc, 1, pc);
  return 1;
}

/* Records unit `u`'s read at `at` (packed) in epoch `e` in `h`, whose write does not race with it:
   the interval's first two distinct readers are kept, and R_ATOMIC while every read was atomic. */
static inline void record_read(cubert_cpu_san_shadow *h, uint32_t e, uint32_t u, uint32_t at,
                               int atomic) {
  if (h->r_epoch != e) {
    h->r_epoch = e;
    h->r_unit = h->r_unit2 = (uint16_t)u;
    h->r_pc = h->r_pc2 = at;
    h->flags = (uint8_t)((h->flags & ~R_ATOMIC) | (atomic ? R_ATOMIC : 0));
    return;
  }
  if (h->r_unit2 == h->r_unit && h->r_unit != u) {
    h->r_unit2 = (uint16_t)u;
    h->r_pc2 = at;
  }
  if (!atomic && (h->flags & R_ATOMIC)) h->flags &= (uint8_t)~R_ATOMIC;
}

/* The running unit's access [a, a + size) of shared memory byte `byte`, whose shadow is `h`.
   `declared`: a SHARED_STORE_SAME, `same`: of the value the memory holds. Returns 0 after a
   report (or a race left pending). */
static inline int shadow_access(cubert_cpu_san *s, cubert_cpu_san_shadow *h, uint64_t byte,
                                uintptr_t a, uint64_t size, int write, int atomic, int declared,
                                int same, const void *pc) {
  const uint32_t e = s->epoch, u = s->unit, at = cubert_cpu_san_pc_pack(pc, s->pc_base);
  if (write) {
    if (u != CUBERT_CPU_SAN_ALL) {
      if (h->w_epoch == e && h->w_unit != u && h->w_unit != CUBERT_CPU_SAN_ALL &&
          !(atomic && (h->flags & W_ATOMIC)) &&
          shared_write_race(s, h, byte, a, size, declared, same, pc))
        return 0;
      if (h->r_epoch == e && !(atomic && (h->flags & R_ATOMIC))) {
        const int second = h->r_unit == u;
        uint32_t other = second ? h->r_unit2 : h->r_unit;
        if (other != u && other != CUBERT_CPU_SAN_ALL) {
          report_shared(s, "data race (write after read)", byte, other, "read",
                        second ? h->r_pc2 : h->r_pc, 1, pc);
          return 0;
        }
      }
    }
    h->w_epoch = e;
    h->w_unit = (uint16_t)u;
    h->w_pc = at;
    h->flags = (uint8_t)((h->flags & ~(W_ATOMIC | W_SAME)) | (atomic ? W_ATOMIC : 0) |
                         (declared ? W_SAME : 0));
    return 1;
  }
  if (h->w_epoch < s->base) {
    report_unset(s, byte, pc);
    return 0;
  }
  if (h->w_epoch == e && h->w_unit != u && h->w_unit != CUBERT_CPU_SAN_ALL &&
      !(atomic && (h->flags & W_ATOMIC))) {
    report_shared(s, "data race (read after write)", byte, h->w_unit, "wrote", h->w_pc, 0, pc);
    return 0;
  }
  record_read(h, e, u, at, atomic);
  return 1;
}

/* The running unit's plain read of a word whose record is `h`, when it finds nothing: the word was
   written in the cube, by no other unit in this interval; records it and returns 1 (else 0, for
   shadow_access to report). shadow_access's read, inline in the callbacks. */
static inline __attribute__((always_inline)) int read_fast(const cubert_cpu_san *s,
                                                           cubert_cpu_san_shadow *h,
                                                           const void *pc) {
  const uint32_t e = s->epoch, u = s->unit;
  if ((h->flags & BYTES) || h->w_epoch < s->base ||
      (h->w_epoch == e && h->w_unit != u && h->w_unit != CUBERT_CPU_SAN_ALL))
    return 0;
  /* Nothing to store when the interval has this unit's read or two readers already. */
  if (h->r_epoch != e || (h->r_unit != u && h->r_unit2 == h->r_unit) || (h->flags & R_ATOMIC))
    record_read(h, e, u, cubert_cpu_san_pc_pack(pc, s->pc_base), 0);
  return 1;
}

/* The running unit's plain write of a word whose record is `h`, when it finds nothing: no other
   unit wrote or read the word in this interval; records it and returns 1 (else 0, for
   shadow_access to report). shadow_access's write of one unit, inline in the callbacks. */
static inline __attribute__((always_inline)) int write_fast(const cubert_cpu_san *s,
                                                            cubert_cpu_san_shadow *h,
                                                            const void *pc) {
  const uint32_t e = s->epoch, u = s->unit;
  if ((h->flags & BYTES) ||
      (h->w_epoch == e && h->w_unit != u && h->w_unit != CUBERT_CPU_SAN_ALL) ||
      (h->r_epoch == e && (h->r_unit != u || h->r_unit2 != u)))
    return 0;
  h->w_epoch = e;
  h->w_unit = (uint16_t)u;
  h->w_pc = cubert_cpu_san_pc_pack(pc, s->pc_base);
  h->flags &= (uint8_t) ~(W_ATOMIC | W_SAME);
  return 1;
}

/* Gives word `w` records per byte (for an access of part of it): each a copy of the word's. */
static void split_word(cubert_cpu_san *s, uint64_t w) {
  cubert_cpu_san_shadow *h = &s->words[w];
  if (h->flags & BYTES) return;
  for (uint64_t i = 0; i < 4; ++i) s->shadow[w * 4 + i] = *h;
  h->flags |= BYTES;
  s->bytes_used = 1;
}

/* The access [a, a + size) of the running unit, `a` inside the zone; `value`: a
   SHARED_STORE_SAME's (NULL: none). An access of whole aligned words checks and updates one
   record per word (the bytes of a word accessed together share a history); any other access
   splits the words it touches into records per byte, for the rest of the cube. */
static void access_shared(cubert_cpu_san *s, uintptr_t a, uint64_t size, int write, int atomic,
                          const void *value, const void *pc) {
  if (a < s->lo || a + size > s->lo + s->bytes) {
    report_zone(s, a, size, write, pc);
    return;
  }
  if (!size || (s->unit == CUBERT_CPU_SAN_ALL && !write))
    return; /* every unit reads: no finding alone */
  const uint64_t byte = a - s->lo, first = byte / 4, last = (byte + size - 1) / 4;
  const int declared = value != NULL;
  const int same_value = declared && !memcmp((const void *)a, value, size);
  int whole = byte % 4 == 0 && size % 4 == 0;
  for (uint64_t w = first; whole && w <= last; ++w) whole = !(s->words[w].flags & BYTES);
  if (whole) {
    for (uint64_t w = first; w <= last; ++w) {
      /* Updated in a local copy, then stored whole: reloading the record right after its fields
         were stored one by one stalls (a failed store-to-load forwarding). */
      cubert_cpu_san_shadow v = s->words[w];
      if (!shadow_access(s, &v, w * 4, a, size, write, atomic, declared, same_value, pc)) return;
      s->words[w] = v;
    }
    return;
  }
  for (uint64_t w = first; w <= last; ++w) split_word(s, w);
  cubert_cpu_san_shadow *h = &s->shadow[byte];
  /* The bytes were last accessed together (the usual case): one check stands for all. */
  uint64_t same = 1;
  while (same < size && !memcmp(&h[same], h, sizeof *h)) ++same;
  if (same == size) {
    cubert_cpu_san_shadow v = *h;
    if (!shadow_access(s, &v, byte, a, size, write, atomic, declared, same_value, pc)) return;
    for (uint64_t i = 0; i < size; ++i) h[i] = v;
    return;
  }
  for (uint64_t i = 0; i < size; ++i)
    if (!shadow_access(s, &h[i], byte + i, a, size, write, atomic, declared, same_value, pc))
      return;
}

/* True when a plain read of [a, a + size) lies in whole words of the shared memory and read_fast
   checked and recorded it (or the checks stopped, or every unit reads: nothing to record): the
   callbacks' fast path. A race a plain store of the unit left pending (san_same.c) waits for the
   unit's next access that is not one of these, barrier or end: no other store comes between. */
/* Like shared_read_fast, for a plain write of one unit (not every unit of a phased cube) with no
   race pending from its previous store (san_same.c decides that one with the memory's value). */
static inline __attribute__((always_inline)) int shared_write_fast(cubert_cpu_san *s, uintptr_t a,
                                                                   uint64_t size, const void *pc) {
  const uint64_t off = a - s->lo;
  if (off >= s->word_bytes || s->word_bytes - off < size || off % 4 || size % 4) return 0;
  if (s->done) return 1;
  if (s->unit == CUBERT_CPU_SAN_ALL || s->pending.size) return 0;
  for (uint64_t k = 0; k < size / 4; ++k)
    if (!write_fast(s, &s->words[off / 4 + k], pc)) return 0; /* recording again changes nothing */
  return 1;
}
static inline __attribute__((always_inline)) int shared_read_fast(cubert_cpu_san *s, uintptr_t a,
                                                                  uint64_t size, const void *pc) {
  const uint64_t off = a - s->lo;
  if (off >= s->word_bytes || s->word_bytes - off < size || off % 4 || size % 4) return 0;
  if (s->done || s->unit == CUBERT_CPU_SAN_ALL) return 1;
  for (uint64_t k = 0; k < size / 4; ++k)
    if (!read_fast(s, &s->words[off / 4 + k], pc)) return 0; /* recording again changes nothing */
  return 1;
}

/* ---- wild pointers ------------------------------------------------------------------------ */

static int within(uintptr_t a, const void *lo, uint64_t bytes) {
  return a - (uintptr_t)lo < bytes;
}

/* dl_iterate_phdr: the loaded extent of the module holding `data->lo` (an address of its code). */
static int find_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t *range = data, lo = UINTPTR_MAX, hi = 0;
  int holds = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t b = info->dlpi_addr + ph->p_vaddr, e = b + ph->p_memsz;
    if (range[0] - b < ph->p_memsz) holds = 1;
    if (b < lo) lo = b;
    if (e > hi) hi = e;
  }
  if (!holds) return 0;
  range[0] = lo;
  range[1] = hi;
  return 1;
}

/* Memory a unit may touch besides its buffers, shared memory and stack: its call's context and
   the arrays it points to (the kernel's prologue reads them), and the static data of the module
   the kernel was built into (its constant tables), looked up at the first access there. */
static int may_touch(cubert_cpu_san *s, uintptr_t a) {
  const cubert_cpu_ctx *c = s->ctx;
  if (c && (within(a, c, sizeof *c) ||
            within(a, c->buffers, (uint64_t)c->buffer_count * sizeof *c->buffers) ||
            within(a, c->buffer_bytes, (uint64_t)c->buffer_count * sizeof *c->buffer_bytes) ||
            within(a, c->info, (uint64_t)c->info_count * sizeof *c->info)))
    return 1;
  if (!s->image_known) {
    uintptr_t range[2] = {(uintptr_t)s->job->kernel->cpu_sanitize, 0};
    if (dl_iterate_phdr(find_module, range)) {
      s->image_lo = range[0];
      s->image_hi = range[1];
    }
    s->image_known = 1;
  }
  return a - s->image_lo < s->image_hi - s->image_lo;
}

/* An access none of the memory a unit may touch: reports it (unless the launch has its report)
   and leaves the unit's call before the access happens; the launch stops there. */
static __attribute__((noinline, cold)) void outside(cubert_cpu_san *s, uintptr_t a, uint64_t size,
                                                    int write, int atomic, const void *pc) {
  /* Outside a unit's call (cannot happen: the sanitize copy's code runs inside cubert_san_run)
     there is neither a stack bound nor a way out. */
  if (!s->frame || may_touch(s, a)) return;
  if (!s->done) {
    char where[400], what[800];
    cubert_cpu_san_place(s, pc, where, sizeof where);
    snprintf(what, sizeof what,
             "wild pointer: a %" PRIu64 "-byte %s%s at address 0x%" PRIxPTR
             ", outside every memory the unit may touch (the launch's buffers, the cube's shared "
             "memory, the unit's private variables, the kernel's constant data), %s; the launch "
             "stopped there, before the access",
             size, atomic ? "atomic " : "", write ? "write" : "read", a, where);
    cubert_cpu_san_report(s, what);
  }
  s->stopped = 1;
  atomic_store_explicit(&s->launch->stopped, 1, memory_order_relaxed);
  siglongjmp(s->frame->jump, 1);
}

/* The callbacks' common path, cheapest test first: shared memory, then the unit's private
   memory (its frames, between this callback's and its call's: private arrays and the context
   the kernel's prologue reads, the most frequent accesses after shared memory), then the
   buffers. The stack and the buffers never overlap, so the order changes no verdict.
   `value`: a store declared with STORE_SAME or SHARED_STORE_SAME (NULL: none), which the buffer
   check makes itself under its cell's lock: returns 1 when it did. */
static inline int check_store(const volatile void *p, uint64_t size, int write, int atomic,
                              const void *value, const void *pc) {
  cubert_cpu_san *s = tls_san;
  if (__builtin_expect(!s, 0)) return 0;
  settle(s);
  uintptr_t a = (uintptr_t)p;
  if (a - s->zone_lo < s->zone_bytes) {
    if (!s->done) access_shared(s, a, size, write, atomic, value, pc);
    return 0;
  }
  const uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  if (a >= sp && a < s->stack_hi) return 0; /* stack_hi 0 outside a unit's call: never */
  for (uint32_t i = 0; i < s->region_count; ++i) {
    cubert_cpu_san_region *r = &s->regions[i];
    if (a - r->lo < r->bytes) {
      /* A read-only region nothing left unwritten has no shadow: the range test was all. */
      if (s->done || !(r->cells || r->unwritten)) return 0;
      cubert_cpu_san_buffer_access(s, r, a, size, write, atomic, value, pc);
      return value && r->cells;
    }
  }
  outside(s, a, size, write, atomic, pc);
  return 0;
}
static inline void check(const volatile void *p, uint64_t size, int write, int atomic,
                         const void *pc) {
  check_store(p, size, write, atomic, NULL, pc);
}
/* Out of line, so that the callbacks' fast path is a leaf without a frame of its own. */
static __attribute__((noinline)) void check_slow(const volatile void *p, uint64_t size, int write,
                                                 const void *pc) {
  check_store(p, size, write, 0, NULL, pc);
}
/* True when `a` is the running unit's private memory (check_store's stack test, inline in the
   callbacks: the frame is the callback's own, below every frame of the unit). */
static inline __attribute__((always_inline)) int on_stack(const cubert_cpu_san *s, uintptr_t a) {
  return a >= (uintptr_t)__builtin_frame_address(0) && a < s->stack_hi;
}
/* True when a read of `a` lies in a buffer region without a shadow (read-only, nothing unwritten)
   or the checks stopped: check_store's answer, inline in the read callbacks (a read changes no
   memory, so a race pending from the unit's store waits, as for shared_read_fast). */
static inline __attribute__((always_inline)) int buffer_read_free(const cubert_cpu_san *s,
                                                                  uintptr_t a) {
  for (uint32_t i = 0; i < s->region_count; ++i) {
    const cubert_cpu_san_region *r = &s->regions[i];
    if (a - r->lo < r->bytes) return s->done || !(r->cells || r->unwritten);
  }
  return 0;
}
/* True when a read of `a` is of the running call's info words (INFO_*) or of its buffers' addresses
   and sizes (which a kernel reads again after each call of the instrumentation): may_touch's most
   frequent cases, inline in the read callbacks. */
static inline __attribute__((always_inline)) int info_read(const cubert_cpu_san *s, uintptr_t a) {
  const cubert_cpu_ctx *c = s->ctx;
  return c &&
         (a - (uintptr_t)c->info < (uint64_t)c->info_count * sizeof *c->info ||
          a - (uintptr_t)c->buffers < (uint64_t)c->buffer_count * sizeof *c->buffers ||
          a - (uintptr_t)c->buffer_bytes < (uint64_t)c->buffer_count * sizeof *c->buffer_bytes);
}
static inline __attribute__((always_inline)) void check_write(const volatile void *p, uint64_t size,
                                                              const void *pc) {
  cubert_cpu_san *s = tls_san;
  if (__builtin_expect(s != NULL, 1) &&
      (shared_write_fast(s, (uintptr_t)p, size, pc) || on_stack(s, (uintptr_t)p)))
    return;
  check_slow(p, size, 1, pc);
}
static inline __attribute__((always_inline)) void check_read(const volatile void *p, uint64_t size,
                                                             const void *pc) {
  cubert_cpu_san *s = tls_san;
  if (__builtin_expect(s != NULL, 1) &&
      (shared_read_fast(s, (uintptr_t)p, size, pc) || on_stack(s, (uintptr_t)p) ||
       buffer_read_free(s, (uintptr_t)p) || info_read(s, (uintptr_t)p)))
    return;
  check_slow(p, size, 0, pc);
}

void cubert_san_store_same(volatile void *p, const void *value, uint32_t size) {
  if (!check_store(p, size, 1, 0, value, __builtin_return_address(0)))
    cubert_cpu_san_store_relaxed(p, value, size);
}

/* ---- the renamed instrumentation callbacks ------------------------------------------------ */

#define PC_ __builtin_return_address(0)
#define SAN_RW_(n)                                             \
  CUBERT_API void cubert_san_tsan_read##n(void *p);            \
  CUBERT_API void cubert_san_tsan_write##n(void *p);           \
  CUBERT_API void cubert_san_tsan_unaligned_read##n(void *p);  \
  CUBERT_API void cubert_san_tsan_unaligned_write##n(void *p); \
  CUBERT_API void cubert_san_tsan_volatile_read##n(void *p);   \
  CUBERT_API void cubert_san_tsan_volatile_write##n(void *p);  \
  void cubert_san_tsan_read##n(void *p) {                      \
    check_read(p, n, PC_);                                     \
  }                                                            \
  void cubert_san_tsan_write##n(void *p) {                     \
    check_write(p, n, PC_);                                    \
  }                                                            \
  void cubert_san_tsan_unaligned_read##n(void *p) {            \
    check_read(p, n, PC_);                                     \
  }                                                            \
  void cubert_san_tsan_unaligned_write##n(void *p) {           \
    check_write(p, n, PC_);                                    \
  }                                                            \
  void cubert_san_tsan_volatile_read##n(void *p) {             \
    check(p, n, 0, 0, PC_);                                    \
  }                                                            \
  void cubert_san_tsan_volatile_write##n(void *p) {            \
    check(p, n, 1, 0, PC_);                                    \
  }
SAN_RW_(1)
SAN_RW_(2)
SAN_RW_(4)
SAN_RW_(8)
SAN_RW_(16)

CUBERT_API void cubert_san_tsan_read_range(void *p, unsigned long size);
CUBERT_API void cubert_san_tsan_write_range(void *p, unsigned long size);
void cubert_san_tsan_read_range(void *p, unsigned long size) {
  check(p, size, 0, 0, PC_);
}
void cubert_san_tsan_write_range(void *p, unsigned long size) {
  check(p, size, 1, 0, PC_);
}

CUBERT_API void cubert_san_tsan_init(void);
CUBERT_API void cubert_san_tsan_func_entry(void *pc);
CUBERT_API void cubert_san_tsan_func_exit(void);
CUBERT_API void cubert_san_tsan_atomic_thread_fence(int mo);
CUBERT_API void cubert_san_tsan_atomic_signal_fence(int mo);
void cubert_san_tsan_init(void) {}
void cubert_san_tsan_func_entry(void *pc) {
  (void)pc;
}
void cubert_san_tsan_func_exit(void) {}
/* A sequentially consistent read-modify-write is a full fence (and, unlike
   __atomic_thread_fence, one that a TSan build of the library understands). */
static int fence_word;
void cubert_san_tsan_atomic_thread_fence(int mo) {
  (void)mo;
  __atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
}
void cubert_san_tsan_atomic_signal_fence(int mo) {
  (void)mo;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Atomics: checked as atomic accesses, then done (sequentially consistent: at least as strong as
   any order the kernel asked for). */
#define SAN_ATOMIC_OP_(n, T, op)                                                   \
  CUBERT_API T cubert_san_tsan_atomic##n##_fetch_##op(volatile T *p, T v, int mo); \
  T cubert_san_tsan_atomic##n##_fetch_##op(volatile T *p, T v, int mo) {           \
    (void)mo;                                                                      \
    check(p, n / 8, 0, 1, PC_);                                                    \
    check(p, n / 8, 1, 1, PC_);                                                    \
    return __atomic_fetch_##op(p, v, __ATOMIC_SEQ_CST);                            \
  }
#define SAN_ATOMIC_(n, T)                                                                        \
  SAN_ATOMIC_OP_(n, T, add)                                                                      \
  SAN_ATOMIC_OP_(n, T, sub)                                                                      \
  SAN_ATOMIC_OP_(n, T, and)                                                                      \
  SAN_ATOMIC_OP_(n, T, or)                                                                       \
  SAN_ATOMIC_OP_(n, T, xor)                                                                      \
  SAN_ATOMIC_OP_(n, T, nand)                                                                     \
  CUBERT_API T cubert_san_tsan_atomic##n##_load(const volatile T *p, int mo);                    \
  CUBERT_API void cubert_san_tsan_atomic##n##_store(volatile T *p, T v, int mo);                 \
  CUBERT_API T cubert_san_tsan_atomic##n##_exchange(volatile T *p, T v, int mo);                 \
  CUBERT_API int cubert_san_tsan_atomic##n##_compare_exchange_strong(volatile T *p, T *e, T v,   \
                                                                     int mo, int fmo);           \
  CUBERT_API int cubert_san_tsan_atomic##n##_compare_exchange_weak(volatile T *p, T *e, T v,     \
                                                                   int mo, int fmo);             \
  CUBERT_API T cubert_san_tsan_atomic##n##_compare_exchange_val(volatile T *p, T e, T v, int mo, \
                                                                int fmo);                        \
  T cubert_san_tsan_atomic##n##_load(const volatile T *p, int mo) {                              \
    (void)mo;                                                                                    \
    check(p, n / 8, 0, 1, PC_);                                                                  \
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                 \
  }                                                                                              \
  void cubert_san_tsan_atomic##n##_store(volatile T *p, T v, int mo) {                           \
    (void)mo;                                                                                    \
    check(p, n / 8, 1, 1, PC_);                                                                  \
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                                    \
  }                                                                                              \
  T cubert_san_tsan_atomic##n##_exchange(volatile T *p, T v, int mo) {                           \
    (void)mo;                                                                                    \
    check(p, n / 8, 1, 1, PC_);                                                                  \
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                          \
  }                                                                                              \
  int cubert_san_tsan_atomic##n##_compare_exchange_strong(volatile T *p, T *e, T v, int mo,      \
                                                          int fmo) {                             \
    (void)mo, (void)fmo;                                                                         \
    check(p, n / 8, 0, 1, PC_);                                                                  \
    check(p, n / 8, 1, 1, PC_);                                                                  \
    return __atomic_compare_exchange_n(p, e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
  }                                                                                              \
  int cubert_san_tsan_atomic##n##_compare_exchange_weak(volatile T *p, T *e, T v, int mo,        \
                                                        int fmo) {                               \
    (void)mo, (void)fmo;                                                                         \
    check(p, n / 8, 0, 1, PC_);                                                                  \
    check(p, n / 8, 1, 1, PC_);                                                                  \
    return __atomic_compare_exchange_n(p, e, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
  }                                                                                              \
  T cubert_san_tsan_atomic##n##_compare_exchange_val(volatile T *p, T e, T v, int mo, int fmo) { \
    (void)mo, (void)fmo;                                                                         \
    check(p, n / 8, 0, 1, PC_);                                                                  \
    check(p, n / 8, 1, 1, PC_);                                                                  \
    __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
    return e;                                                                                    \
  }
SAN_ATOMIC_(8, uint8_t)
SAN_ATOMIC_(16, uint16_t)
SAN_ATOMIC_(32, uint32_t)
SAN_ATOMIC_(64, uint64_t)

/* ---- bounds-strict's handler (GCC's UBSan data layout) ------------------------------------ */

typedef struct san_source_location {
  const char *file;
  uint32_t line, column;
} san_source_location;
typedef struct san_type_descriptor {
  uint16_t kind, info; /* kind 0: integer; info: bit 0 signed, the rest log2 of the width */
  char name[];
} san_type_descriptor;
typedef struct san_out_of_bounds {
  san_source_location loc;
  const san_type_descriptor *array_type, *index_type;
} san_out_of_bounds;

/* An integer operand as its type (GCC's UBSan descriptor) reads: signed or unsigned, of its
   width; `value` holds it inline (widths up to a pointer's). */
static void integer_text(const san_type_descriptor *t, uintptr_t value, char *out, size_t size) {
  const unsigned width = t && t->kind == 0 ? 1u << (t->info >> 1) : 64;
  if (t && t->kind == 0 && (t->info & 1) && width <= 64) {
    int64_t v = (int64_t)((uint64_t)value << (64 - width)) >> (64 - width);
    snprintf(out, size, "%" PRId64, v);
  } else {
    snprintf(out, size, "%" PRIu64, (uint64_t)value);
  }
}

static void out_of_bounds(const san_out_of_bounds *d, uintptr_t index) {
  cubert_cpu_san *s = tls_san;
  if (!s || s->done) return;
  char value[32];
  integer_text(d->index_type, index, value, sizeof value);
  const char *file = d->loc.file ? d->loc.file : "?";
  const char *base = strrchr(file, '/');
  char what[512];
  snprintf(what, sizeof what,
           "out-of-bounds array index: index %s past the bounds of %s (a private, EXCLUSIVE or "
           "shared array) at %s:%" PRIu32,
           value, d->array_type ? d->array_type->name : "an array", base ? base + 1 : file,
           d->loc.line);
  cubert_cpu_san_report(s, what);
}

/* integer-divide-by-zero's record: where, and the operands' type. */
typedef struct san_divrem {
  san_source_location loc;
  const san_type_descriptor *type;
} san_divrem;

/* A division or remainder by zero, before it happens: reported (in the private-memory check's
   quiet runs, kept for san_private.c), and, since the division runs once the handler returns, the
   unit's call is left as after a wild access: the launch stops there. Outside a unit's call (not
   reached: the copy runs inside cubert_san_run) it returns, and the division faults (trap.c). */
static void divide_by_zero(const san_divrem *d, uintptr_t lhs) {
  cubert_cpu_san *s = tls_san;
  if (!s || !s->frame) return;
  const char *file = d->loc.file ? d->loc.file : "?", *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  if (!s->done) {
    char value[32], what[512];
    integer_text(d->type, lhs, value, sizeof value);
    snprintf(what, sizeof what,
             "integer division by zero: %s divided by 0 (%s, or its remainder) at %s:%" PRIu32
             "; a GPU gives an unspecified value there (test the divisor before dividing); the "
             "launch stopped there, before the division",
             value, d->type ? d->type->name : "an integer", base, d->loc.line);
    cubert_cpu_san_report(s, what);
  } else if (!atomic_exchange_explicit(&s->launch->division_taken, 1, memory_order_relaxed)) {
    s->launch->division = (cubert_cpu_san_division){base, d->loc.line, cubert_cpu_san_unit_id(s)};
  }
  s->stopped = 1;
  atomic_store_explicit(&s->launch->stopped, 1, memory_order_relaxed);
  siglongjmp(s->frame->jump, 1);
}

CUBERT_API void cubert_san_ubsan_handle_divrem_overflow(const san_divrem *d, uintptr_t lhs,
                                                        uintptr_t rhs);
CUBERT_API void cubert_san_ubsan_handle_divrem_overflow_abort(const san_divrem *d, uintptr_t lhs,
                                                              uintptr_t rhs);
void cubert_san_ubsan_handle_divrem_overflow(const san_divrem *d, uintptr_t lhs, uintptr_t rhs) {
  (void)rhs; /* 0: only integer-divide-by-zero is instrumented (INT_MIN / -1 faults: trap.c) */
  divide_by_zero(d, lhs);
}
void cubert_san_ubsan_handle_divrem_overflow_abort(const san_divrem *d, uintptr_t lhs,
                                                   uintptr_t rhs) {
  (void)rhs;
  divide_by_zero(d, lhs);
}

CUBERT_API void cubert_san_ubsan_handle_out_of_bounds(const san_out_of_bounds *d, uintptr_t i);
CUBERT_API void cubert_san_ubsan_handle_out_of_bounds_abort(const san_out_of_bounds *d,
                                                            uintptr_t i);
void cubert_san_ubsan_handle_out_of_bounds(const san_out_of_bounds *d, uintptr_t i) {
  out_of_bounds(d, i);
}
void cubert_san_ubsan_handle_out_of_bounds_abort(const san_out_of_bounds *d, uintptr_t i) {
  out_of_bounds(d, i);
}
