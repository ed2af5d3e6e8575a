/* cubert CPU server — the kernel sanitizer's race check on buffers (validate mode;
   docs/debugging.md).

   A GPU runs the cubes of a launch in any order and at once, and the units of a cube in any
   order between two barriers; so two units that access one buffer element in the same launch,
   at least one writing and not both atomically, race unless they are units of one cube with a
   barrier between the accesses. Per element of each buffer the launch may write the shadow
   keeps the last write and two reads, each as (epoch, global unit id). An access of another
   cube (the unit id says which) is unordered whatever its epoch: a race if the kinds conflict.
   One of the same cube ran on this thread (a cube never leaves its participant), whose epochs
   only grow: each cube (and each unit of a unit kernel) starts a new one, each barrier interval
   of a cube another, so it is unordered only when it is in the same interval.

   A cell is 16 bytes: the write, and the index of the cell's read pair in the launch's read
   pool, taken at its first recorded read (sanitize.h). An output written once and never read
   costs 16 bytes an element, and the cells' pages are first touched by a write.

   The cubes run on every participant at once, against this one launch-wide shadow. Why that
   still finds every race between cubes that one thread finds: a cell is checked and updated
   under its own lock (when the launch has several chunks), so the checks of one cell happen in
   some order, one at a time, exactly as if one thread had run the accesses in that order; and
   since accesses of different cubes are unordered whatever their order, the detection of a
   conflict between two cubes does not depend on which ran first (only which of the two the
   report names first does). Accesses of one cube are checked in program order, as before.
   Only the pair named changes: the launch keeps the first report. Launches smaller than
   CUBERT_CPU_MIN_CHUNK_UNITS units are one chunk (scheduler.c): they run as before, on one
   thread, in cube order, with no locking.

   Buffers the kernel declares `const` cannot be written through, so when no other binding of
   the launch overlaps them they get no shadow at all: the large inputs of matmul, reductions
   and softmax cost one range test per load. A write after another unit's write is told apart by
   the values (san_same.c): the same value is a same-value race, allowed where both stores were
   declared with STORE_SAME, whose value is compared and stored under the cell's lock. */
#include "cpu/san_buffers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/san_private.h"
#include "cpu/san_same.h"
#include "cpu/san_symbols.h"
#include "cpu/sanitize.h"
#include "cpu/server.h"
#include "cubert/config.h"
#include "cubert/server/sanitizer.h"

#define EPOCH_BITS 0x1fffffffu
#define F_SAME 0x20000000u /* a write declared with STORE_SAME */
#define F_ATOMIC 0x40000000u
#define F_ALL 0x80000000u /* every unit of the cube (a phased kernel outside its PHASEs) */

static int is_const(const char *type) {
  return type && strncmp(type, "const", 5) == 0 && (type[5] == ' ' || type[5] == '\0');
}

static uint32_t log2_floor(uint32_t v) {
  uint32_t s = 0;
  while (v > 1 && (v & 1) == 0) v >>= 1, ++s;
  return s; /* a size that is no power of two gets its lowest bit's cells */
}

static int cmp_lo(const void *a, const void *b) {
  const cubert_cpu_san_region *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The launch's buffers as regions, bindings over the same memory merged (the finest cells,
   written if any is); returns the count. */
static uint32_t build_regions(const cubert_cpu_job *job, cubert_cpu_san_region *regions) {
  const cubert_kernel_signature *sig = job->kernel->signature;
  uint32_t count = 0;
  for (uint32_t i = 0; i < job->binding_count; ++i) {
    if (!job->buffers[i] || !job->buffer_bytes[i]) continue;
    const cubert_kernel_buffer_decl *d = sig && i < sig->buffer_count ? &sig->buffers[i] : NULL;
    regions[count++] = (cubert_cpu_san_region){
        .lo = (uintptr_t)job->buffers[i],
        .bytes = job->buffer_bytes[i],
        .binding = i,
        .shift = log2_floor(d && d->elem_bytes ? d->elem_bytes : 1),
        .read_only = d && is_const(d->type),
    };
  }
  qsort(regions, count, sizeof *regions, cmp_lo);
  uint32_t out = 0;
  for (uint32_t i = 0; i < count; ++i) {
    cubert_cpu_san_region *r = &regions[i];
    cubert_cpu_san_region *last = out ? &regions[out - 1] : NULL;
    if (last && r->lo < last->lo + last->bytes) {
      uint64_t end =
          r->lo + r->bytes > last->lo + last->bytes ? r->lo + r->bytes - last->lo : last->bytes;
      last->bytes = end;
      if (r->shift < last->shift) last->shift = r->shift;
      last->read_only = last->read_only && r->read_only;
      if (r->binding < last->binding) last->binding = r->binding;
      continue;
    }
    regions[out++] = *r;
  }
  return out;
}

