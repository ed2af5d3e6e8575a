/* cubert CPU server — the kernel sanitizer's state on the thread that runs a launch's chunk
   (sanitize.c; docs/debugging.md). The scheduler sets it up around the chunk's cubes; the
   renamed instrumentation callbacks of the kernel's sanitize copy find it in a thread-local. */
#ifndef CUBERT_CPU_SANITIZE_H
#define CUBERT_CPU_SANITIZE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/san_same.h"
#include "cubert/kernel.h"
#include "cubert/server.h"
#include "cubert/server/sanitizer.h"

struct cubert_cpu_job;
/* Where a unit's call of the sanitize copy began (sanitize.c): the way out when it is stopped. */
typedef struct cubert_cpu_san_frame cubert_cpu_san_frame;

/* Per 4-byte word of shared memory (and, for a word that accesses of fewer bytes or unaligned
   ones reached, per byte of it: sanitize.c): the last writer and up to two readers, with the
   barrier interval (epoch) of each. Epochs only grow on a thread, so an epoch below the cube's
   first one means "not written since the cube started". The readers are the interval's first two
   distinct ones (a later write races with at least one of them unless no other unit read). The
   *_pc fields are where each access is in the code (cubert_cpu_san_pc_pack, san_symbols.h), so
   that a race report names the other access's line. */
typedef struct cubert_cpu_san_shadow {
  uint32_t w_epoch, r_epoch;
  uint16_t w_unit, r_unit, r_unit2;
  uint8_t flags; /* W_ATOMIC, R_ATOMIC, W_SAME, BYTES (sanitize.c) */
  uint8_t pad_;
  uint32_t w_pc, r_pc, r_pc2;
} cubert_cpu_san_shadow;

/* Per element of a buffer a launch may write (san_buffers.c): the last write and two reads,
   each as (epoch, global unit id). Epochs keep 29 bits; the top three say "atomic", "every
   unit of the cube" (a phased kernel outside its PHASEs) and "declared with STORE_SAME" (a
   write). Epoch 0: no such access yet. An
   epoch is compared only with one of the same cube (a cube runs on one thread, whose epochs
   only grow). `pc`: where the access is in the code (cubert_cpu_san_pc_pack, san_symbols.h). */
typedef struct cubert_cpu_san_access {
  uint32_t epoch, unit, pc;
} cubert_cpu_san_access;
/* A cell holds the write; the two reads are a pair of the launch's read pool, taken when the
   cell's first read is recorded (most elements a launch writes it never reads): 16 bytes a
   cell and 32 a pair, powers of two, so neither straddles a page (a cell over two pages
   touched the second by a read first, mapping the zero page, which its write then replaced,
   with a TLB shootdown on every thread of the process). `lock_reads`: bit 0 is the lock, held
   while a participant checks and updates the cell when several run the launch's cubes; the
   other bits are the pair's index + 1 (0: no read recorded). */
typedef struct cubert_cpu_san_cell {
  _Atomic uint32_t lock_reads;
  cubert_cpu_san_access w;
} cubert_cpu_san_cell;
typedef struct cubert_cpu_san_reads {
  cubert_cpu_san_access r1, r2;
  uint32_t pad_[2];
} cubert_cpu_san_reads;

/* A launch's buffer memory as the sanitizer sees it: bindings that overlap are one region. */
typedef struct cubert_cpu_san_region {
  uintptr_t lo;
  uint64_t bytes;
  uint32_t binding; /* the first binding over it: its name and element size name findings */
  uint32_t shift;   /* log2 of the bytes per shadow cell (the smallest element size) */
  int read_only;    /* every binding over it is `const`: no write, so no race, is possible */
  cubert_cpu_san_cell *cells; /* (bytes >> shift) + 1 cells; NULL for read-only regions */
  uint8_t *unwritten;         /* a bit per byte that nothing wrote yet (undefined.h); NULL: none */
} cubert_cpu_san_region;

/* Where a quiet run of the private-memory check stopped at a division by zero (san_private.c):
   the kernel file's base name (NULL: no such stop), the line and the unit. */
typedef struct cubert_cpu_san_division {
  const char *file;
  uint32_t line;
  uint64_t unit;
} cubert_cpu_san_division;

/* What every participant running a sanitized launch's cubes shares (san_buffers.c): the buffer
   shadow is the launch's, so that a race between cubes on different threads is found. Built by
   the first participant to run a chunk, freed when the launch finishes. */
typedef struct cubert_cpu_san_launch {
  uint32_t region_count;
  cubert_cpu_san_region *regions;
  int locked; /* several chunks: cells are updated under their lock */
  /* The read pool (san_buffers.c): blocks of pairs, each made when its first pair is taken. */
  _Atomic(cubert_cpu_san_reads *) *read_blocks;
  uint32_t read_block_count;
  _Atomic uint32_t reads_taken; /* pairs handed out (the pool has room for read_cap) */
  uint32_t read_cap;
  _Atomic uint32_t done;    /* a participant reported: the checks stop on every thread */
  _Atomic uint32_t stopped; /* a wild access: nothing more of the launch runs */
  _Atomic uint32_t atomics; /* an atomic access to a buffer: cubes' order may show in outputs */
  uint8_t **origin; /* per region: its bytes before the launch, NULL when read-only (san_private.c);
                       NULL: no private-memory check */
  cubert_cpu_san_division division; /* a quiet run's division by zero (san_private.c) ... */
  _Atomic uint32_t division_taken;  /* ... written by the participant that set this first */
} cubert_cpu_san_launch;

