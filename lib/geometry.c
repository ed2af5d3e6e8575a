/* cubert — cube counts, cube dims and the heuristics that choose them.

   Both heuristics follow the reference (cubecl-runtime server.rs: cube_count_spread and
   CubeDim::new) for every input the reference handles. Where the reference silently produces
   an invalid result (a z count above its limit, a u32 overflow) we return TOO_MANY_RESOURCES
   with the numbers instead; degenerate device properties (plane size 0, max units 0) are
   guarded so the result is always a launchable cube dim. */
#include "cubert/geometry.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"
#include "cubert/client.h"
#include "cubert/server.h"
#include "geometry.h"

cubert_cube_count cubert_cube_count_new_3d(uint32_t x, uint32_t y, uint32_t z) {
  cubert_cube_count count = {x, y, z, NULL};
  return count;
}

cubert_cube_count cubert_cube_count_new_1d(uint32_t x) {
  return cubert_cube_count_new_3d(x, 1, 1);
}

int cubert_cube_count_is_empty(cubert_cube_count count) {
  return !count.dynamic && (count.x == 0 || count.y == 0 || count.z == 0);
}

cubert_cube_count cubert_cube_count_new_2d(uint32_t x, uint32_t y) {
  return cubert_cube_count_new_3d(x, y, 1);
}

cubert_cube_count cubert_cube_count_dynamic(cubert_handle *xyz_u32) {
  cubert_cube_count count = {0, 0, 0, xyz_u32};
  return count;
}

cubert_cube_dim cubert_cube_dim_new_3d(uint32_t x, uint32_t y, uint32_t z) {
  cubert_cube_dim dim = {x, y, z};
  return dim;
}

uint64_t cubert_cube_dim_num_elems(cubert_cube_dim dim) {
  /* The product of three u32 can exceed 64 bits only past 2^64; saturate there. */
  uint64_t xy = (uint64_t)dim.x * dim.y;
  if (dim.z != 0 && xy > UINT64_MAX / dim.z) return UINT64_MAX;
  return xy * dim.z;
}

/* Product of the three limits for error reports, saturated at UINT64_MAX. */
static uint64_t product3(const uint32_t v[3]) {
  uint64_t xy = (uint64_t)v[0] * v[1];
  if (v[2] != 0 && xy > UINT64_MAX / v[2]) return UINT64_MAX;
  return xy * v[2];
}

static cubert_status spread_too_many(const uint32_t max[3], uint32_t num_cubes, const char *why) {
  cubert_status status =
      cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                         "num_cubes %u cannot be spread within max_cube_count (%u, %u, %u): %s",
                         num_cubes, max[0], max[1], max[2], why);
  return cubert_status_set_limits(status, num_cubes, product3(max));
}

/* The reference halves an axis (rounding up) and doubles the next one until the axis fits,
   then moves on; it stops at the first axis that already fits. Halving rather than an exact
   factorisation keeps x as large as possible (x is the fastest-varying, best-coalesced axis)
   at the cost of up to 2x idle cubes, which is why the selection reports APPROX. num_cubes 0
   fits at once and yields (0, 1, 1), an empty dispatch. */
cubert_status cubert_cube_count_spread(const uint32_t max[3], uint32_t num_cubes, uint32_t out[3]) {
  if (!max || !out) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cube_count_spread: %s must not be NULL", !max ? "max" : "out");
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (max[axis] == 0) {
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "max_cube_count[%d] is 0; every limit must be at least 1 (max = "
                                "(%u, %u, %u))",
                                axis, max[0], max[1], max[2]);
    }
  }
  uint32_t count[3] = {num_cubes, 1, 1};
  for (int axis = 0; axis < 2; ++axis) {
    if (count[axis] <= max[axis]) break;
    while (count[axis] > max[axis]) {
      count[axis] = count[axis] / 2 + count[axis] % 2;
      if (count[axis + 1] > UINT32_MAX / 2) {
        return spread_too_many(max, num_cubes, "an axis count would overflow 32 bits");
      }
      count[axis + 1] *= 2;
    }
  }
  if (count[2] > max[2]) {
    char why[96];
    snprintf(why, sizeof(why), "z would need %u cubes, more than max_cube_count[2] = %u", count[2],
             max[2]);
    return spread_too_many(max, num_cubes, why);
  }
  out[0] = count[0];
  out[1] = count[1];
  out[2] = count[2];
  return NULL;
}