/* Pairs a read pool block holds (32 bytes each: 2 MiB). */
#define READ_BLOCK_PAIRS (1u << 16)
/* Pair indices keep 31 bits in a cell (sanitize.h). */
#define READ_CAP 0x7ffffffeu

static void launch_free(cubert_cpu_san_launch *l) {
  cubert_cpu_san_private_free(l);
  for (uint32_t i = 0; i < l->region_count; ++i) {
    free(l->regions[i].cells);
    free(l->regions[i].unwritten);
  }
  for (uint32_t b = 0; b < l->read_block_count; ++b)
    free(atomic_load_explicit(&l->read_blocks[b], memory_order_relaxed));
  free((void *)l->read_blocks);
  free(l->regions);
  free(l);
}

/* A read pool of a pair per cell of `cells`, up to READ_CAP pairs: only the block table now.
   Returns 0 without memory. */
static int reads_build(cubert_cpu_san_launch *l, uint64_t cells) {
  l->read_cap = cells < READ_CAP ? (uint32_t)cells : READ_CAP;
  l->read_block_count =
      (uint32_t)(((uint64_t)l->read_cap + READ_BLOCK_PAIRS - 1) / READ_BLOCK_PAIRS);
  if (!l->read_block_count) return 1;
  l->read_blocks = calloc(l->read_block_count, sizeof *l->read_blocks);
  return l->read_blocks != NULL;
}

/* Pair `k` of the launch's read pool (taken). */
static cubert_cpu_san_reads *pair_at(const cubert_cpu_san_launch *l, uint32_t k) {
  return atomic_load_explicit(&l->read_blocks[k / READ_BLOCK_PAIRS], memory_order_acquire) +
         k % READ_BLOCK_PAIRS;
}

/* Takes a zeroed pair of the read pool, its index in *out; NULL when the pool is spent or its
   block could not be made (the read then goes unrecorded: a race with it may be missed, none is
   ever invented). Thread-safe: the participant that needs a block first makes it. */
static cubert_cpu_san_reads *pair_take(cubert_cpu_san_launch *l, uint32_t *out) {
  const uint32_t k = atomic_fetch_add_explicit(&l->reads_taken, 1, memory_order_relaxed);
  if (k >= l->read_cap) {
    atomic_store_explicit(&l->reads_taken, l->read_cap, memory_order_relaxed);
    return NULL;
  }
  _Atomic(cubert_cpu_san_reads *) *slot = &l->read_blocks[k / READ_BLOCK_PAIRS];
  cubert_cpu_san_reads *block = atomic_load_explicit(slot, memory_order_acquire);
  if (!block) {
    cubert_cpu_san_reads *made = calloc(READ_BLOCK_PAIRS, sizeof *made);
    if (!made) return NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &block, made, memory_order_acq_rel,
                                                memory_order_acquire))
      block = made;
    else
      free(made); /* another participant made it first: block is its */
  }
  *out = k;
  return block + k % READ_BLOCK_PAIRS;
}

