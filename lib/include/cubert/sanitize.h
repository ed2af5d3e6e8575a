/** @file
   cubert — the kernel sanitizer's entry points for kernel-language code (cubert/cube.h calls
   them in the copy of a kernel file built with CUBERT_CUBE_SANITIZE; never called by hand).

   In validate mode the CPU server runs that copy, compiled with GCC's -fsanitize=thread and
   -fsanitize=bounds-strict: every memory access calls the server (the instrumentation's
   __tsan_* and __ubsan_* callbacks, renamed cubert_san_* in the object by the build), which
   keeps a shadow of the running cube's shared memory (per byte: the unit that last wrote it and
   the units that read it, in which barrier interval) and reports data races, reads of shared
   memory nobody wrote, indices past the shared memory and past private arrays, integer
   divisions by zero and wild pointers, whose access (or division) it never lets happen: it leaves
   the unit's call and stops the launch
   (docs/debugging.md). These functions tell it where the kernel is. Outside a sanitized launch
   they do nothing. */
#ifndef CUBERT_SANITIZE_H
#define CUBERT_SANITIZE_H

#include <stdint.h>

#include "cubert/kernel.h"

CUBERT_EXTERN_C_BEGIN

/** Runs CPU function `fn` (the sanitize copy's body) for `ctx`, telling the sanitizer which unit
   runs: the fiber's unit (CUBERT_KERNEL_SYNC_CUBE), the whole cube (CUBERT_KERNEL_PHASED), or
   the call's units (unit kernels: `fn` runs them in one loop, calling cubert_san_unit before
   each). A wild access returns here early; after it, every call of the launch returns at once. */
CUBERT_API void cubert_san_run(const cubert_cpu_ctx *ctx, cubert_cpu_kernel_fn fn, uint32_t flags);
/** A unit kernel's unit `id` (global) starts: no barrier orders it with the units before it. */
CUBERT_API void cubert_san_unit(uint64_t id);
/** SYNC_CUBE() at source line `line`: the unit (or, in a phased kernel, the cube) leaves its
   barrier interval; cubert_san_resume follows once the barrier returned. */
CUBERT_API void cubert_san_barrier(const cubert_cpu_ctx *ctx, uint32_t line);
/** After SYNC_CUBE() returned: the unit (or cube) starts its next barrier interval; when a wild
   access of another unit stopped the launch meanwhile, the unit's call returns from here. */
CUBERT_API void cubert_san_resume(const cubert_cpu_ctx *ctx);
/** A PHASE block at source line `line` begins and ends; cubert_san_phase_unit(u) starts unit u
   (linear position in the cube) inside it and returns 1. */
CUBERT_API void cubert_san_phase_begin(uint32_t line);
/** The PHASE block begun last ends. */
CUBERT_API void cubert_san_phase_end(void);
/** Unit `unit` (linear position in the cube) runs next inside the current PHASE; returns 1. */
CUBERT_API int cubert_san_phase_unit(uint32_t unit);
/** The linear position of the unit that runs `k`-th in each PHASE of the running cube: `k`
   itself, or with CUBERT_VALIDATE_SEED the seeded order's k-th unit. */
CUBERT_API uint32_t cubert_san_phase_order(uint32_t k);

/** STORE_SAME or SHARED_STORE_SAME: stores the `size` bytes at `value` to `p`, a store that
   other units of the launch may make with the same value; the sanitizer reports it only if the
   values differ, or if another unit's store there was not declared so. */
CUBERT_API void cubert_san_store_same(volatile void *p, const void *value, uint32_t size);

CUBERT_EXTERN_C_END

#endif /* CUBERT_SANITIZE_H */