cubert_status cubert_cube_count_selection_from(const uint32_t max[3], uint32_t num_cubes,
                                               cubert_cube_count_selection *out) {
  if (!out) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cube count selection: out must not be NULL");
  }
  uint32_t count[3];
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_spread(max, num_cubes, count));
  uint64_t actual = (uint64_t)count[0] * count[1] * count[2];
  if (actual > UINT32_MAX) {
    char why[96];
    snprintf(why, sizeof(why), "the spread (%u, %u, %u) dispatches %llu cubes, more than 2^32-1",
             count[0], count[1], count[2], (unsigned long long)actual);
    return spread_too_many(max, num_cubes, why);
  }
  out->kind = actual == num_cubes ? CUBERT_CUBE_COUNT_EXACT : CUBERT_CUBE_COUNT_APPROX;
  out->cube_count = cubert_cube_count_new_3d(count[0], count[1], count[2]);
  out->num_cubes = (uint32_t)actual;
  return NULL;
}

cubert_status cubert_cube_count_select(const cubert_client *client, uint32_t num_cubes,
                                       cubert_cube_count_selection *out) {
  const cubert_device_properties *properties = client ? cubert_client_properties(client) : NULL;
  if (!properties) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cube_count_select: client must be a live client (got %s)",
                              client ? "a client without properties" : "NULL");
  }
  return cubert_cube_count_selection_from(properties->hardware.max_cube_count, num_cubes, out);
}

/* Planes per cube. On a CPU server one plane per core (capped by the work) keeps every core of
   a cube busy; on a GPU the reference uses a power of two up to 8 planes, enough to hide
   latency without starving occupancy. */
static uint32_t plane_count_per_cube(uint32_t working_units, uint32_t plane_size,
                                     uint32_t num_cpu_cores) {
  if (num_cpu_cores > 0) return num_cpu_cores < working_units ? num_cpu_cores : working_units;
  uint32_t plane_count_max = working_units / plane_size;
  if (plane_count_max < 1) plane_count_max = 1;
  uint32_t count = 1;
  while (count < 8 && count * 2 <= plane_count_max) count *= 2;
  return count;
}

/* Guards beyond the reference: plane_size 0 is treated as 1, max_units_per_cube 0 as "no
   limit" (a device that does not report one), and a plane wider than max_units_per_cube is
   narrowed to it, so the result always has num_elems() in [1, max_units_per_cube]. */
cubert_cube_dim cubert_cube_dim_for_units(uint32_t working_units, uint32_t plane_size,
                                          uint32_t max_units_per_cube, uint32_t num_cpu_cores) {
  uint32_t plane = plane_size ? plane_size : 1;
  uint32_t max_units = max_units_per_cube ? max_units_per_cube : UINT32_MAX;
  if (plane > max_units) plane = max_units;
  uint32_t plane_count = plane_count_per_cube(working_units, plane, num_cpu_cores);
  uint32_t limit = max_units / plane;
  uint32_t y = plane_count < limit ? plane_count : limit;
  if (y < 1) y = 1;
  return cubert_cube_dim_new_3d(plane, y, 1);
}

cubert_cube_dim cubert_cube_dim_new(const cubert_client *client, uint32_t working_units) {
  const cubert_device_properties *properties = client ? cubert_client_properties(client) : NULL;
  if (!properties) return cubert_cube_dim_new_3d(1, 1, 1);
  const cubert_hardware_properties *hw = &properties->hardware;
  return cubert_cube_dim_for_units(working_units, hw->plane_size_max, hw->max_units_per_cube,
                                   hw->num_cpu_cores);
}
