/** @file
   cubert — the configuration the library reads once from the environment (config.c;
   docs/environment.md lists every variable). */
#ifndef CUBERT_CONFIG_H
#define CUBERT_CONFIG_H

#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/** The largest valid CUBERT_MAX_STREAMS: every server holds this many stream slots per device
   (plus the communicators' own streams). */
#define CUBERT_MAX_STREAMS_LIMIT 4096u

/** Configuration read once from the environment (config.c). */
typedef struct cubert_config {
  const char *device;     /**< CUBERT_DEVICE or NULL */
  uint32_t cpu_threads;   /**< CUBERT_CPU_THREADS, 0: from hwloc */
  const char *cache_dir;  /**< CUBERT_CACHE_DIR or NULL */
  int log_level;          /**< CUBERT_LOG: 0 error, 1 warn, 2 info, 3 debug */
  const char *log_path;   /**< CUBERT_LOG_FILE: a regular file (else stderr); NULL: stderr */
  int profile_level;      /**< CUBERT_PROFILE: 0 off, 1 minimal, 2 basic, 3 medium, 4 full */
  const char *trace_path; /**< CUBERT_TRACE or NULL */
  int check_mode;         /**< CUBERT_CHECK_MODE: 0 auto, 1 enforce, 2 validate */
  uint32_t max_streams;   /**< CUBERT_MAX_STREAMS, 1..CUBERT_MAX_STREAMS_LIMIT, default 128 */
  int backtrace;          /**< CUBERT_BACKTRACE=1 */
  int autotune;           /**< CUBERT_AUTOTUNE: CUBERT_AUTOTUNE_OFF|MINIMAL|FULL (default) */
  int autotune_cache;     /**< CUBERT_AUTOTUNE_CACHE: 1 (default) use the disk cache, 0 not */
  /** CUBERT_OPENCL_BINARY_CACHE: CUBERT_BINARY_CACHE_AUTO (default: on, except on drivers that
     keep their own kernel cache, PoCL), _OFF or _ON. */
  int opencl_binary_cache;
  /** CUBERT_SANITIZER: 1 (default) validate-mode launches on the CPU server run the kernel
     sanitizer where the kernel was built with it (docs/debugging.md), 0 not. */
  int sanitizer;
  /** CUBERT_POOLS_EXCLUSIVE=1: every reservation is a storage allocation of its own, of exactly
     its size, freed when released (no pages shared, nothing reused), so that ASan and Oclgrind
     see where each buffer ends. */
  int pools_exclusive;
  /** CUBERT_VALIDATE_SEED=n (0..4294967295): validate-mode launches on the CPU server run the
     cubes of a launch and the units of a cube in an order shuffled by the seed. */
  int validate_shuffle;   /**< 1 when CUBERT_VALIDATE_SEED is set (and valid) */
  uint32_t validate_seed; /**< the seed (CUBERT_VALIDATE_SEED) */
  /** CUBERT_OPENCL_OPTIONS: added to the build options of every OpenCL program (e.g.
     `-cl-nv-maxrregcount=128` or `-cl-fast-relaxed-math`), or NULL. Part of the program
     caches' keys, so programs built with other options are not reused. */
  const char *opencl_options;
  /** CUBERT_DRY_RUN=1: every client starts in dry run (cubert_client_set_dry_run): launches are
     checked and their kernels compiled and cached, nothing runs, reads return zeros, writes
     land. */
  int dry_run;
  /** CUBERT_AUTOTUNE_CHECKS=1: tuning compares each measured candidate's result with the
     default candidate's and excludes those that disagree (cubert_tune_set.output). */
  int autotune_checks;
  /** CUBERT_AUTOTUNE_LEVEL: minimal|balanced (default)|extensive|full, or 0..3: the anchor
     granularity of cubert_tune_key_add_anchored (cubert_tune_level). */
  int autotune_level;
  /** CUBERT_AUTOTUNE_BACKGROUND: CUBERT_AUTOTUNE_BACKGROUND_AUTO (default: on, except on the CPU
     server), _OFF or _ON: under CUBERT_AUTOTUNE=full, whether the first call of a new key runs
     a provisional candidate at once and the key is measured by a background thread
     (cubert/tune.h). */
  int autotune_background;
} cubert_config;
/** Values of cubert_config.opencl_binary_cache. */
enum {
  CUBERT_BINARY_CACHE_AUTO = 0, /**< on, except on drivers with their own cache */
  CUBERT_BINARY_CACHE_OFF = 1,  /**< never cache program binaries */
  CUBERT_BINARY_CACHE_ON = 2,   /**< always cache them */
};
/** Values of cubert_config.autotune_background. */
enum {
  CUBERT_AUTOTUNE_BACKGROUND_AUTO = 0, /**< on, except on the CPU server */
  CUBERT_AUTOTUNE_BACKGROUND_OFF = 1,  /**< every key is measured in the call that first needs it */
  CUBERT_AUTOTUNE_BACKGROUND_ON = 2,   /**< on every device */
};
/** Values of cubert_config.autotune. */
enum {
  CUBERT_AUTOTUNE_OFF = 0,     /**< the first valid candidate, nothing measured */
  CUBERT_AUTOTUNE_MINIMAL = 1, /**< measure priority-0 candidates */
  CUBERT_AUTOTUNE_FULL = 2,    /**< measure every valid candidate */
};
/** The configuration, read from the environment on the first call. Never NULL; thread-safe. */
CUBERT_API const cubert_config *cubert_config_get(void);

CUBERT_EXTERN_C_END

#endif /* CUBERT_CONFIG_H */
