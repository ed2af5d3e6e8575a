/** @file
   cubert — device properties. Field names follow the reference HardwareProperties. */
#ifndef CUBERT_DEVICE_H
#define CUBERT_DEVICE_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/** What a device can run: the limits every launch is checked against. */
typedef struct cubert_hardware_properties {
  uint32_t load_width;             /**< bits per load */
  uint32_t plane_size_min;         /**< smallest plane (SIMD group, OpenCL preferred multiple) */
  uint32_t plane_size_max;         /**< largest plane (1 on the CPU server) */
  uint32_t max_bindings;           /**< most buffers one launch may bind */
  uint64_t max_shared_memory_size; /**< bytes per cube */
  uint32_t max_cube_count[3];      /**< most cubes per axis of a launch */
  uint32_t max_units_per_cube;     /**< most units in one cube (product of the cube dim) */
  uint32_t max_cube_dim[3];        /**< most units per axis of a cube */
  uint32_t num_cpu_cores;          /**< 0 when the device is not a CPU server */
  uint32_t max_vector_size;        /**< widest float vector kernels use, in lanes (4..16) */
  uint32_t num_compute_units;      /**< OpenCL compute units / CPU workers; 0 when unknown */
  /** The most cubes one launch may have in total (the product of the three axes of its cube
     count); launches beyond it are refused with TOO_MANY_RESOURCES before anything is queued.
     0: no limit beyond max_cube_count. PoCL's CPU driver, for one, counts the work-groups of a
     launch in 32 bits (UINT32_MAX). */
  uint64_t max_total_cubes;
} cubert_hardware_properties;

/** Optional capabilities of a device (bit flags in cubert_device_properties.features). */
enum {
  CUBERT_FEATURE_FP64 = 1u << 0,         /**< double precision (cl_khr_fp64) */
  CUBERT_FEATURE_FP16 = 1u << 1,         /**< half precision arithmetic (cl_khr_fp16) */
  CUBERT_FEATURE_ATOMIC64 = 1u << 2,     /**< 64-bit atomics on global memory */
  CUBERT_FEATURE_UNALIGNED_IO = 1u << 3, /**< reads and writes at any byte offset */
  CUBERT_FEATURE_PROFILING = 1u << 4,    /**< device-side timestamps */
};

/** How profile durations are measured on this device. */
typedef enum cubert_timing_method {
  CUBERT_TIMING_SYSTEM = 0, /**< host clock after syncing the stream */
  CUBERT_TIMING_DEVICE = 1, /**< device timestamps (OpenCL event profiling) */
} cubert_timing_method;

/** What kind of device a client runs on. */
typedef enum cubert_device_type {
  CUBERT_DEVICE_TYPE_CPU_SERVER = 0,   /**< the pthread CPU server */
  CUBERT_DEVICE_TYPE_OPENCL_CPU = 1,   /**< an OpenCL CPU device (PoCL, say) */
  CUBERT_DEVICE_TYPE_OPENCL_GPU = 2,   /**< an OpenCL GPU */
  CUBERT_DEVICE_TYPE_OPENCL_OTHER = 3, /**< any other OpenCL device (accelerator, custom) */
} cubert_device_type;

/** Everything known about a device (cubert_client_properties). */
typedef struct cubert_device_properties {
  char name[256];                      /**< the device's name (CPU model, OpenCL device name) */
  cubert_hardware_properties hardware; /**< launch limits */
  /** Memory limits. */
  struct {
    uint64_t max_page_size; /**< largest single allocation, bytes */
    uint64_t alignment;     /**< alignment of every allocation, bytes */
  } memory;
  uint32_t features;                  /**< CUBERT_FEATURE_* bits */
  cubert_timing_method timing_method; /**< how profiles are timed */
  cubert_device_type type;            /**< CPU server or kind of OpenCL device */
  char backend[16];                   /**< "cpu" or "opencl" */
  char vendor[128];                   /**< the vendor's name */
  char driver_version[128];           /**< OpenCL driver version, or cubert-cpu's version */
  char platform_version[128];         /**< OpenCL platform version, or the hwloc version */
} cubert_device_properties;

/** Memory statistics (reference MemoryUsage), in bytes except number_allocs. */
typedef struct cubert_memory_usage {
  uint64_t number_allocs;  /**< live allocations */
  uint64_t bytes_in_use;   /**< bytes the live allocations asked for */
  uint64_t bytes_padding;  /**< bytes added to them for alignment and slicing */
  uint64_t bytes_reserved; /**< bytes of device memory the pools hold */
} cubert_memory_usage;

CUBERT_EXTERN_C_END

#endif /* CUBERT_DEVICE_H */
