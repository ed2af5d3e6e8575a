/* cubert — OpenCL error codes: their names and their meaning in cubert's taxonomy.

   This is the only file that interprets CL_* error values (STYLE: errors are translated in one
   place). Messages keep the CL_* name and number so that a user can look the code up in the
   OpenCL specification or a vendor's documentation. */
#include "opencl/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* X(CL name, value, cubert code or OK for "use the caller's fallback"). Values are spelled out
   so the table also covers codes that CL_TARGET_OPENCL_VERSION=120 headers hide. */
#define CUBERT_OCL_ERROR_TABLE(X)                                   \
  X(CL_SUCCESS, 0, OK)                                              \
  X(CL_DEVICE_NOT_FOUND, -1, NOT_FOUND)                             \
  X(CL_DEVICE_NOT_AVAILABLE, -2, UNAVAILABLE)                       \
  X(CL_COMPILER_NOT_AVAILABLE, -3, COMPILATION)                     \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4, OUT_OF_MEMORY)            \
  X(CL_OUT_OF_RESOURCES, -5, OUT_OF_MEMORY)                         \
  X(CL_OUT_OF_HOST_MEMORY, -6, OUT_OF_MEMORY)                       \
  X(CL_PROFILING_INFO_NOT_AVAILABLE, -7, PROFILE_FAILED)            \
  X(CL_MEM_COPY_OVERLAP, -8, INVALID_ARGUMENT)                      \
  X(CL_IMAGE_FORMAT_MISMATCH, -9, OK)                               \
  X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10, OK)                         \
  X(CL_BUILD_PROGRAM_FAILURE, -11, COMPILATION)                     \
  X(CL_MAP_FAILURE, -12, OK)                                        \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13, UNSUPPORTED_IO_OPERATION) \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14, EXECUTION)   \
  X(CL_COMPILE_PROGRAM_FAILURE, -15, COMPILATION)                   \
  X(CL_LINKER_NOT_AVAILABLE, -16, COMPILATION)                      \
  X(CL_LINK_PROGRAM_FAILURE, -17, COMPILATION)                      \
  X(CL_DEVICE_PARTITION_FAILED, -18, OK)                            \
  X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19, OK)                      \
  X(CL_INVALID_VALUE, -30, OK)                                      \
  X(CL_INVALID_DEVICE_TYPE, -31, OK)                                \
  X(CL_INVALID_PLATFORM, -32, OK)                                   \
  X(CL_INVALID_DEVICE, -33, OK)                                     \
  X(CL_INVALID_CONTEXT, -34, OK)                                    \
  X(CL_INVALID_QUEUE_PROPERTIES, -35, OK)                           \
  X(CL_INVALID_COMMAND_QUEUE, -36, OK)                              \
  X(CL_INVALID_HOST_PTR, -37, OK)                                   \
  X(CL_INVALID_MEM_OBJECT, -38, OK)                                 \
  X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39, OK)                    \
  X(CL_INVALID_IMAGE_SIZE, -40, OK)                                 \
  X(CL_INVALID_SAMPLER, -41, OK)                                    \
  X(CL_INVALID_BINARY, -42, COMPILATION)                            \
  X(CL_INVALID_BUILD_OPTIONS, -43, COMPILATION)                     \
  X(CL_INVALID_PROGRAM, -44, COMPILATION)                           \
  X(CL_INVALID_PROGRAM_EXECUTABLE, -45, COMPILATION)                \
  X(CL_INVALID_KERNEL_NAME, -46, COMPILATION)                       \
  X(CL_INVALID_KERNEL_DEFINITION, -47, COMPILATION)                 \
  X(CL_INVALID_KERNEL, -48, OK)                                     \
  X(CL_INVALID_ARG_INDEX, -49, INVALID_ARGUMENT)                    \
  X(CL_INVALID_ARG_VALUE, -50, INVALID_ARGUMENT)                    \
  X(CL_INVALID_ARG_SIZE, -51, INVALID_ARGUMENT)                     \
  X(CL_INVALID_KERNEL_ARGS, -52, INVALID_ARGUMENT)                  \
  X(CL_INVALID_WORK_DIMENSION, -53, CUBE_DIM)                       \
  X(CL_INVALID_WORK_GROUP_SIZE, -54, UNITS)                         \
  X(CL_INVALID_WORK_ITEM_SIZE, -55, CUBE_DIM)                       \
  X(CL_INVALID_GLOBAL_OFFSET, -56, OK)                              \
  X(CL_INVALID_EVENT_WAIT_LIST, -57, OK)                            \
  X(CL_INVALID_EVENT, -58, OK)                                      \
  X(CL_INVALID_OPERATION, -59, OK)                                  \
  X(CL_INVALID_GL_OBJECT, -60, OK)                                  \
  X(CL_INVALID_BUFFER_SIZE, -61, BUFFER_TOO_BIG)                    \
  X(CL_INVALID_MIP_LEVEL, -62, OK)                                  \
  X(CL_INVALID_GLOBAL_WORK_SIZE, -63, TOO_MANY_RESOURCES)           \
  X(CL_INVALID_PROPERTY, -64, OK)                                   \
  X(CL_INVALID_IMAGE_DESCRIPTOR, -65, OK)                           \
  X(CL_INVALID_COMPILER_OPTIONS, -66, COMPILATION)                  \
  X(CL_INVALID_LINKER_OPTIONS, -67, COMPILATION)                    \
  X(CL_INVALID_DEVICE_PARTITION_COUNT, -68, OK)                     \
  X(CL_INVALID_PIPE_SIZE, -69, OK)                                  \
  X(CL_INVALID_DEVICE_QUEUE, -70, OK)                               \
  X(CL_INVALID_SPEC_ID, -71, OK)                                    \
  X(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72, TOO_MANY_RESOURCES)      \
  X(CL_PLATFORM_NOT_FOUND_KHR, -1001, NOT_FOUND)

