/* The hand-phased twins of bench/natural_kernels.cube.c (issue 37's benchmark), written the way
   the project's fastest PHASED_KERNELs are (examples/sgemm.cube.c, examples/softmax.cube.c,
   kernels/reduce.cube.c): positions on UNIT_POS_X/Y (vectorisable index arithmetic), whole tiles
   loaded without guards where the cube lies inside the data (a guarded load does not vectorise)
   and through the checked, clamped path elsewhere, trees and scans branch-free over padded
   ping-pong arrays (one vectorised loop per level). Same launches, info words and results as
   the natural kernels, up to the rounding of the reduction and scan, whose padded slots add
   zeros. */
#include "cubert/cube.h"
#include "natural_kernels.h"

PHASED_KERNEL(reduce_tree_phased, (reduce_tree_slots, sh), (const float, in), (float, out)) {
  const uint64_t n = INFO_U64(0);
  const uint32_t units = CUBE_DIM_X;
  if (units > REDUCE_TREE_MAX || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;
  const uint64_t base = CUBE_POS * units;
  uint32_t top = 1;
  while (top < units) top *= 2;
  if (base + units <= n && n <= LEN(in)) {
    PHASE {
      sh->slot[0][UNIT_POS_X] = in[base + UNIT_POS_X];
      sh->slot[0][units + UNIT_POS_X] = 0.0f;
      sh->slot[1][units + UNIT_POS_X] = 0.0f;
    }
  } else {
    PHASE {
      const uint64_t i = base + UNIT_POS_X;
      sh->slot[0][UNIT_POS_X] = i < n ? LOAD(in, i) : 0.0f;
      sh->slot[0][units + UNIT_POS_X] = 0.0f;
      sh->slot[1][units + UNIT_POS_X] = 0.0f;
    }
  }
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    PHASE {
      sh->slot[1 - from][UNIT_POS_X] =
          sh->slot[from][UNIT_POS_X] + sh->slot[from][UNIT_POS_X + step];
    }
    SYNC_CUBE();
  }
  PHASE {
    if (UNIT_POS_X == 0) STORE(out, CUBE_POS, sh->slot[from][0]);
  }
}

/* One cell of the stencil from the tile (the same expression as the natural kernel's). */
CUBE_FN float hotspot_cell(CUBE_SHARED const hotspot_tile *sh, uint32_t tx, uint32_t ty, float p) {
  const float t = sh->t[ty + 1][tx + 1];
  const float ns = sh->t[ty][tx + 1] + sh->t[ty + 2][tx + 1] - 2.0f * t;
  const float ew = sh->t[ty + 1][tx] + sh->t[ty + 1][tx + 2] - 2.0f * t;
  return t + HOTSPOT_STEP *
                 (p + ns * HOTSPOT_RY + ew * HOTSPOT_RX + (HOTSPOT_AMBIENT - t) * HOTSPOT_RZ);
}

PHASED_KERNEL(hotspot_phased, (hotspot_tile, sh), (const float, temp), (const float, power),
              (float, out)) {
  const uint32_t nx = INFO_U32(0), ny = INFO_U32(1);
  if (CUBE_DIM_X != HOTSPOT_TILE || CUBE_DIM_Y != HOTSPOT_TILE || CUBE_DIM_Z != 1 || nx == 0 ||
      ny == 0)
    return;
  const uint32_t x0 = CUBE_POS_X * HOTSPOT_TILE, y0 = CUBE_POS_Y * HOTSPOT_TILE;
  const uint64_t cells = (uint64_t)nx * ny;
  /* The tile and its halo inside the grid, and the buffers that large: direct accesses. */
  const bool inner = x0 >= 1 && y0 >= 1 && x0 + HOTSPOT_TILE < nx && y0 + HOTSPOT_TILE < ny &&
                     cells <= LEN(temp) && cells <= LEN(power) && cells <= LEN(out);
  if (inner) {
    PHASE {
      sh->t[UNIT_POS_Y + 1][UNIT_POS_X + 1] =
          temp[(uint64_t)(y0 + UNIT_POS_Y) * nx + x0 + UNIT_POS_X];
    }
    PHASE {
      if (UNIT_POS_Y == 0) {
        const uint32_t k = UNIT_POS_X;
        sh->t[0][k + 1] = temp[(uint64_t)(y0 - 1) * nx + x0 + k];
        sh->t[HOTSPOT_TILE + 1][k + 1] = temp[(uint64_t)(y0 + HOTSPOT_TILE) * nx + x0 + k];
        sh->t[k + 1][0] = temp[(uint64_t)(y0 + k) * nx + x0 - 1];
        sh->t[k + 1][HOTSPOT_TILE + 1] = temp[(uint64_t)(y0 + k) * nx + x0 + HOTSPOT_TILE];
      }
    }
    SYNC_CUBE();
    PHASE {
      const uint64_t at = (uint64_t)(y0 + UNIT_POS_Y) * nx + x0 + UNIT_POS_X;
      out[at] = hotspot_cell(sh, UNIT_POS_X, UNIT_POS_Y, power[at]);
    }
    return;
  }
  PHASE {
    const uint32_t tx = UNIT_POS_X, ty = UNIT_POS_Y;
    const uint32_t cx = min(x0 + tx, nx - 1), cy = min(y0 + ty, ny - 1);
    sh->t[ty + 1][tx + 1] = LOAD(temp, (uint64_t)cy * nx + cx);
    if (tx == 0) sh->t[ty + 1][0] = LOAD(temp, (uint64_t)cy * nx + (cx ? cx - 1 : 0));
    if (tx == HOTSPOT_TILE - 1)
      sh->t[ty + 1][tx + 2] = LOAD(temp, (uint64_t)cy * nx + min(cx + 1, nx - 1));
    if (ty == 0) sh->t[0][tx + 1] = LOAD(temp, (uint64_t)(cy ? cy - 1 : 0) * nx + cx);
    if (ty == HOTSPOT_TILE - 1)
      sh->t[ty + 2][tx + 1] = LOAD(temp, (uint64_t)min(cy + 1, ny - 1) * nx + cx);
  }
  SYNC_CUBE();
  PHASE {
    const uint32_t x = x0 + UNIT_POS_X, y = y0 + UNIT_POS_Y;
    if (x < nx && y < ny) {
      const uint64_t at = (uint64_t)y * nx + x;
      STORE(out, at, hotspot_cell(sh, UNIT_POS_X, UNIT_POS_Y, LOAD(power, at)));
    }
  }
}

