/* Natural CUBE_KERNELs for bench_natural_kernels (issue 37): four barrier kernels written the
   way a GPU textbook writes them — one body per unit, SYNC_CUBE() between the steps, ordinary
   variables across barriers, no EXCLUSIVE or PHASE. Their hand-phased twins are in
   natural_kernels_phased.cube.c; the tiled SGEMM and the row softmax of the same set are the
   examples' pairs (examples/sgemm.cube.c, examples/softmax.cube.c). The build phases these
   kernels' CPU side (cubert_add_kernels, issue 37) unless their file is built with FIBERS;
   tests/unit/phase_forms.c checks that both forms give the same bits.

   reduce_tree_natural   a cube tree reduction: out[c] = the sum of in[c * units .. + units)
                         (elements past INFO n count as 0). 1-D cubes of 1 .. REDUCE_TREE_MAX
                         units, any count, powers of two or not; log2 steps, a barrier each.
   hotspot_natural       one step of a Rodinia-hotspot-like 5-point stencil on an nx x ny grid
                         (info nx, ny): a 16 x 16 tile plus its halo in shared memory, edges
                         clamped. Cube dim (16, 16, 1), count (ceil(nx / 16), ceil(ny / 16)).
   scan_natural          a cube's inclusive prefix sum, Hillis-Steele with two ping-pong
                         arrays (info n): y[i] = the sum of x over the cube's elements up to i.
                         1-D cubes of 1 .. SCAN_MAX units.
   transpose_natural     out (cols x rows) = the transpose of in (rows x cols) (info rows,
                         cols) through a 32 x 32 tile padded to 33 columns (no bank conflicts
                         on a GPU). Cube dim (32, 8, 1): each unit moves 4 rows of the tile;
                         count (ceil(cols / 32), ceil(rows / 32)). */
#include "natural_kernels.h"

#include "cubert/cube.h"

CUBE_KERNEL(reduce_tree_natural, (reduce_tree_shared, sh), (const float, in), (float, out)) {
  const uint64_t n = INFO_U64(0);
  const uint32_t units = CUBE_DIM_X, tid = UNIT_POS_X;
  if (units > REDUCE_TREE_MAX || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;
  const uint64_t i = CUBE_POS * units + tid;
  sh->partial[tid] = i < n ? LOAD(in, i) : 0.0f;
  SYNC_CUBE();
  uint32_t top = 1;
  while (top < units) top *= 2;
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    if (tid < step && tid + step < units) sh->partial[tid] += sh->partial[tid + step];
    SYNC_CUBE();
  }
  if (tid == 0) STORE(out, CUBE_POS, sh->partial[0]);
}

CUBE_KERNEL(hotspot_natural, (hotspot_tile, sh), (const float, temp), (const float, power),
            (float, out)) {
  const uint32_t nx = INFO_U32(0), ny = INFO_U32(1);
  if (CUBE_DIM_X != HOTSPOT_TILE || CUBE_DIM_Y != HOTSPOT_TILE || CUBE_DIM_Z != 1 || nx == 0 ||
      ny == 0)
    return;
  const uint32_t tx = UNIT_POS_X, ty = UNIT_POS_Y;
  const uint32_t x = CUBE_POS_X * HOTSPOT_TILE + tx, y = CUBE_POS_Y * HOTSPOT_TILE + ty;
  /* Units past the grid load the clamped edge: the tile then holds what the edge units'
     neighbours are (hotspot repeats the border cell). */
  const uint32_t cx = min(x, nx - 1), cy = min(y, ny - 1);
  sh->t[ty + 1][tx + 1] = LOAD(temp, (uint64_t)cy * nx + cx);
  if (tx == 0) sh->t[ty + 1][0] = LOAD(temp, (uint64_t)cy * nx + (cx ? cx - 1 : 0));
  if (tx == HOTSPOT_TILE - 1)
    sh->t[ty + 1][tx + 2] = LOAD(temp, (uint64_t)cy * nx + min(cx + 1, nx - 1));
  if (ty == 0) sh->t[0][tx + 1] = LOAD(temp, (uint64_t)(cy ? cy - 1 : 0) * nx + cx);
  if (ty == HOTSPOT_TILE - 1)
    sh->t[ty + 2][tx + 1] = LOAD(temp, (uint64_t)min(cy + 1, ny - 1) * nx + cx);
  SYNC_CUBE();
  if (x < nx && y < ny) {
    const float t = sh->t[ty + 1][tx + 1];
    const float ns = sh->t[ty][tx + 1] + sh->t[ty + 2][tx + 1] - 2.0f * t;
    const float ew = sh->t[ty + 1][tx] + sh->t[ty + 1][tx + 2] - 2.0f * t;
    const uint64_t at = (uint64_t)y * nx + x;
    STORE(out, at,
          t + HOTSPOT_STEP * (LOAD(power, at) + ns * HOTSPOT_RY + ew * HOTSPOT_RX +
                              (HOTSPOT_AMBIENT - t) * HOTSPOT_RZ));
  }
}

CUBE_KERNEL(scan_natural, (scan_shared, sh), (const float, x), (float, y)) {
  const uint64_t n = INFO_U64(0);
  const uint32_t units = CUBE_DIM_X, tid = UNIT_POS_X;
  if (units > SCAN_MAX || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;
  const uint64_t i = CUBE_POS * units + tid;
  sh->v[0][tid] = i < n ? LOAD(x, i) : 0.0f;
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t offset = 1; offset < units; offset *= 2) {
    float v = sh->v[from][tid];
    if (tid >= offset) v += sh->v[from][tid - offset];
    sh->v[1 - from][tid] = v;
    from = 1 - from;
    SYNC_CUBE();
  }
  if (i < n) STORE(y, i, sh->v[from][tid]);
}

CUBE_KERNEL(transpose_natural, (transpose_shared, sh), (const float, in), (float, out)) {
  const uint32_t rows = INFO_U32(0), cols = INFO_U32(1);
  if (CUBE_DIM_X != TRANSPOSE_TILE || CUBE_DIM_Y != TRANSPOSE_ROWS || CUBE_DIM_Z != 1) return;
  uint32_t x = CUBE_POS_X * TRANSPOSE_TILE + UNIT_POS_X;
  for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
    const uint32_t y = CUBE_POS_Y * TRANSPOSE_TILE + UNIT_POS_Y + j;
    if (x < cols && y < rows)
      sh->tile[UNIT_POS_Y + j][UNIT_POS_X] = LOAD(in, (uint64_t)y * cols + x);
  }
  SYNC_CUBE();
  x = CUBE_POS_Y * TRANSPOSE_TILE + UNIT_POS_X;
  for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
    const uint32_t y = CUBE_POS_X * TRANSPOSE_TILE + UNIT_POS_Y + j;
    if (x < rows && y < cols)
      STORE(out, (uint64_t)y * rows + x, sh->tile[UNIT_POS_X][UNIT_POS_Y + j]);
  }
}
