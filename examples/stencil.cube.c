/* One Jacobi step of the 2-D 5-point stencil on an nx x ny grid (row-major), in the kernel
   language (cubert/cube.h): every interior point becomes the mean of its four neighbours, the
   boundary is copied (fixed values). Info words: nx, ny. Launch: 2-D cubes, e.g. dim (16, 16, 1)
   and count (ceil(nx / 16), ceil(ny / 16), 1). Every launched unit is active (the second
   argument); units past the grid's edge return at the guard on (x, y).
   examples/stencil.c ping-pongs two buffers through a few steps. */
#include "cubert/cube.h"

UNIT_KERNEL(jacobi_step, (CUBE_COUNT * CUBE_DIM), (const float, in), (float, out)) {
  const uint32_t nx = INFO_U32(0), ny = INFO_U32(1), x = ABSOLUTE_POS_X, y = ABSOLUTE_POS_Y;
  if (x >= nx || y >= ny) return;
  const uint64_t i = (uint64_t)y * nx + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
    STORE(out, i, LOAD(in, i));
  else
    STORE(out, i,
          0.25f * (LOAD(in, i - 1) + LOAD(in, i + 1) + LOAD(in, i - nx) + LOAD(in, i + nx)));
}