typedef struct error_row {
  cl_int value;
  const char *name;
  cubert_code code;
} error_row;

static const error_row kErrors[] = {
#define CUBERT_OCL_X(name, value, code) {value, #name, CUBERT_CODE_##code},
    CUBERT_OCL_ERROR_TABLE(CUBERT_OCL_X)
#undef CUBERT_OCL_X
};

static const error_row *find_row(cl_int err) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i)
    if (kErrors[i].value == err) return &kErrors[i];
  return NULL;
}

const char *cubert_ocl_error_name(cl_int err) {
  const error_row *row = find_row(err);
  return row ? row->name : "CL_UNKNOWN_ERROR";
}

cubert_code cubert_ocl_error_code(cl_int err, cubert_code fallback) {
  const error_row *row = find_row(err);
  if (!row || row->code == CUBERT_CODE_OK) return err == CL_SUCCESS ? CUBERT_CODE_OK : fallback;
  return row->code;
}

cubert_status cubert_ocl_status(cl_int err, cubert_code fallback, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  cubert_code code = cubert_ocl_error_code(err, fallback);
  if (code == CUBERT_CODE_OK) code = fallback; /* CL_SUCCESS is never an error: caller's bug */
  return cubert_status_make(code, "%s: %s (%d)", what, cubert_ocl_error_name(err), (int)err);
}

cubert_status cubert_ocl_exec_status(cl_int status, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  /* Execution statuses are not API results: drivers use -1 for "failed" (PoCL's CL_FAILED),
     and a user event may carry any negative value. Only the allocation failures keep their
     meaning; everything else is an execution error. -1..-3 are API-only codes, so their
     names would mislead here. */
  cubert_code code = cubert_ocl_error_code(status, CUBERT_CODE_EXECUTION);
  if (code != CUBERT_CODE_OUT_OF_MEMORY) code = CUBERT_CODE_EXECUTION;
  const error_row *row = status <= -4 ? find_row(status) : NULL;
  if (row)
    return cubert_status_make(code, "%s: execution status %s (%d)", what, row->name, (int)status);
  return cubert_status_make(code, "%s: execution status %d (the command failed)", what,
                            (int)status);
}
