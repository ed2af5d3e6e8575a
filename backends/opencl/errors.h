/* cubert — the OpenCL server's errors (errors.c): the one place that knows OpenCL error codes,
   turning them into cubert codes and statuses whose message keeps the CL_* name. Pure functions,
   safe from any thread. */
#ifndef CUBERT_OPENCL_ERRORS_H
#define CUBERT_OPENCL_ERRORS_H

#include "opencl/api.h"

/* "CL_OUT_OF_RESOURCES" for -5; "CL_UNKNOWN_ERROR" for codes it does not know. */
const char *cubert_ocl_error_name(cl_int err);
/* The cubert code for an OpenCL error; `fallback` for codes without a specific meaning. */
cubert_code cubert_ocl_error_code(cl_int err, cubert_code fallback);
/* New status "<what>: CL_NAME (err)" with the code of cubert_ocl_error_code(). */
cubert_status cubert_ocl_status(cl_int err, cubert_code fallback, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* New status for a command that ended with the negative execution status `status`:
   OUT_OF_MEMORY for the allocation failures (drivers allocate lazily, at first use), else
   EXECUTION; the message is "<what>: execution status CL_NAME (status)". */
cubert_status cubert_ocl_exec_status(cl_int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* CUBERT_OPENCL_ERRORS_H */
