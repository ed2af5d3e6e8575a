/* cubert CPU server — the validate-mode reports of checks.c that cubert/kernel.h does not
   declare: the first report of a launch becomes its error on the stream, in the core's format
   (lib/kernel_check.c). cubert_cpu_report_access and cubert_cpu_report_barrier, which every
   kernel file calls, are public (cubert/kernel.h). */
#ifndef CUBERT_CPU_CHECKS_H
#define CUBERT_CPU_CHECKS_H

#include <stdint.h>

#include "cubert/kernel.h"

/* Validate mode: info word `word` holds `value`, above the kernel's `limit` (a kernel's own
   guard: kernels/copy.cube.c, which declares this itself, since a kernel file includes no
   backend header). */
void cubert_cpu_report_info_limit(const cubert_cpu_ctx *ctx, uint64_t unit_id, uint32_t word,
                                  uint64_t value, uint64_t limit);
/* The kernel sanitizer (sanitize.c) found `what` at global unit `unit_id`. */
void cubert_cpu_report_sanitizer(const cubert_cpu_ctx *ctx, uint64_t unit_id, const char *what);

#endif /* CUBERT_CPU_CHECKS_H */
