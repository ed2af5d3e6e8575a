/** @file
   cubert — what a checked or validated launch reports when a kernel breaks the rules, as both
   servers word it (lib/kernel_check.c). */
#ifndef CUBERT_SERVER_VIOLATION_H
#define CUBERT_SERVER_VIOLATION_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/kernel.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A violation seen by a kernel in validate mode, as both servers report it. */
typedef enum cubert_violation_kind {
  CUBERT_VIOLATION_BUFFER = 1,  /**< element `index` of buffer `buffer`, which holds `length` */
  CUBERT_VIOLATION_INFO = 2,    /**< info word `index` of `length` */
  CUBERT_VIOLATION_BARRIER = 3, /**< `what` at source line `line` */
  CUBERT_VIOLATION_SANITIZER =
      4, /**< the kernel sanitizer's finding `what` (names its own lines) */
  CUBERT_VIOLATION_INFO_LIMIT =
      5, /**< info word `buffer` holds `index`, above the kernel's limit `length` */
} cubert_violation_kind;
/** One violation, with what its kind names. */
typedef struct cubert_kernel_violation {
  cubert_violation_kind kind; /**< what was violated */
  uint32_t buffer;            /**< BUFFER: the buffer's index */
  int has_unit;               /**< unit/cube are known */
  uint32_t unit[3];           /**< the unit's position in its cube */
  uint32_t cube[3];           /**< the cube's position */
  uint64_t index;             /**< BUFFER, INFO: the element or word accessed */
  uint64_t length;            /**< BUFFER, INFO: elements or words there are */
  uint32_t line;              /**< BARRIER: the source line */
  const char *what;           /**< BARRIER, SANITIZER: what was wrong; BUFFER, INFO: where the
                                   access is ("file:line"), or NULL when not known */
} cubert_kernel_violation;
/** The error for `v` in kernel `kernel` (GENERIC), naming the kernel, the buffer (index, name and
   type from the signature when there is one), the unit and cube position, the index and the
   length. */
cubert_status cubert_kernel_violation_status(const cubert_kernel_def *kernel,
                                             const cubert_kernel_violation *v);
/** The mode a launch asked for, after CUBERT_CHECK_MODE (enforce: at least checked; validate:
   every launch validates). */
cubert_execution_mode cubert_kernel_effective_mode(cubert_execution_mode requested);

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_VIOLATION_H */
