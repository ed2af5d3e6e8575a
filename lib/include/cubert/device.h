/* cubert — device properties. Field names follow the reference HardwareProperties. */
#ifndef CUBERT_DEVICE_H
#define CUBERT_DEVICE_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_hardware_properties {
  uint32_t load_width; /* bits per load */
  uint32_t plane_size_min, plane_size_max;
  uint32_t max_bindings;
  uint64_t max_shared_memory_size; /* bytes per cube */
  uint32_t max_cube_count[3];
  uint32_t max_units_per_cube;
  uint32_t max_cube_dim[3];
  uint32_t num_cpu_cores; /* 0 when the device is not a CPU server */
  uint32_t max_vector_size;
  uint32_t num_compute_units; /* OpenCL compute units / CPU workers; 0 when unknown */
  /* The most cubes one launch may have in total (the product of the three axes of its cube
     count); launches beyond it are refused with TOO_MANY_RESOURCES before anything is queued.
     0: no limit beyond max_cube_count. PoCL's CPU driver, for one, counts the work-groups of a
     launch in 32 bits (UINT32_MAX). */
  uint64_t max_total_cubes;
} cubert_hardware_properties;

/* Optional capabilities of a device (bit flags in cubert_device_properties.features). */
enum {
  CUBERT_FEATURE_FP64 = 1u << 0,
  CUBERT_FEATURE_FP16 = 1u << 1,
  CUBERT_FEATURE_ATOMIC64 = 1u << 2,
  CUBERT_FEATURE_UNALIGNED_IO = 1u << 3,
  CUBERT_FEATURE_PROFILING = 1u << 4, /* device-side timestamps */
};

/* How profile durations are measured on this device. */
typedef enum cubert_timing_method {
  CUBERT_TIMING_SYSTEM = 0, /* host clock after syncing the stream */
  CUBERT_TIMING_DEVICE = 1, /* device timestamps (OpenCL event profiling) */
} cubert_timing_method;

typedef enum cubert_device_type {
  CUBERT_DEVICE_TYPE_CPU_SERVER = 0, /* the pthread CPU server */
  CUBERT_DEVICE_TYPE_OPENCL_CPU = 1,
  CUBERT_DEVICE_TYPE_OPENCL_GPU = 2,
  CUBERT_DEVICE_TYPE_OPENCL_OTHER = 3,
} cubert_device_type;

typedef struct cubert_device_properties {
  char name[256];
  cubert_hardware_properties hardware;
  struct {
    uint64_t max_page_size, alignment;
  } memory;
  /* features, timing method, ... */
  uint32_t features; /* CUBERT_FEATURE_* bits */
  cubert_timing_method timing_method;
  cubert_device_type type;
  char backend[16]; /* "cpu" or "opencl" */
  char vendor[128];
  char driver_version[128];
  char platform_version[128];
} cubert_device_properties;

/* Memory statistics (reference MemoryUsage). */
typedef struct cubert_memory_usage {
  uint64_t number_allocs, bytes_in_use, bytes_padding, bytes_reserved;
} cubert_memory_usage;

CUBERT_EXTERN_C_END

#endif /* CUBERT_DEVICE_H */
