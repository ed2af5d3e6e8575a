/** @file
   cubert — device properties. Field names follow the reference HardwareProperties. */
#ifndef CUBERT_DEVICE_H
#define CUBERT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

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
  /** Planes (the reference's plane feature; OpenCL subgroups): the device runs units in SIMD
     groups wider than one (cl_khr_subgroups, cl_intel_subgroups, or OpenCL 3.0 subgroups);
     their sizes are cubert_device_properties.plane_sizes. Never set on the CPU server, whose
     plane is one unit. */
  CUBERT_FEATURE_PLANE = 1u << 5,
  /** Hardware atomic add on f32 in global memory (cl_ext_float_atomics with
     CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT). Without it ATOMIC_ADD_F32 still works, by
     compare-exchange (cubert/cube.h). */
  CUBERT_FEATURE_ATOMIC_F32_ADD = 1u << 6,
  /** Hardware atomic add on f64 in global memory (cl_ext_float_atomics, double capabilities). */
  CUBERT_FEATURE_ATOMIC_F64_ADD = 1u << 7,
  /** Packed 8-bit integer dot products in hardware: cl_khr_integer_dot_product (4x8-bit input)
     on OpenCL; AVX-512 VNNI or AVX-VNNI on the CPU server. */
  CUBERT_FEATURE_DOT_PRODUCT_I8 = 1u << 8,
};

/** Preferred vector widths, in elements (lanes) of each type: the width a kernel's loads and
   arithmetic should use for that type (OpenCL CL_DEVICE_PREFERRED_VECTOR_WIDTH_*; on the CPU
   server the vector register of the ISA its kernels run with, divided by the element size).
   0: the type is not supported (f64 without CUBERT_FEATURE_FP64, f16 without FP16). */
typedef struct cubert_vector_widths {
  uint32_t i8;  /**< char */
  uint32_t i16; /**< short */
  uint32_t i32; /**< int */
  uint32_t i64; /**< long */
  uint32_t f16; /**< half */
  uint32_t f32; /**< float */
  uint32_t f64; /**< double */
} cubert_vector_widths;

/** Most plane sizes cubert_device_properties.plane_sizes lists. */
#define CUBERT_MAX_PLANE_SIZES 8

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
  CUBERT_DEVICE_TYPE_OTHER = 4,        /**< a backend the program registered */
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
  /** Preferred vector widths per type, as the device reports them (cubert_vector_widths). The
     vector sizes for io-optimised loads are cubert_device_io_vector_sizes's, which reads
     hardware.load_width and max_vector_size, not these. */
  cubert_vector_widths vector_widths;
  /** The plane (subgroup) sizes the device can run, ascending, plane_size_count of them
     (CL_DEVICE_SUB_GROUP_SIZES_INTEL where the driver lists them, else the plane size range's
     ends: hardware.plane_size_min and _max). {1} on the CPU server. */
  uint32_t plane_sizes[CUBERT_MAX_PLANE_SIZES];
  uint32_t plane_size_count; /**< entries of plane_sizes in use (>= 1) */
  /** A stable checksum of the fields above (the reference's properties_hash; caches may key on
     it): 64-bit FNV-1a over every field of this struct but itself, field by field in
     declaration order with integers as little-endian bytes and strings up to their NUL (never
     padding or bytes past a string's end), so it is the same in every process, build and
     host byte order for the same properties, and differs when any property differs (the
     driver version or CUBERT_CPU_THREADS' compute units included). Computed by the core
     (cubert_device_properties_hash) for clients and for cubert_devices_list. */
  uint64_t properties_hash;
} cubert_device_properties;

/** The vector sizes (lanes) worth trying for loads and stores of elements of `elem_bytes`
   bytes on a device, widest first (the reference's io_optimized_vector_sizes): with max = the
   smaller of hardware.load_width / (8 * elem_bytes) and hardware.max_vector_size (at least 1),
   the powers of two max, max/2, ..., 1 (for a max that is not a power of two, its lowest set
   bit down to 1, as the reference counts). Writes up to `capacity` sizes to out and the number
   there are to *out_count. Thread-safe, pure. Errors: INVALID_ARGUMENT for NULL properties or
   out_count, elem_bytes 0, or a NULL out with capacity > 0. */
CUBERT_API cubert_status cubert_device_io_vector_sizes(const cubert_device_properties *properties,
                                                       size_t elem_bytes, uint32_t *out,
                                                       size_t capacity, size_t *out_count);

/** The properties_hash of `properties` (see the field): a pure function, thread-safe; the
   stored properties_hash field is ignored. 0 for NULL. */
CUBERT_API uint64_t cubert_device_properties_hash(const cubert_device_properties *properties);

/** Memory statistics (reference MemoryUsage), in bytes except number_allocs. */
typedef struct cubert_memory_usage {
  uint64_t number_allocs;  /**< live allocations */
  uint64_t bytes_in_use;   /**< bytes the live allocations asked for */
  uint64_t bytes_padding;  /**< bytes added to them for alignment and slicing */
  uint64_t bytes_reserved; /**< bytes of device memory the pools hold */
} cubert_memory_usage;

CUBERT_EXTERN_C_END

#endif /* CUBERT_DEVICE_H */
