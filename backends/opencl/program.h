/* cubert — the OpenCL server's programs and kernels (program.c): build options, the in-memory
   caches (a program per source text and options, a kernel object per entry, and the launch's
   fast path from a kernel definition to its kernel object), building or loading from the disk
   cache (disk_cache.h). Called with the device lock held. */
#ifndef CUBERT_OPENCL_PROGRAM_H
#define CUBERT_OPENCL_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/cache_file.h"
#include "opencl/server.h"

/* A bit on the execution mode passed to cubert_ocl_kernel_get: the launch's units all lie below
   every buffer's length (in the declared element type), so a kernel-language kernel is built
   with -DCUBERT_OWN_SAFE=1 and its LOAD_UNIT/STORE_UNIT carry no check. A separate program per
   variant, cached like the modes. */
#define CUBERT_OCL_OWN_SAFE 4

/* A built program: one per (source text, build options) on this server's device. */
typedef struct cubert_ocl_program {
  uint64_t source_hash;
  size_t source_len;
  char *source;
  char *options;
  cl_program program;
  /* Disk cache (disk_cache.c): the key text (NULL when out of memory), the size of the binary
     the cache file holds as far as this server knows (0: none written or loaded yet), and
     `refresh`: a kernel of the program was launched at a new local size since the binary was
     last compared, so the driver may have added compiled code to it. */
  char *disk_key;
  size_t disk_size;
  int refresh;
  struct cubert_ocl_kernel *kernels; /* kernel objects of this program, one per entry */
  struct cubert_ocl_program *next;
} cubert_ocl_program;

/* A kernel object of a program, with the argument values last set on it (clSetKernelArg is
   skipped when the value did not change: launches of one kernel usually repeat buffers). */
typedef struct cubert_ocl_kernel {
  cubert_ocl_program *program;
  char *entry;
  char *what; /* "kernel 'name'" for error messages of commands in flight */
  cl_kernel kernel;
  uint32_t arg_count;       /* CL_KERNEL_NUM_ARGS */
  uint64_t max_units;       /* CL_KERNEL_WORK_GROUP_SIZE: may be below the device's limit */
  uint64_t local_mem;       /* CL_KERNEL_LOCAL_MEM_SIZE: the kernel's shared memory, bytes */
  cl_mem *args;             /* [arg_count], last values set */
  uint64_t args_generation; /* server mem_generation when `args` was valid; 0: nothing set */
  /* Local sizes launched so far. Drivers compile a work-group function per local size at its
     first launch, and a program binary taken afterwards may contain it (PoCL's does), so the
     first launch at each size marks the program for a disk cache refresh. `local_last` is
     the launch's one check; `locals` holds up to CUBERT_OCL_MAX_LOCAL_SIZES sizes. */
  uint32_t local_last[3];
  uint32_t (*locals)[3];
  uint32_t local_count;
  /* Program kernels (arg_list.c): the arguments' kinds, names and types, read at the first
     launch; arg_info_state 0: not asked yet, 1: arg_info holds arg_count entries, 2: the
     driver kept no argument info (only the count is checked). */
  struct cubert_ocl_arg_info *arg_info;
  int arg_info_state;
  struct cubert_ocl_kernel *next;
} cubert_ocl_kernel;

/* Local sizes remembered per kernel; launches at further sizes no longer refresh the disk
   cache (an autotuner trying hundreds of sizes should not rewrite the file each time). */
#define CUBERT_OCL_MAX_LOCAL_SIZES 16u

/* Fast path of the launch: a kernel definition (by address, and the addresses of its strings)
   and execution mode -> kernel object. `immutable`: the strings lie in read-only memory, so
   the addresses identify the text; otherwise the launch compares the text with the program's
   copy (and `user_options`, a copy of the definition's options) and looks a changed
   definition up again (program.c). */
typedef struct cubert_ocl_kernel_ref {
  const cubert_kernel_def *def;
  const char *source, *entry, *options;
  uint32_t flags;
  cubert_execution_mode mode;
  int immutable;
  char *user_options; /* NULL when immutable or without options */
  cubert_ocl_kernel *kernel;
  struct cubert_ocl_kernel_ref *next;
} cubert_ocl_kernel_ref;

/* Checks the kernel's required features against the device: COMPILATION naming the missing
   feature (fp64, fp16). Pure; exposed for tests. */
cubert_status cubert_ocl_check_kernel_features(const cubert_device_properties *properties,
                                               const cubert_kernel_def *kernel);
/* The kernel object for (kernel, mode), building (or loading) its program on first use. */
cubert_status cubert_ocl_kernel_get(cubert_ocl_server *server, const cubert_kernel_def *kernel,
                                    cubert_execution_mode mode, cubert_ocl_kernel **out);
/* The complete build options for `kernel` in `mode` (malloc'd; NULL when out of memory). */
char *cubert_ocl_build_options(const cubert_kernel_def *kernel, cubert_execution_mode mode);
/* Removes from `options`, in place, every blank-separated option that starts with `prefix`
   (-cl-nv- on compilers other than NVIDIA's, kernel.h). Pure; exposed for tests. */
void cubert_ocl_drop_options(char *options, const char *prefix);
/* Frees every program and kernel object (the in-memory cache) after a last disk cache refresh
   of each (cubert_ocl_disk_refresh); the disk cache stays. */
void cubert_ocl_program_cache_clear(cubert_ocl_server *server);
/* Called by the launch when `local` differs from k->local_last: remembers the size and, the
   first time the kernel runs at it, marks the program for a disk cache refresh. Kept out of
   line so that the launch pays three compares. */
void cubert_ocl_kernel_note_local(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                  const uint32_t local[3]);
/* Refreshes the disk cache of every program marked since the last call (sync calls it once
   the stream's work completed, so the launches that marked them were compiled). */
void cubert_ocl_programs_refresh(cubert_ocl_server *server);
/* FNV-1a 64 over bytes, chained from `seed` (use CUBERT_OCL_FNV_SEED to start). */
#define CUBERT_OCL_FNV_SEED CUBERT_FNV1A64_SEED
static inline uint64_t cubert_ocl_fnv1a(uint64_t seed, const void *data, size_t size) {
  return cubert_fnv1a64(seed, data, size);
}

#endif /* CUBERT_OPENCL_PROGRAM_H */
