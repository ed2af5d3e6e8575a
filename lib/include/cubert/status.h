/** @file
   cubert — status objects and the error taxonomy (`docs/architecture.md#errors`).

   Every fallible function returns a `cubert_status`: NULL means success, anything else is a
   heap-allocated error object that the caller owns and frees with cubert_status_free().
   An error carries a kind, a leaf code, a human readable message (causes included), the
   numbers that explain it, an optional cause chain, the list of errors for SERVER_UNHEALTHY,
   an optional compiler build log and, when CUBERT_BACKTRACE=1, a backtrace.

   Thread safety: a status object is a plain value; different statuses may be used from
   different threads, one status must not be freed while another thread reads it. A status is a
   plain heap object: using or freeing it after cubert_status_free is undefined (C cannot
   detect it; clients and handles, by contrast, report NOT_FOUND when used after release). */
#ifndef CUBERT_STATUS_H
#define CUBERT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/** An error object (opaque), or NULL for success. */
typedef struct cubert_status_s *cubert_status;

/** X(KIND, description) — the families of errors, mirroring the reference enums. */
#define CUBERT_KIND_TABLE(X)              \
  X(OK, "ok")                             \
  X(LAUNCH, "launch error")               \
  X(RESOURCE_LIMIT, "too many resources") \
  X(SERVER, "server error")               \
  X(IO, "io error")                       \
  X(PROFILE, "profile error")             \
  X(API, "api error")

/** X(CODE, KIND, description) — every leaf code and the kind it belongs to.
   LaunchError -> LAUNCH; ResourceLimitError -> RESOURCE_LIMIT; IoError -> IO;
   ServerError -> SERVER; ProfileError -> PROFILE; argument/configuration errors -> API. */
#define CUBERT_CODE_TABLE(X)                                                              \
  X(OK, OK, "success")                                                                    \
  X(COMPILATION, LAUNCH, "a compilation error happened during launch")                    \
  X(OUT_OF_MEMORY, LAUNCH, "out of memory")                                               \
  X(UNKNOWN, LAUNCH, "an unknown error happened during launch")                           \
  X(TOO_MANY_RESOURCES, RESOURCE_LIMIT, "too many resources were requested")              \
  X(SHARED_MEMORY, RESOURCE_LIMIT, "too much shared memory requested")                    \
  X(UNITS, RESOURCE_LIMIT, "total unit count exceeds maximum")                            \
  X(CUBE_DIM, RESOURCE_LIMIT, "cube dim exceeds maximum bounds")                          \
  X(BUFFER_TOO_BIG, IO, "can't allocate buffer")                                          \
  X(POOL_CAPACITY_EXCEEDED, IO, "memory pool capacity exceeded")                          \
  X(UNSUPPORTED_STRIDES, IO, "the provided strides are not supported for this operation") \
  X(NOT_FOUND, IO, "couldn't find resource for that handle")                              \
  X(FREE_ERROR, IO, "couldn't free the handle, since it is currently in use")             \
  X(IO_UNKNOWN, IO, "unknown error happened during execution")                            \
  X(UNSUPPORTED_IO_OPERATION, IO, "the current io operation is not supported")            \
  X(EXECUTION, IO, "can't perform the io operation because of a runtime error")           \
  X(GENERIC, SERVER, "an error happened during execution")                                \
  X(SERVER_UNHEALTHY, SERVER, "the server is in an invalid state")                        \
  X(PROFILE_UNKNOWN, PROFILE, "an unknown error happened during profiling")               \
  X(NOT_REGISTERED, PROFILE, "no profiling registered")                                   \
  X(PROFILE_FAILED, PROFILE, "an error happened during profiling")                        \
  X(INVALID_ARGUMENT, API, "invalid argument")                                            \
  X(UNAVAILABLE, API, "unavailable")                                                      \
  X(POOLS_IN_USE, API, "memory pools are in use")                                         \
  X(EMPTY_POOL_LIST, API, "the memory pool list is empty")                                \
  X(ZERO_SIZE, API, "a memory pool size is zero")                                         \
  X(SLICE_LARGER_THAN_PAGE, API, "a pool's max slice size is larger than its page")       \
  X(CAP_SMALLER_THAN_PAGE, API, "a pool's capacity is smaller than its page")             \
  X(TOO_MANY_PAGES, API, "a pool would hold too many pages")                              \
  X(TOO_MANY_POOLS, API, "too many memory pools")

/** The family of an error: `CUBERT_KIND_<KIND>` for each row of CUBERT_KIND_TABLE
    (CUBERT_KIND_OK, _LAUNCH, _RESOURCE_LIMIT, _SERVER, _IO, _PROFILE, _API). */