static cubert_cpu_san_launch *launch_build(const cubert_cpu_job *job) {
  cubert_cpu_san_launch *l = calloc(1, sizeof *l);
  uint32_t n = job->binding_count;
  if (!l) return NULL;
  l->regions = n ? calloc(n, sizeof *l->regions) : NULL;
  if (n && !l->regions) {
    free(l);
    return NULL;
  }
  l->region_count = build_regions(job, l->regions);
  l->locked = job->item_count > job->chunk_items;
  cubert_cpu_undefined *undefined = &job->stream->device->undefined;
  uint64_t cells = 0;
  for (uint32_t i = 0; i < l->region_count; ++i) {
    cubert_cpu_san_region *r = &l->regions[i];
    if (atomic_load_explicit(&undefined->nonempty, memory_order_relaxed)) {
      /* Without memory for the bitmap the region's unwritten bytes go unchecked (never a false
         report); they stay unwritten in the set. */
      r->unwritten = calloc((r->bytes + 7) / 8, 1);
      if (r->unwritten && !cubert_cpu_undefined_load(undefined, r->lo, r->bytes, r->unwritten)) {
        free(r->unwritten);
        r->unwritten = NULL;
      }
    }
    if (r->read_only) continue;
    /* calloc of this size maps zero pages: only the cells a launch touches cost memory. */
    r->cells = calloc((r->bytes >> r->shift) + 1, sizeof *r->cells);
    if (!r->cells) {
      launch_free(l);
      return NULL;
    }
    cells += (r->bytes >> r->shift) + 1;
  }
  if (!reads_build(l, cells)) {
    launch_free(l);
    return NULL;
  }
  cubert_cpu_san_private_keep(l, job);
  return l;
}

enum { LAUNCH_NONE, LAUNCH_BUILDING, LAUNCH_READY, LAUNCH_FAILED };

cubert_cpu_san_launch *cubert_cpu_san_launch_join(cubert_cpu_job *job) {
  uint32_t state = LAUNCH_NONE;
  if (atomic_compare_exchange_strong_explicit(&job->san_state, &state, LAUNCH_BUILDING,
                                              memory_order_acquire, memory_order_acquire)) {
    job->san_launch = launch_build(job);
    atomic_store_explicit(&job->san_state, job->san_launch ? LAUNCH_READY : LAUNCH_FAILED,
                          memory_order_release);
    return job->san_launch;
  }
  /* Another participant builds it: a few allocations, then its cubes run here too. */
  while ((state = atomic_load_explicit(&job->san_state, memory_order_acquire)) == LAUNCH_BUILDING)
    sched_yield();
  return state == LAUNCH_READY ? job->san_launch : NULL;
}

void cubert_cpu_san_launch_finish(cubert_cpu_job *job) {
  cubert_cpu_san_launch *l = job->san_launch;
  atomic_store_explicit(&job->san_state, LAUNCH_NONE, memory_order_relaxed);
  job->san_launch = NULL;
  if (!l) return;
  cubert_cpu_undefined *undefined = &job->stream->device->undefined;
  const int done = atomic_load_explicit(&l->done, memory_order_relaxed) != 0;
  for (uint32_t i = 0; i < l->region_count; ++i) {
    cubert_cpu_san_region *r = &l->regions[i];
    if (!r->unwritten) continue;
    /* After a report the checks stopped, so its later writes are unknown: what the launch could
       write counts as written (no second report about a byte it may have filled). */
    if (done && !r->read_only)
      cubert_cpu_undefined_remove(undefined, r->lo, r->bytes);
    else
      cubert_cpu_undefined_store(undefined, r->lo, r->bytes, r->unwritten);
  }
  launch_free(l);
}

/* ---- what the core and unwatched launches tell ------------------------------------------- */

static void mark_undefined(cubert_server *server, const cubert_binding *binding) {
  if (!cubert_config_get()->sanitizer) return;
  void *p = cubert_binding_host_ptr(binding);
  if (p)
    cubert_cpu_undefined_add(&cubert_cpu_device_of(server)->undefined, (uintptr_t)p, binding->size);
}

const cubert_server_sanitizer cubert_cpu_sanitizer_table = {
    .mark_undefined = mark_undefined,
};

