/* cubert CPU server — the kernel sanitizer's source lines (san_symbols.c): the kernel file:line
   of a code address of a kernel's sanitize copy, read in-process from the line tables that copy
   always carries (cmake/CubertKernels.cmake compiles it with -g1 in every build type) through
   elfutils' libdw. Without libdw at configure time the text is the code address as
   module+offset, with the reason. Called only when a report is written, never per access. */
#ifndef CUBERT_CPU_SAN_SYMBOLS_H
#define CUBERT_CPU_SAN_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* Writes where the code at `pc` is to `out` (`size` bytes, NUL-terminated):
   "bugs.cube.c:89", the basename and line of the innermost source position of `pc` in a file
   named like `kernel_file` (a path or basename; NULL: any file), walking out through inlined
   helpers (cubert/cube.h's accessors, the kernel's CUBE_FN helpers inlined into it) to their
   call site in the kernel file; the innermost position when no frame is in that file. `pc` is a
   return address (the instruction after a call): the call itself is what is looked up.
   Without a line: "module+0xoffset (no line: <why>)", for addr2line -e module offset. Returns 1
   when a line was found, 0 otherwise. Thread-safe (one lock; results are cached per address, so a
   second report at the same code reads no debug information). */
int cubert_cpu_san_symbols_where(const void *pc, const char *kernel_file, char *out, size_t size);

/* A code address in 32 bits, for the shadow records: its distance from `base` (the kernel's
   sanitize entry: every instrumented access of a kernel lies in the object file of its sanitize
   copy, well within 2 GiB of it). 0 means "none". */
static inline uint32_t cubert_cpu_san_pc_pack(const void *pc, uintptr_t base) {
  return (uint32_t)((uintptr_t)pc - base);
}
static inline const void *cubert_cpu_san_pc_unpack(uint32_t packed, uintptr_t base) {
  return packed ? (const void *)(base + (uintptr_t)(intptr_t)(int32_t)packed) : NULL;
}

#endif /* CUBERT_CPU_SAN_SYMBOLS_H */
