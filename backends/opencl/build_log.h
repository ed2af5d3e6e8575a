/* cubert — build logs of the OpenCL server (build_log.c): driver messages mapped back to the
   kernel files and lines. Pure, safe from any thread. */
#ifndef CUBERT_OPENCL_BUILD_LOG_H
#define CUBERT_OPENCL_BUILD_LOG_H

#include "opencl/api.h"

/* `log` (owned) with locations like `<kernel>:122:8:` (drivers that ignore #line)
   mapped through the #line directives of `source` to the kernel file and line; returns the
   new log (or `log` itself when there is nothing to map, or no memory). */
char *cubert_ocl_log_relocate(const char *source, char *log);

#endif /* CUBERT_OPENCL_BUILD_LOG_H */
