/* cubert — internal, pure parts of cube-count selection (for tests and the client). */
#ifndef CUBERT_GEOMETRY_INTERNAL_H
#define CUBERT_GEOMETRY_INTERNAL_H

#include <stdint.h>

#include "cubert/geometry.h"

/* The reference CubeCountSelection::new without a client: spreads `num_cubes` within `max`
   (cubert_cube_count_spread) and reports EXACT when the product equals `num_cubes`, else
   APPROX with the product actually dispatched. Errors as cubert_cube_count_spread, plus
   TOO_MANY_RESOURCES when the dispatched product does not fit in 32 bits. */
cubert_status cubert_cube_count_selection_from(const uint32_t max[3], uint32_t num_cubes,
                                               cubert_cube_count_selection *out);

#endif /* CUBERT_GEOMETRY_INTERNAL_H */