void cubert_cpu_san_launch_wrote(const cubert_cpu_job *job) {
  const cubert_kernel_signature *sig = job->kernel->signature;
  cubert_cpu_undefined *undefined = &job->stream->device->undefined;
  for (uint32_t i = 0; i < job->binding_count; ++i) {
    const cubert_kernel_buffer_decl *d = sig && i < sig->buffer_count ? &sig->buffers[i] : NULL;
    if (job->buffers[i] && !(d && is_const(d->type)))
      cubert_cpu_undefined_remove(undefined, (uintptr_t)job->buffers[i], job->buffer_bytes[i]);
  }
}

/* ---- reports ------------------------------------------------------------------------------ */

uint32_t cubert_cpu_san_binding_at(const cubert_cpu_san *s, const cubert_cpu_san_region *r,
                                   uintptr_t a) {
  const cubert_cpu_job *job = s->job;
  for (uint32_t k = 0; k <= job->binding_count; ++k) {
    uint32_t b = k == 0 ? r->binding : k - 1;
    if (b < job->binding_count && job->buffers[b] &&
        a - (uintptr_t)job->buffers[b] < job->buffer_bytes[b])
      return b;
  }
  return r->binding;
}

void cubert_cpu_san_element_name(const cubert_cpu_san *s, const cubert_cpu_san_region *r,
                                 uintptr_t a, char *out, size_t size) {
  const cubert_kernel_signature *sig = s->job->kernel->signature;
  const uint32_t b = cubert_cpu_san_binding_at(s, r, a);
  const char *name = sig && b < sig->buffer_count ? sig->buffers[b].name : NULL;
  uint64_t elem =
      sig && b < sig->buffer_count && sig->buffers[b].elem_bytes ? sig->buffers[b].elem_bytes : 1;
  uint64_t off = a - (uintptr_t)s->job->buffers[b];
  snprintf(out, size, "buffer %" PRIu32 " '%s' element %" PRIu64 " (of %" PRIu64 ")", b,
           name ? name : "?", off / elem, s->job->buffer_bytes[b] / elem);
}

/* "unit (x, y, z) of cube (a, b, c)" for a recorded access. */
static void side_name(const cubert_cpu_san *s, cubert_cpu_san_access a, char *out, size_t size) {
  uint32_t c[3], u[3];
  cubert_cpu_cube_pos(s->ctx, a.unit, c);
  cubert_cpu_unit_pos(s->ctx, a.unit, u);
  if (a.epoch & F_ALL)
    snprintf(out, size,
             "every unit (outside a PHASE) of cube (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")", c[0],
             c[1], c[2]);
  else
    snprintf(out, size,
             "unit (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ") of cube (%" PRIu32 ", %" PRIu32
             ", %" PRIu32 ")",
             u[0], u[1], u[2], c[0], c[1], c[2]);
}

void cubert_cpu_san_buffer_race(cubert_cpu_san *s, const cubert_cpu_san_region *r, uintptr_t a,
                                const char *kind, cubert_cpu_san_access other,
                                const char *other_did, int write, const void *pc) {
  char element[192], them[96], there[280], where[400], what[1024];
  cubert_cpu_san_element_name(s, r, a, element, sizeof element);
  side_name(s, other, them, sizeof them);
  cubert_cpu_san_other_place(s, other.pc, there, sizeof there);
  cubert_cpu_san_place(s, pc, where, sizeof where);
  snprintf(what, sizeof what, "%s on %s: %s %s it%s in the same launch; this %s is %s", kind,
           element, them, other_did, there, write ? "write" : "read", where);
  cubert_cpu_san_report(s, what);
}

static void report_unwritten(cubert_cpu_san *s, const cubert_cpu_san_region *r, uintptr_t a,
                             const void *pc) {
  char element[192], where[400], what[900];
  cubert_cpu_san_element_name(s, r, a, element, sizeof element);
  cubert_cpu_san_place(s, pc, where, sizeof where);
  snprintf(what, sizeof what,
           "uninitialised buffer memory: read of %s, which nothing wrote since "
           "cubert_client_empty made it (no write, launch or copy filled it), %s",
           element, where);
  cubert_cpu_san_report(s, what);
}

