/* cubert — cube counts and cube dims, and the heuristics that choose them. */
#ifndef CUBERT_GEOMETRY_H
#define CUBERT_GEOMETRY_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client;
typedef struct cubert_handle cubert_handle;

/* Units of one cube along x, y, z. */
typedef struct cubert_cube_dim {
  uint32_t x, y, z;
} cubert_cube_dim;

/* Cubes to dispatch: static (x, y, z), or dynamic — three u32 read from the first 12 bytes of
   a buffer at launch time (then x, y, z are ignored). The cube count does not own the handle. */
typedef struct cubert_cube_count {
  uint32_t x, y, z;
  cubert_handle *dynamic; /* NULL for a static count */
} cubert_cube_count;

typedef enum cubert_cube_count_selection_kind {
  CUBERT_CUBE_COUNT_EXACT = 0,  /* product equals the requested count */
  CUBERT_CUBE_COUNT_APPROX = 1, /* more cubes than requested: kernels must bound-check */
} cubert_cube_count_selection_kind;

typedef struct cubert_cube_count_selection {
  cubert_cube_count_selection_kind kind;
  cubert_cube_count cube_count;
  uint32_t num_cubes; /* the product actually dispatched */
} cubert_cube_count_selection;

CUBERT_API cubert_cube_count cubert_cube_count_new_3d(uint32_t x, uint32_t y, uint32_t z);
CUBERT_API cubert_cube_count cubert_cube_count_new_1d(uint32_t x);
CUBERT_API cubert_cube_count cubert_cube_count_dynamic(cubert_handle *xyz_u32);
CUBERT_API cubert_cube_dim cubert_cube_dim_new_3d(uint32_t x, uint32_t y, uint32_t z);
/* Units per cube: x*y*z as 64 bits (no overflow). */
CUBERT_API uint64_t cubert_cube_dim_num_elems(cubert_cube_dim dim);

/* Splits `num_cubes` over x, y, z within `max` (reference algorithm: halve an axis while it
   exceeds its limit, doubling the next; stop at the first axis that already fits).
   Pure. Returns TOO_MANY_RESOURCES (requested = num_cubes, max = product of max) where the
   reference would exceed the z limit or overflow; INVALID_ARGUMENT for a zero limit. */
CUBERT_API cubert_status cubert_cube_count_spread(const uint32_t max[3], uint32_t num_cubes,
                                                  uint32_t out[3]);

/* The reference CubeDim::new heuristic, without a client. plane count = min(cores, units) on
   a CPU server (num_cpu_cores > 0), else the largest power of two <= min(8, units/plane).
   Result (plane_size, min(max_units_per_cube/plane_size, plane_count) >= 1, 1). */
CUBERT_API cubert_cube_dim cubert_cube_dim_for_units(uint32_t working_units, uint32_t plane_size,
                                                     uint32_t max_units_per_cube,
                                                     uint32_t num_cpu_cores /*0: none*/);

/* With a client: uses the device's max_cube_count / plane size / cores. */
CUBERT_API cubert_status cubert_cube_count_select(const cubert_client *client, uint32_t num_cubes,
                                                  cubert_cube_count_selection *out);
CUBERT_API cubert_cube_dim cubert_cube_dim_new(const cubert_client *client, uint32_t working_units);

CUBERT_EXTERN_C_END

#endif /* CUBERT_GEOMETRY_H */
