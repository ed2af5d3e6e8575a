/* cubert — the per-launch kernel profile of CUBERT_PROFILE (core-internal; profile_log.c). */
#ifndef CUBERT_PROFILE_LOG_H
#define CUBERT_PROFILE_LOG_H

#include "client_internal.h"

enum {
  CUBERT_PROFILE_OFF = 0,
  CUBERT_PROFILE_MINIMAL = 1,
  CUBERT_PROFILE_BASIC = 2,
  CUBERT_PROFILE_MEDIUM = 3,
  CUBERT_PROFILE_FULL = 4
};

/* minimal: "Executing <kernel>". */
void cubert_profile_log_executing(const cubert_kernel_def *kernel);
/* basic, medium, full: prints the launch's line and adds it to the summary. Device lock held. */
void cubert_profile_log_launch(cubert_device *device, const cubert_launch *launch, uint64_t ns);
/* Prints and resets the summary table (at sync). Device lock held. */
void cubert_profile_log_summary(cubert_device *device);
void cubert_profile_log_free(cubert_device *device);

#endif
