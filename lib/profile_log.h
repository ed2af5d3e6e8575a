/* cubert — the per-launch kernel profile of CUBERT_PROFILE (core-internal; profile_log.c).

   Its per-device state is the table of per-kernel totals printed and reset at every sync
   (cubert_device.kernel_stats): valid when zeroed, freed by cubert_kernel_stats_release at
   device destruction. Lock: the device lock, held by every caller. */
#ifndef CUBERT_PROFILE_LOG_H
#define CUBERT_PROFILE_LOG_H

#include <stddef.h>

#include "cubert/kernel.h"
#include "cubert/server.h"

typedef struct cubert_device cubert_device;

enum {
  CUBERT_PROFILE_OFF = 0,
  CUBERT_PROFILE_MINIMAL = 1,
  CUBERT_PROFILE_BASIC = 2,
  CUBERT_PROFILE_MEDIUM = 3,
  CUBERT_PROFILE_FULL = 4
};

/* Per-kernel totals of CUBERT_PROFILE=basic|full. */
typedef struct cubert_kernel_stats cubert_kernel_stats;
typedef struct cubert_kernel_stats_table {
  cubert_kernel_stats *items;
  size_t count, cap;
} cubert_kernel_stats_table;

/* minimal: "Executing <kernel>". */
void cubert_profile_log_executing(const cubert_kernel_def *kernel);
/* basic, medium, full: prints the launch's line and adds it to the summary. Device lock held. */
void cubert_profile_log_launch(cubert_device *device, const cubert_launch *launch, uint64_t ns);
/* Prints and resets the summary table (at sync). Device lock held. */
void cubert_profile_log_summary(cubert_device *device);
void cubert_kernel_stats_release(cubert_kernel_stats_table *table);

#endif
