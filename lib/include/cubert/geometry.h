/** @file
   cubert — cube counts and cube dims, and the heuristics that choose them. */
#ifndef CUBERT_GEOMETRY_H
#define CUBERT_GEOMETRY_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
typedef struct cubert_handle cubert_handle; /**< Device memory (handle.h). */

/** Units of one cube along x, y, z. */
typedef struct cubert_cube_dim {
  uint32_t x; /**< units along x */
  uint32_t y; /**< units along y */
  uint32_t z; /**< units along z */
} cubert_cube_dim;

/** Cubes to dispatch: static (x, y, z), or dynamic — three u32 read from the first 12 bytes of
   a buffer at launch time (then x, y, z are ignored). The cube count does not own the handle. */
typedef struct cubert_cube_count {
  uint32_t x;             /**< cubes along x */
  uint32_t y;             /**< cubes along y */
  uint32_t z;             /**< cubes along z */
  cubert_handle *dynamic; /**< NULL for a static count */
} cubert_cube_count;

/** Whether a selected cube count is exact or rounded up. */
typedef enum cubert_cube_count_selection_kind {
  CUBERT_CUBE_COUNT_EXACT = 0,  /**< product equals the requested count */
  CUBERT_CUBE_COUNT_APPROX = 1, /**< more cubes than requested: kernels must bound-check */
} cubert_cube_count_selection_kind;

/** A cube count chosen for a number of cubes (cubert_cube_count_select). */
typedef struct cubert_cube_count_selection {
  cubert_cube_count_selection_kind kind; /**< exact or approximate */
  cubert_cube_count cube_count;          /**< the count to launch */
  uint32_t num_cubes;                    /**< the product actually dispatched */
} cubert_cube_count_selection;

/** A static cube count of x * y * z cubes. Pure. */
CUBERT_API cubert_cube_count cubert_cube_count_new_3d(uint32_t x, uint32_t y, uint32_t z);
/** A static cube count of (x, 1, 1). Pure. */
CUBERT_API cubert_cube_count cubert_cube_count_new_1d(uint32_t x);
/** A static cube count of (x, y, 1). Pure. */
CUBERT_API cubert_cube_count cubert_cube_count_new_2d(uint32_t x, uint32_t y);
/** A dynamic cube count: three u32 read from the first 12 bytes of `xyz_u32` when the launch
   runs (the count does not own the handle). */
CUBERT_API cubert_cube_count cubert_cube_count_dynamic(cubert_handle *xyz_u32);
/** 1 when `count` is static and dispatches no cube (x, y or z is 0: cubert_client_launch then
   does nothing), else 0; a dynamic count is not empty until its buffer is read at launch (the
   reference's CubeCount::is_empty, which answers false for dynamic counts). Pure. */
CUBERT_API int cubert_cube_count_is_empty(cubert_cube_count count);
/** A cube dim of x * y * z units. Pure. */
CUBERT_API cubert_cube_dim cubert_cube_dim_new_3d(uint32_t x, uint32_t y, uint32_t z);
/** Units per cube: x*y*z as 64 bits (no overflow). */
CUBERT_API uint64_t cubert_cube_dim_num_elems(cubert_cube_dim dim);

/** Splits `num_cubes` over x, y, z within `max` (reference algorithm: halve an axis while it
   exceeds its limit, doubling the next; stop at the first axis that already fits).
   Pure. Returns TOO_MANY_RESOURCES (requested = num_cubes, max = product of max) where the
   reference would exceed the z limit or overflow; INVALID_ARGUMENT for a zero limit. */
CUBERT_API cubert_status cubert_cube_count_spread(const uint32_t max[3], uint32_t num_cubes,
                                                  uint32_t out[3]);

/** The reference CubeDim::new heuristic, without a client. plane count = min(cores, units) on
   a CPU server (num_cpu_cores > 0), else the largest power of two <= min(8, units/plane).
   Result (plane_size, min(max_units_per_cube/plane_size, plane_count) >= 1, 1). */
CUBERT_API cubert_cube_dim cubert_cube_dim_for_units(uint32_t working_units, uint32_t plane_size,
                                                     uint32_t max_units_per_cube,
                                                     uint32_t num_cpu_cores /*0: none*/);

/** cubert_cube_count_spread within the device's max_cube_count: EXACT when the product equals
   num_cubes, else APPROX (more cubes). INVALID_ARGUMENT for a NULL or released client or a
   NULL out; the errors of cubert_cube_count_spread. */
CUBERT_API cubert_status cubert_cube_count_select(const cubert_client *client, uint32_t num_cubes,
                                                  cubert_cube_count_selection *out);
/** cubert_cube_dim_for_units with the device's plane size, max units per cube and cores;
   (1, 1, 1) for a NULL or released client. */
CUBERT_API cubert_cube_dim cubert_cube_dim_new(const cubert_client *client, uint32_t working_units);

CUBERT_EXTERN_C_END

#endif /* CUBERT_GEOMETRY_H */
