/* cubert CPU server — the validate-mode report of checks.c that cubert/kernel.h does not
   declare: the first report of a launch becomes its error on the stream, in the core's format
   (lib/kernel_check.c). The reports kernel files call (cubert_cpu_report_access, _barrier,
   _info_limit) are public (cubert/kernel.h). */
#ifndef CUBERT_CPU_CHECKS_H
#define CUBERT_CPU_CHECKS_H

#include <stdint.h>

#include "cubert/kernel.h"

/* The kernel sanitizer (sanitize.c) found `what` at global unit `unit_id`. */
void cubert_cpu_report_sanitizer(const cubert_cpu_ctx *ctx, uint64_t unit_id, const char *what);

#endif /* CUBERT_CPU_CHECKS_H */
