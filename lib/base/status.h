/* cubert base — building errors: numbers, build logs, causes and merged lists on a
   cubert_status (status.c). Used by the core and the backends; the public half (make, read,
   free) is cubert/status.h. */
#ifndef CUBERT_BASE_STATUS_H
#define CUBERT_BASE_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** @{ */
/** Attaches numbers / build log / cause. Each returns `status` for chaining; NULL-safe. */
cubert_status cubert_status_set_limits(cubert_status status, uint64_t requested, uint64_t max);
cubert_status cubert_status_set_size(cubert_status status, uint64_t size);
cubert_status cubert_status_set_dims(cubert_status status, const uint32_t requested[3],
                                     const uint32_t max[3]);
cubert_status cubert_status_set_build_log(cubert_status status, const char *log);
/** @} */
/** Reports OUT_OF_MEMORY under `kind` (LAUNCH, the default, or IO for allocations made by
   create/empty/write, as the reference's IoError::OutOfMemory). Ignored for other codes. */
cubert_status cubert_status_set_kind(cubert_status status, cubert_kind kind);
/** Replaces the first words of the message (the code's description) with `headline`, a static
   string: for NOT_FOUND about something other than a handle, say. */
cubert_status cubert_status_set_headline(cubert_status status, const char *headline);
/** Wraps `cause` (ownership moves in) under a new error of `code`. */
cubert_status cubert_status_wrap(cubert_code code, cubert_status cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Returns from the enclosing function when `expr` yields an error, wrapped under an error of
   the same code whose message is the context (`fmt, ...`), the cause's message indented below
   it ("Caused by:"). CUBERT_RETURN_IF_ERROR (cubert/status.h) returns the error as it is. */
#define CUBERT_RETURN_IF_ERROR_CONTEXT(expr, ...)                                           \
  do {                                                                                      \
    cubert_status cubert_status_ctx_ = (expr);                                              \
    if (cubert_status_ctx_)                                                                 \
      return cubert_status_wrap(cubert_status_code(cubert_status_ctx_), cubert_status_ctx_, \
                                __VA_ARGS__);                                               \
  } while (0)
/** SERVER_UNHEALTHY holding `errors[0..count)` (ownership moves in). */
cubert_status cubert_status_unhealthy(cubert_status *errors, size_t count);
/** Several errors as one, taking `list` (malloc'd, `count` entries) and its statuses: NULL for
   none, the error itself for one, SERVER_UNHEALTHY holding them all for more. */
cubert_status cubert_status_merge(cubert_status *list, size_t count);
/** Deep copy (for errors reported to several waiters). */
cubert_status cubert_status_clone(cubert_status status);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BASE_STATUS_H */