PHASED_KERNEL(scan_phased, (scan_slots, sh), (const float, x), (float, y)) {
  const uint64_t n = INFO_U64(0);
  const uint32_t units = CUBE_DIM_X;
  if (units > SCAN_MAX || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;
  const uint64_t base = CUBE_POS * units;
  const bool whole = base + units <= n && n <= LEN(x) && n <= LEN(y);
  if (whole) {
    PHASE {
      sh->v[0][UNIT_POS_X] = 0.0f;
      sh->v[1][UNIT_POS_X] = 0.0f;
      sh->v[0][units + UNIT_POS_X] = x[base + UNIT_POS_X];
    }
  } else {
    PHASE {
      const uint64_t i = base + UNIT_POS_X;
      sh->v[0][UNIT_POS_X] = 0.0f;
      sh->v[1][UNIT_POS_X] = 0.0f;
      sh->v[0][units + UNIT_POS_X] = i < n ? LOAD(x, i) : 0.0f;
    }
  }
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t offset = 1; offset < units; offset *= 2, from = 1 - from) {
    PHASE {
      const uint32_t at = units + UNIT_POS_X;
      sh->v[1 - from][at] = sh->v[from][at] + sh->v[from][at - offset];
    }
    SYNC_CUBE();
  }
  if (whole) {
    PHASE {
      y[base + UNIT_POS_X] = sh->v[from][units + UNIT_POS_X];
    }
  } else {
    PHASE {
      const uint64_t i = base + UNIT_POS_X;
      if (i < n) STORE(y, i, sh->v[from][units + UNIT_POS_X]);
    }
  }
}

PHASED_KERNEL(transpose_phased, (transpose_shared, sh), (const float, in), (float, out)) {
  const uint32_t rows = INFO_U32(0), cols = INFO_U32(1);
  if (CUBE_DIM_X != TRANSPOSE_TILE || CUBE_DIM_Y != TRANSPOSE_ROWS || CUBE_DIM_Z != 1) return;
  const uint32_t c0 = CUBE_POS_X * TRANSPOSE_TILE, r0 = CUBE_POS_Y * TRANSPOSE_TILE;
  const uint64_t cells = (uint64_t)rows * cols;
  const bool inner = c0 + TRANSPOSE_TILE <= cols && r0 + TRANSPOSE_TILE <= rows &&
                     cells <= LEN(in) && cells <= LEN(out);
  if (inner) {
    PHASE {
      for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS)
        sh->tile[UNIT_POS_Y + j][UNIT_POS_X] =
            in[(uint64_t)(r0 + UNIT_POS_Y + j) * cols + c0 + UNIT_POS_X];
    }
    SYNC_CUBE();
    PHASE {
      for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS)
        out[(uint64_t)(c0 + UNIT_POS_Y + j) * rows + r0 + UNIT_POS_X] =
            sh->tile[UNIT_POS_X][UNIT_POS_Y + j];
    }
    return;
  }
  PHASE {
    const uint32_t x = c0 + UNIT_POS_X;
    for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
      const uint32_t y = r0 + UNIT_POS_Y + j;
      if (x < cols && y < rows)
        sh->tile[UNIT_POS_Y + j][UNIT_POS_X] = LOAD(in, (uint64_t)y * cols + x);
    }
  }
  SYNC_CUBE();
  PHASE {
    const uint32_t x = r0 + UNIT_POS_X;
    for (uint32_t j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
      const uint32_t y = c0 + UNIT_POS_Y + j;
      if (x < rows && y < cols)
        STORE(out, (uint64_t)y * rows + x, sh->tile[UNIT_POS_X][UNIT_POS_Y + j]);
    }
  }
}
