/* cubert CPU server — private memory read before it is written (validate mode;
   docs/debugging.md).

   GCC does not say which private variable a load reads before a store, but it can start every
   private variable with a pattern: the sanitize copy fills them with 0xfe bytes
   (-ftrivial-auto-var-init=pattern) and a second copy of the kernel file zeroes them (=zero;
   cubert_add_kernels, the kernel's cpu_sanitize_zero). A sanitized launch keeps its writable
   buffers' bytes before any cube runs; once it finished without a finding, it runs again, whole,
   with the zeroed copy on copies of those bytes, its chunks claimed by every participant as the
   launch's were (scheduler.c), and the outputs are compared. Only a value read from uninitialised
   private memory can make them differ, or an order: both runs ran on several threads, and the
   order of atomics between cubes may show in an output (a float sum, a slot counter). So a
   difference is confirmed by the zeroed and the filled copy run again, alone on one thread and
   in one order (a launch with atomic accesses to buffers goes there at once): what still differs
   is reported, with the unit that wrote it in the launch. A read whose value never reaches an
   output is not reported (nor one whose result is alike for both fills: x * 0). The runs after the
   launch keep the sanitizer's state (its way out of a wild access) with its checks off: each access
   costs a range test; what they cost in all is in docs/debugging.md. */
#include "cpu/san_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/checks.h"
#include "cpu/san_buffers.h"
#include "cpu/server.h"

void cubert_cpu_san_private_keep(cubert_cpu_san_launch *l, const cubert_cpu_job *job) {
  if (!job->kernel->cpu_sanitize_zero || !l->region_count) return;
  l->origin = calloc(l->region_count, sizeof *l->origin);
  if (!l->origin) return;
  for (uint32_t i = 0; i < l->region_count; ++i) {
    const cubert_cpu_san_region *r = &l->regions[i];
    if (r->read_only) continue;
    l->origin[i] = malloc(r->bytes);
    if (!l->origin[i]) {
      cubert_cpu_san_private_free(l);
      return;
    }
    memcpy(l->origin[i], (const void *)r->lo, r->bytes);
  }
}

void cubert_cpu_san_private_free(cubert_cpu_san_launch *l) {
  if (!l->origin) return;
  for (uint32_t i = 0; i < l->region_count; ++i) free(l->origin[i]);
  free(l->origin);
  l->origin = NULL;
}

/* Points the run's regions and buffers at `copies` (per region; NULL: the buffer itself). */
static void aim(cubert_cpu_san_twin *t, const cubert_cpu_job *job, uint8_t *const *copies) {
  const cubert_cpu_san_launch *l = job->san_launch;
  for (uint32_t i = 0; i < l->region_count; ++i) {
    t->regions[i] = (cubert_cpu_san_region){.lo = l->regions[i].lo, .bytes = l->regions[i].bytes};
    if (copies[i]) t->regions[i].lo = (uintptr_t)copies[i];
  }
  for (uint32_t b = 0; b < job->binding_count; ++b) {
    const uintptr_t p = (uintptr_t)job->buffers[b];
    t->buffers[b] = job->buffers[b];
    for (uint32_t i = 0; p && i < l->region_count; ++i)
      if (copies[i] && p - l->regions[i].lo < l->regions[i].bytes)
        t->buffers[b] = copies[i] + (p - l->regions[i].lo);
  }
}

int cubert_cpu_san_private_begin(cubert_cpu_san_twin *t, cubert_cpu_job *job) {
  memset(t, 0, sizeof *t);
  cubert_cpu_san_launch *l = job->san_launch;
  if (!l || !l->origin || atomic_load_explicit(&l->done, memory_order_relaxed) ||
      atomic_load_explicit(&l->stopped, memory_order_relaxed) ||
      atomic_load_explicit(&job->failed, memory_order_relaxed))
    return 0;
  t->region_count = l->region_count;
  t->regions = calloc(l->region_count, sizeof *t->regions);
  t->zeroed = calloc(l->region_count, sizeof *t->zeroed);
  t->buffers = calloc(job->binding_count ? job->binding_count : 1, sizeof *t->buffers);
  int ok = t->regions && t->zeroed && t->buffers;
  for (uint32_t i = 0; ok && i < l->region_count; ++i) {
    if (!l->origin[i]) continue;
    t->zeroed[i] = malloc(l->regions[i].bytes);
    if (t->zeroed[i])
      memcpy(t->zeroed[i], l->origin[i], l->regions[i].bytes);
    else
      ok = 0;
  }
  if (!ok) {
    cubert_cpu_san_private_end(t);
    return 0;
  }
  t->fn = job->kernel->cpu_sanitize_zero;
  aim(t, job, t->zeroed);
  return 1;
}

void cubert_cpu_san_private_end(cubert_cpu_san_twin *t) {
  for (uint32_t i = 0; t->zeroed && i < t->region_count; ++i) free(t->zeroed[i]);
  free(t->zeroed);
  free(t->regions);
  free(t->buffers);
  memset(t, 0, sizeof *t);
}