typedef struct cubert_cpu_san {
  const struct cubert_cpu_job *job;
  const cubert_cpu_ctx *ctx; /* the running unit's (or cube's) context, for reports */
  int fibers, phased, unit_form;
  int done;          /* reported (the launch keeps its first report): checks stop */
  int stopped;       /* a wild access: nothing more of the launch runs (sanitize.c) */
  uintptr_t lo;      /* shared memory [lo, lo + bytes) ... */
  uint64_t bytes;    /* ... of the kernel's declared size */
  uintptr_t zone_lo; /* with its redzones [zone_lo, zone_lo + zone_bytes) */
  uint64_t zone_bytes;
  uint64_t cube_first;  /* global id of the cube's first unit */
  uint64_t unit_global; /* unit kernels: the running unit */
  uint32_t units;       /* per cube */
  uint32_t unit;        /* the running unit's linear position; CUBERT_CPU_SAN_ALL: the cube */
  uint32_t epoch, base, next;
  uint32_t line;         /* phased: the PHASE running (or the barrier that began the interval) */
  uint32_t in_phase;     /* phased: inside a PHASE block */
  uint32_t *syncs;       /* fibers: barriers passed per unit */
  uint32_t *lines;       /* fibers: the line of each unit's last barrier (0: none yet) */
  uint8_t *returned;     /* fibers: the unit's call returned (a barrier it skipped is divergence) */
  uint32_t returned_min; /* fibers: the fewest barriers a returned unit passed (UINT32_MAX: none) */
  uint64_t word_bytes;   /* the bytes of the shared memory's whole words (a multiple of 4) */
  cubert_cpu_san_shadow *words;  /* a record per word, the last one partial */
  cubert_cpu_san_shadow *shadow; /* a record per byte, used for the words flagged BYTES */
  int bytes_used;                /* some word of the cube is flagged BYTES */
  const uint16_t *order;         /* CUBERT_VALIDATE_SEED: the units of a PHASE, in order */
  cubert_cpu_san_launch *launch; /* the launch's buffer memory (san_buffers.c) */
  uint32_t region_count;         /* its regions, copied for the callbacks' fast path */
  cubert_cpu_san_region *regions;
  /* The running unit's call: its way out, and its private memory, which is its stack from the
     instrumentation callback's frame up to stack_hi (the frame that made the call). */
  cubert_cpu_san_frame *frame;
  uintptr_t stack_hi;
  cubert_cpu_san_frame **frames; /* fibers: each unit's call (a unit resumes at a barrier) */
  uintptr_t image_lo, image_hi;  /* the kernel's module image (its static data), once looked up */
  uintptr_t pc_base;             /* the kernel's sanitize entry: code addresses are kept from it */
  cubert_cpu_san_pending
      pending; /* a write-after-write race decided after its store (san_same.c) */
  int image_known;
} cubert_cpu_san;

#define CUBERT_CPU_SAN_ALL 0xffffu

/* True when `job` runs sanitized: validate mode, a kernel with a sanitize copy, the sanitizer
   on (CUBERT_SANITIZER). */
int cubert_cpu_san_wanted(const struct cubert_cpu_job *job);
/* Bytes of redzone on each side of a cube's `shared_bytes` of shared memory. */
uint64_t cubert_cpu_san_redzone(uint64_t shared_bytes);
/* Starts sanitizing on this thread: `shared` (NULL for none) is the kernel's shared memory with
   cubert_cpu_san_redzone bytes on each side. Returns 0 without memory for the shadow (the chunk
   then runs unsanitized). */
int cubert_cpu_san_begin(cubert_cpu_san *s, struct cubert_cpu_job *job, void *shared,
                         uint64_t shared_bytes, uint32_t units, int fibers);
/* A new cube, whose first unit is `first_unit`: a new barrier interval, nothing written.
   `order` (NULL: ascending) is the order its PHASE loops run its units in. */
void cubert_cpu_san_cube(cubert_cpu_san *s, uint64_t first_unit, const uint16_t *order);
/* Makes the sanitizer on this thread quiet for a run of the private-memory check (san_private.c):
   no checks, no reports, the launch's buffers at `regions` (copies); a wild access still stops
   the run before it happens. */
void cubert_cpu_san_quiet(cubert_cpu_san *s, cubert_cpu_san_region *regions);
/* Stops sanitizing on this thread and frees the shadow. */
void cubert_cpu_san_end(cubert_cpu_san *s);
/* True when a wild access on any thread stopped the launch: no more of its cubes run. */
int cubert_cpu_san_stopped(const cubert_cpu_san *s);

/* ---- for san_buffers.c ---- */

/* The running unit's global id (the cube's first unit outside a PHASE). */
uint64_t cubert_cpu_san_unit_id(const cubert_cpu_san *s);
/* "at bugs.cube.c:89 (after the barrier at bugs.cube.c:87)": where the running unit's access at
   code address `pc` is (san_symbols.h), and the barrier or PHASE its interval began at. */
void cubert_cpu_san_place(const cubert_cpu_san *s, const void *pc, char *out, size_t size);
/* "at bugs.cube.c:85" for a recorded access (`packed`, cubert_cpu_san_pc_pack from
   s->pc_base); "" when none was recorded. */
void cubert_cpu_san_other_place(const cubert_cpu_san *s, uint32_t packed, char *out, size_t size);
/* Makes `what` the launch's finding; checks stop. */
void cubert_cpu_san_report(cubert_cpu_san *s, const char *what);
/* "<kind> on shared memory byte <offset> (of N): unit (x, y, z) <other_did> it at <line> in the
   same barrier interval; this write is <place>": a write's race with unit `other` of the cube,
   whose access is at `other_pc` (packed). */
void cubert_cpu_san_shared_race(cubert_cpu_san *s, const char *kind, uint64_t offset,
                                uint32_t other, const char *other_did, uint32_t other_pc,
                                const void *pc);

#endif /* CUBERT_CPU_SANITIZE_H */
