/* cubert — cube-count selection (geometry.c): its pure, client-free part, for tests and the
   client (the public calls are in cubert/geometry.h). */
#ifndef CUBERT_LIB_GEOMETRY_H
#define CUBERT_LIB_GEOMETRY_H

#include <stdint.h>

#include "cubert/geometry.h"

/* The reference CubeCountSelection::new without a client: spreads `num_cubes` within `max`
   (cubert_cube_count_spread) and reports EXACT when the product equals `num_cubes`, else
   APPROX with the product actually dispatched. Errors as cubert_cube_count_spread, plus
   TOO_MANY_RESOURCES when the dispatched product does not fit in 32 bits. */
cubert_status cubert_cube_count_selection_from(const uint32_t max[3], uint32_t num_cubes,
                                               cubert_cube_count_selection *out);

#endif /* CUBERT_LIB_GEOMETRY_H */