/* Checks a read of [a, a + size) against the region's unwritten bytes, or marks a write's
   bytes written. Returns 0 after a report. The bits are shared by the launch's participants:
   read and cleared atomically, since neighbouring bytes may be other cubes'. */
static int check_unwritten(cubert_cpu_san *s, cubert_cpu_san_region *r, uintptr_t a, uint64_t size,
                           int write, const void *pc) {
  uint64_t from = a - r->lo, to = from + size > r->bytes ? r->bytes : from + size;
  uint8_t *bits = r->unwritten;
  for (uint64_t i = from; i < to; ++i) {
    if (!(__atomic_load_n(&bits[i >> 3], __ATOMIC_RELAXED) >> (i & 7) & 1)) continue;
    if (!write) {
      report_unwritten(s, r, r->lo + i, pc);
      return 0;
    }
    __atomic_fetch_and(&bits[i >> 3], (uint8_t) ~(1u << (i & 7)), __ATOMIC_RELAXED);
  }
  return 1;
}

/* ---- the check ---------------------------------------------------------------------------- */

/* Whether recorded access `x` may happen at the same time as the running unit's (`me`). */
static int unordered(const cubert_cpu_san *s, cubert_cpu_san_access x, cubert_cpu_san_access me) {
  if (!x.epoch) return 0;
  /* Another cube's (another unit's of a unit kernel): cubes are never ordered. */
  if (s->unit_form ? x.unit != me.unit : (uint32_t)(x.unit - (uint32_t)s->cube_first) >= s->units)
    return 1;
  /* This cube's: unordered only in the same barrier interval, by another unit. */
  if ((x.epoch ^ me.epoch) & EPOCH_BITS) return 0;
  if ((x.epoch | me.epoch) & F_ALL) return 0; /* as on shared memory: no finding alone */
  return x.unit != me.unit;
}

static int both_atomic(cubert_cpu_san_access x, cubert_cpu_san_access me) {
  return (x.epoch & me.epoch & F_ATOMIC) != 0;
}

static const char war_kind[] = "data race (write after read)";
static const char waw_kind[] = "data race (write after write)";

static void cell_lock(cubert_cpu_san_cell *c) {
  while (atomic_fetch_or_explicit(&c->lock_reads, 1u, memory_order_acquire) & 1u)
    while (atomic_load_explicit(&c->lock_reads, memory_order_relaxed) & 1u) cubert_cpu_relax();
}

/* Only the holder changes the word: the pair index it may have set stays. */
static void cell_unlock(cubert_cpu_san_cell *c) {
  atomic_store_explicit(&c->lock_reads,
                        atomic_load_explicit(&c->lock_reads, memory_order_relaxed) & ~1u,
                        memory_order_release);
}

/* Checks `me`'s access of cell `c` and records it. `same`: a declared write (STORE_SAME) of the
   value the memory holds, which another declared write may have made. Returns the kind of race
   found (war_kind: the other side read), with the other side in *out_other, or NULL. Under the
   cell's lock when the launch has one. */
static const char *cell_access(const cubert_cpu_san *s, cubert_cpu_san_cell *c, int write, int same,
                               cubert_cpu_san_access me, cubert_cpu_san_access *out_other) {
  if (unordered(s, c->w, me) && !both_atomic(c->w, me) && !(same && (c->w.epoch & F_SAME))) {
    *out_other = c->w;
    return write ? waw_kind : "data race (read after write)";
  }
  const uint32_t word = atomic_load_explicit(&c->lock_reads, memory_order_relaxed);
  cubert_cpu_san_reads *rd = word >> 1 ? pair_at(s->launch, (word >> 1) - 1) : NULL;
  if (!write) {
    uint32_t k;
    if (!rd && (rd = pair_take(s->launch, &k)) != NULL)
      atomic_store_explicit(&c->lock_reads, (word & 1u) | (k + 1) << 1, memory_order_relaxed);
    if (!rd) return NULL; /* the pool is spent: this read goes unrecorded */
    /* Keep two reads that may still race with a later write: replace one of this unit's, or
       one ordered before this read, else the second. */
    if (!unordered(s, rd->r1, me) || rd->r1.unit == me.unit)
      rd->r1 = me;
    else
      rd->r2 = me;
    return NULL;
  }
  for (int k = 0; rd && k < 2; ++k) {
    cubert_cpu_san_access r = k ? rd->r2 : rd->r1;
    if (unordered(s, r, me) && !both_atomic(r, me)) {
      *out_other = r;
      return war_kind;
    }
  }
  c->w = me;
  return NULL;
}

