/* cubert — the kernel profile that CUBERT_PROFILE asks for (reference ProfileLevel):
     minimal: one line per launch, "Executing <kernel>";
     basic:   every launch timed (profile_begin/end around it, so launches serialise), a line
              "| <duration> | <kernel>", and at every sync a summary table per kernel (name,
              total duration, launches, share of the total), sorted by total duration;
     medium:  as basic, with the launch's cube count on each line;
     full:    as medium, with its cube dim and execution mode too.
   Off (the default) costs one branch per launch. The output goes to stderr because the user
   asked for it; errors are still only returned, never printed. Lock: the device lock (held by
   every caller). */
#include "profile_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/config.h"
#include "device.h"
#include "tune/tuner.h"

struct cubert_kernel_stats {
  const cubert_kernel_def *kernel;
  uint64_t total_ns, launches;
};

static void format_duration(char *out, size_t size, uint64_t ns) {
  if (ns < 10000)
    snprintf(out, size, "%llu ns", (unsigned long long)ns);
  else if (ns < 10000000)
    snprintf(out, size, "%.1f µs", ns / 1e3);
  else
    snprintf(out, size, "%.3f ms", ns / 1e6);
}

static const char *name_of(const cubert_kernel_def *k) {
  return k->name ? k->name : "(unnamed)";
}

/* Launches made while autotune measures a candidate say so: they are not the program's own. */
static void tuning_suffix(char *out, size_t size) {
  const char *label = cubert_tune_measuring();
  if (label)
    snprintf(out, size, " (tuning %s)", label);
  else
    out[0] = 0;
}

void cubert_profile_log_executing(const cubert_kernel_def *kernel) {
  char tuning[160];
  tuning_suffix(tuning, sizeof tuning);
  fprintf(stderr, "Executing %s%s\n", name_of(kernel), tuning);
}

void cubert_profile_log_launch(cubert_device *device, const cubert_launch *launch, uint64_t ns) {
  char d[32], tuning[160];
  format_duration(d, sizeof d, ns);
  tuning_suffix(tuning, sizeof tuning);
  static const char *const modes[] = {"checked", "validate", "unchecked"};
  int level = cubert_config_get()->profile_level;
  if (level >= CUBERT_PROFILE_FULL)
    fprintf(stderr, "| %s | %s%s: CubeCount (%u, %u, %u) CubeDim (%u, %u, %u) %s\n", d,
            name_of(launch->kernel), tuning, launch->cube_count[0], launch->cube_count[1],
            launch->cube_count[2], launch->cube_dim.x, launch->cube_dim.y, launch->cube_dim.z,
            (unsigned)launch->mode < 3 ? modes[launch->mode] : "?");
  else if (level == CUBERT_PROFILE_MEDIUM)
    fprintf(stderr, "| %s | %s%s: CubeCount (%u, %u, %u)\n", d, name_of(launch->kernel), tuning,
            launch->cube_count[0], launch->cube_count[1], launch->cube_count[2]);
  else
    fprintf(stderr, "| %s | %s%s\n", d, name_of(launch->kernel), tuning);
  for (size_t i = 0; i < device->kernel_stats.count; ++i)
    if (device->kernel_stats.items[i].kernel == launch->kernel) {
      device->kernel_stats.items[i].total_ns += ns;
      device->kernel_stats.items[i].launches++;
      return;
    }
  if (device->kernel_stats.count == device->kernel_stats.cap) {
    size_t cap = device->kernel_stats.cap ? device->kernel_stats.cap * 2 : 16;
    cubert_kernel_stats *grown = realloc(device->kernel_stats.items, cap * sizeof(*grown));
    if (!grown) return; /* the line above was printed; only the summary loses this launch */
    device->kernel_stats.items = grown;
    device->kernel_stats.cap = cap;
  }
  device->kernel_stats.items[device->kernel_stats.count++] =
      (cubert_kernel_stats){launch->kernel, ns, 1};
}

static int by_total_desc(const void *a, const void *b) {
  const cubert_kernel_stats *x = a, *y = b;
  return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

void cubert_profile_log_summary(cubert_device *device) {
  size_t n = device->kernel_stats.count;
  if (n == 0) return;
  qsort(device->kernel_stats.items, n, sizeof(*device->kernel_stats.items), by_total_desc);
  uint64_t total = 0, launches = 0;
  for (size_t i = 0; i < n; ++i) {
    total += device->kernel_stats.items[i].total_ns;
    launches += device->kernel_stats.items[i].launches;
  }
  fprintf(stderr, "| %-32s | %14s | %12s | %7s |\n", "Name", "Duration", "Num Computed", "Ratio");
  for (size_t i = 0; i < n; ++i) {
    char d[32];
    format_duration(d, sizeof d, device->kernel_stats.items[i].total_ns);
    fprintf(stderr, "| %-32s | %14s | %12llu | %6.2f%% |\n",
            name_of(device->kernel_stats.items[i].kernel), d,
            (unsigned long long)device->kernel_stats.items[i].launches,
            total ? 100.0 * (double)device->kernel_stats.items[i].total_ns / (double)total : 0.0);
  }
  char d[32];
  format_duration(d, sizeof d, total);
  fprintf(stderr, "| %-32s | %14s | %12llu | %6.2f%% |\n", "Total", d, (unsigned long long)launches,
          100.0);
  device->kernel_stats.count = 0;
}

void cubert_kernel_stats_release(cubert_kernel_stats_table *table) {
  free(table->items);
  *table = (cubert_kernel_stats_table){0};
}