typedef enum cubert_kind {
#define CUBERT_X_KIND(name, text) CUBERT_KIND_##name,
  CUBERT_KIND_TABLE(CUBERT_X_KIND)
#undef CUBERT_X_KIND
      CUBERT_KIND_COUNT_
} cubert_kind;

/** The leaf code of an error: `CUBERT_CODE_<CODE>` for each row of CUBERT_CODE_TABLE
    (CUBERT_CODE_OK, _COMPILATION, ..., _TOO_MANY_POOLS). */
typedef enum cubert_code {
#define CUBERT_X_CODE(name, kind, text) CUBERT_CODE_##name,
  CUBERT_CODE_TABLE(CUBERT_X_CODE)
#undef CUBERT_X_CODE
      CUBERT_CODE_COUNT_
} cubert_code;

/** New error of `code` with a printf-style reason, e.g. for a callback of
   cubert_client_exclusive()/cubert_client_profile() that fails with its own error.
   Returns NULL for CUBERT_CODE_OK; otherwise never NULL (falls back to a static OUT_OF_MEMORY
   status, which cubert_status_free ignores, when it cannot allocate). The caller owns the
   result. Thread-safe. */
CUBERT_API cubert_status cubert_status_make(cubert_code code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Leaf code of the error; CUBERT_CODE_OK for NULL. */
CUBERT_API cubert_code cubert_status_code(cubert_status status);
/** Kind (family) of the error; CUBERT_KIND_OK for NULL. OUT_OF_MEMORY is LAUNCH kind when a
   launch ran out of memory and IO kind when an allocation (create/empty/write) did. */
CUBERT_API cubert_kind cubert_status_kind(cubert_status status);
/** Full text: the message, its numbers, the cause chain, the collected errors of
   SERVER_UNHEALTHY, the build log and the backtrace when one was captured.
   Owned by the status; "ok" for NULL. */
CUBERT_API const char *cubert_status_message(cubert_status status);
/** Frees the status, its causes and collected errors. Accepts NULL. */
CUBERT_API void cubert_status_free(cubert_status status);

/** The error this one wraps (a launch error inside a server error, say), or NULL.
   Owned by `status`. */
CUBERT_API cubert_status cubert_status_cause(cubert_status status);
/** @{ */
/** SERVER_UNHEALTHY holds the errors that were raised asynchronously, oldest first: their
   number (0 for other statuses), and the error at `index` (owned by `status`; NULL past the
   end). */
CUBERT_API size_t cubert_status_error_count(cubert_status status);
CUBERT_API cubert_status cubert_status_error_at(cubert_status status, size_t index);
/** @} */
/** True when the status or any error in its cause chain has `code`. */
CUBERT_API int cubert_status_has_code(cubert_status status, cubert_code code);

/** @{ */
/** The numbers that explain an error (0 when not applicable):
   requested/max for resource limits and pool capacity (for CUBE_DIM: the product of the
   three axes; see cubert_status_dims), size for BUFFER_TOO_BIG and OUT_OF_MEMORY. */
CUBERT_API uint64_t cubert_status_requested(cubert_status status);
CUBERT_API uint64_t cubert_status_max(cubert_status status);
CUBERT_API uint64_t cubert_status_size(cubert_status status);
/** @} */
/** CUBE_DIM: requested and maximum per axis. Returns 0 when the status has no dims. */
CUBERT_API int cubert_status_dims(cubert_status status, uint32_t out_requested[3],
                                  uint32_t out_max[3]);
/** The compiler's complete build log for COMPILATION errors, or NULL. */
CUBERT_API const char *cubert_status_build_log(cubert_status status);
/** The backtrace captured at creation (CUBERT_BACKTRACE=1), or NULL. */
CUBERT_API const char *cubert_status_backtrace(cubert_status status);

/** @{ */
/** Name of a code ("NOT_FOUND") and of a kind ("IO"). Static strings. */
CUBERT_API const char *cubert_code_name(cubert_code code);
CUBERT_API const char *cubert_kind_name(cubert_kind kind);
/** @} */
/** The kind a code belongs to. */
CUBERT_API cubert_kind cubert_code_kind(cubert_code code);

/** Returns from the enclosing function when the expression (any, compound literals with
    commas included: the macro takes `...`) yields an error. */
#define CUBERT_RETURN_IF_ERROR(...)                    \
  do {                                                 \
    cubert_status cubert_status_tmp_ = (__VA_ARGS__);  \
    if (cubert_status_tmp_) return cubert_status_tmp_; \
  } while (0)

CUBERT_EXTERN_C_END

#endif /* CUBERT_STATUS_H */