/* The element's value as its declared type reads: "-1.69e+38", "4278124286 (0xfefefefe)". */
static void value_text(const cubert_kernel_buffer_decl *d, const uint8_t *p, char *out,
                       size_t size) {
  const char *type = d && d->type ? d->type : "";
  const uint32_t bytes = d && d->elem_bytes ? d->elem_bytes : 1;
  uint64_t bits = 0;
  if (bytes == 4 && strstr(type, "float")) {
    float f;
    memcpy(&f, p, sizeof f);
    snprintf(out, size, "%g", (double)f);
  } else if (bytes == 8 && strstr(type, "double")) {
    double f;
    memcpy(&f, p, sizeof f);
    snprintf(out, size, "%g", f);
  } else if (bytes <= sizeof bits) {
    memcpy(&bits, p, bytes); /* little-endian: the low bytes */
    snprintf(out, size, "%" PRIu64 " (0x%" PRIx64 ")", bits, bits);
  } else {
    snprintf(out, size, "another value");
  }
}

/* Byte `k` of region `i` differs: the filled run left `filled`, the zeroed one `zeroed` (both
   copies of the region). Reports it, naming the unit whose write the launch kept there. */
static void report(const cubert_cpu_job *job, const cubert_cpu_ctx *ctx, uint32_t i, uint64_t k,
                   const uint8_t *filled, const uint8_t *zeroed) {
  const cubert_cpu_san_region *r = &job->san_launch->regions[i];
  cubert_cpu_san named = {.job = job};
  const uintptr_t a = r->lo + k;
  const cubert_kernel_signature *sig = job->kernel->signature;
  const uint32_t b = cubert_cpu_san_binding_at(&named, r, a);
  const cubert_kernel_buffer_decl *d = sig && b < sig->buffer_count ? &sig->buffers[b] : NULL;
  const uint64_t elem = d && d->elem_bytes ? d->elem_bytes : 1;
  const uint64_t start = (a - (uintptr_t)job->buffers[b]) / elem * elem +
                         ((uintptr_t)job->buffers[b] - r->lo); /* in the region */
  char element[192], with_fill[64], with_zero[64], what[900];
  cubert_cpu_san_element_name(&named, r, a, element, sizeof element);
  value_text(d, filled + start, with_fill, sizeof with_fill);
  value_text(d, zeroed + start, with_zero, sizeof with_zero);
  const char *file = sig && sig->file ? sig->file : "?", *base = strrchr(file, '/');
  snprintf(what, sizeof what,
           "uninitialised private memory: %s is %s when private variables start as 0xfe bytes "
           "and %s when they start zeroed, so the unit that wrote it read a private variable or "
           "array before writing it (initialise it before the read), in the kernel at "
           "%s:%" PRIu32,
           element, with_fill, with_zero, base ? base + 1 : file, sig ? sig->line : 0);
  uint64_t unit = UINT64_MAX;
  const cubert_cpu_san_access w =
      r->cells ? r->cells[(a - r->lo) >> r->shift].w : (cubert_cpu_san_access){0, 0, 0};
  if (w.epoch) unit = w.unit;
  cubert_cpu_report_sanitizer(ctx, unit, what);
}

/* The zeroed run divided by zero and the filled one, in the same order, did not: the divisor came
   from private memory read before it was written. Named at the division, the first use of the
   value that the check sees. */
static void report_division(const cubert_cpu_ctx *ctx, const cubert_cpu_san_division *d) {
  char what[640];
  snprintf(what, sizeof what,
           "uninitialised private memory: the unit divides by zero at %s:%" PRIu32
           " when private variables start zeroed, and not when they start as 0xfe bytes, so it "
           "read a private variable or array before writing it and the divisor came from there "
           "(initialise it before the read)",
           d->file, d->line);
  cubert_cpu_report_sanitizer(ctx, d->unit, what);
}

int cubert_cpu_san_private_next(cubert_cpu_san_twin *t, cubert_cpu_job *job,
                                const cubert_cpu_ctx *ctx) {
  cubert_cpu_san_launch *l = job->san_launch;
  if (atomic_load_explicit(&l->stopped, memory_order_relaxed)) {
    /* A wild access stopped the run (the launch had none): its output is partial. So is the
       filled run's after it divided by zero too (in this order: not private memory). */
    if (t->pass || !l->division.file) return 0;
    /* The zeroed run divided by zero where the launch did not: the filled copy confirms it in
       the same order, as any other difference. */
    atomic_store_explicit(&l->stopped, 0, memory_order_relaxed);
    t->pass = 2;
    t->fn = job->kernel->cpu_sanitize;
    aim(t, job, l->origin);
    return 1;
  }
  if (t->pass == 2) {
    report_division(ctx, &l->division);
    return 0;
  }
  for (uint32_t i = 0; i < t->region_count; ++i) {
    if (!t->zeroed[i]) continue;
    const uint8_t *now = t->pass ? l->origin[i] : (const uint8_t *)l->regions[i].lo;
    if (!memcmp(now, t->zeroed[i], l->regions[i].bytes)) continue;
    if (!t->pass) {
      /* The filled copy runs on the kept bytes, which it consumes. */
      t->pass = 1;
      t->fn = job->kernel->cpu_sanitize;
      aim(t, job, l->origin);
      return 1;
    }
    uint64_t k = 0;
    while (now[k] == t->zeroed[i][k]) ++k;
    report(job, ctx, i, k, now, t->zeroed[i]);
    return 0;
  }
  return 0;
}