/* A write-after-write race `other` found at cell `i` of region `r`: a declared store (`value`)
   is named by the values at once, a plain one waits for its value (san_same.c) when it can.
   Returns 1 when the race was reported or left pending. */
static int write_race(cubert_cpu_san *s, const cubert_cpu_san_region *r, uintptr_t a, uint64_t size,
                      uintptr_t at, const void *value, cubert_cpu_san_access other, int same,
                      const void *pc) {
  const char *did = "wrote", *kind = waw_kind;
  if (value) {
    kind = cubert_cpu_san_same_kind(same, (other.epoch & F_SAME) != 0, &did);
  } else {
    const cubert_cpu_san_pending race = {.addr = a,
                                         .size = (uint32_t)size,
                                         .region = r,
                                         .at = at,
                                         .other_epoch = other.epoch,
                                         .other_unit = other.unit,
                                         .other_pc = other.pc,
                                         .pc = pc};
    if (cubert_cpu_san_same_defer(s, &race)) return 1;
  }
  cubert_cpu_san_buffer_race(s, r, at, kind, other, did, 1, pc);
  return 1;
}

void cubert_cpu_san_buffer_access(cubert_cpu_san *s, cubert_cpu_san_region *r, uintptr_t a,
                                  uint64_t size, int write, int atomic, const void *value,
                                  const void *pc) {
  if (!size) return;
  if (atomic && !atomic_load_explicit(&s->launch->atomics, memory_order_relaxed))
    atomic_store_explicit(&s->launch->atomics, 1, memory_order_relaxed);
  if (r->unwritten && !check_unwritten(s, r, a, size, write, pc)) return;
  if (!r->cells) return;
  const uint64_t first = (a - r->lo) >> r->shift;
  uint64_t last = (a + size - 1 - r->lo) >> r->shift;
  if (last > r->bytes >> r->shift) last = r->bytes >> r->shift;
  const int all = !s->unit_form && s->unit == CUBERT_CPU_SAN_ALL;
  const cubert_cpu_san_access me = {
      .epoch = s->epoch | (atomic ? F_ATOMIC : 0) | (all ? F_ALL : 0) | (value ? F_SAME : 0),
      .unit = (uint32_t)cubert_cpu_san_unit_id(s),
      .pc = cubert_cpu_san_pc_pack(pc, s->pc_base),
  };
  const int locked = s->launch->locked;
  /* A declared store compares and stores its value under its first cell's lock, so that the
     next declared store there finds it in memory. */
  if (value && locked) cell_lock(&r->cells[first]);
  const int same = value && cubert_cpu_san_equal_relaxed((const void *)a, value, (uint32_t)size);
  const char *race = NULL;
  cubert_cpu_san_access other;
  uint64_t i = first;
  for (; i <= last && !race; ++i) {
    cubert_cpu_san_cell *c = &r->cells[i];
    const int lock = locked && !(value && i == first);
    if (lock) cell_lock(c);
    race = cell_access(s, c, write, same, me, &other);
    if (lock) cell_unlock(c);
  }
  if (value) cubert_cpu_san_store_relaxed((void *)a, value, size);
  if (value && locked) cell_unlock(&r->cells[first]);
  if (!race) return;
  const uintptr_t at = r->lo + ((i - 1) << r->shift) > a ? r->lo + ((i - 1) << r->shift) : a;
  if (race == waw_kind) {
    write_race(s, r, a, size, at, value, other, same, pc);
    return;
  }
  cubert_cpu_san_buffer_race(s, r, at, race, other, race == war_kind ? "read" : "wrote", write, pc);
}
