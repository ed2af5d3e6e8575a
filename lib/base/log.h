/* cubert base — the library's log (log.c: CUBERT_LOG, CUBERT_LOG_FILE; docs/environment.md)
   and its clock. */
#ifndef CUBERT_BASE_LOG_H
#define CUBERT_BASE_LOG_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/** Logging: the library logs only when CUBERT_LOG asks for it, to stderr or to the regular file
   CUBERT_LOG_FILE names. Never blocks on the sink (a FIFO or a device is refused). */
void cubert_log(int level, const char *category, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Log levels of cubert_log. */
enum {
  CUBERT_LOG_ERROR = 0, /**< errors */
  CUBERT_LOG_WARN = 1,  /**< warnings */
  CUBERT_LOG_INFO = 2,  /**< information */
  CUBERT_LOG_DEBUG = 3, /**< debugging detail */
};

/** Monotonic clock in ns. */
uint64_t cubert_now_ns(void);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BASE_LOG_H */
