/* Tiled SGEMM, C = A * B (row-major, A is M x K, B is K x N, C is M x N), in the kernel
   language (cubert/cube.h). Info words: M, N, K. Launch: cube dim (16, 16, 1), cube count
   (ceil(N / 16), ceil(M / 16), 1); unit (x, y) of cube (cx, cy) computes C[cy*16 + y][cx*16 + x].

   The textbook GPU kernel: each cube walks K in 16-wide steps, stages a 16 x 16 tile of A and
   one of B in shared memory, waits at a barrier, multiplies the tiles, waits again. Any M, N, K:
   units outside C still load (zeros past the edges) and reach every barrier, they only skip the
   final store. Whole tiles load without guards (the bounds are checked once per cube), which
   on the CPU doubles the speed: a guarded load does not vectorise.

   The same body is written twice:
   - sgemm_tiled, PHASED_KERNEL: on the CPU server each PHASE is a loop over the cube's 256
     units (rows of 16 vectorised), so the barriers cost nothing and the accumulator is an
     EXCLUSIVE value;
   - sgemm_tiled_fibers, CUBE_KERNEL: the CUDA-style text, one fiber per unit on the CPU server,
     switched at each barrier.
   On OpenCL both are the same ordinary work-group kernel. A third kernel, sgemm_tiled_4rows, is
   the phased one register-blocked (below). examples/sgemm.c runs the three and checks them;
   bench/kernel_language.c times them. */
#include "cubert/cube.h"

#define SGEMM_TILE 16

typedef struct sgemm_tiles {
  float a[SGEMM_TILE][SGEMM_TILE]; /* a[y][k]: rows of A */
  float b[SGEMM_TILE][SGEMM_TILE]; /* b[k][x]: columns of B */
} sgemm_tiles;

PHASED_KERNEL(sgemm_tiled, (sgemm_tiles, sh), (const float, a), (const float, b), (float, c)) {
  const uint32_t m = INFO_U32(0), n = INFO_U32(1), k = INFO_U32(2);
  /* Cubes inside C whose buffers hold M x K and K x N take the whole-tile path: unguarded
     loads, which the CPU vectorises (a guarded load cannot be). The others, and the last
     partial K step, load through the checked, guarded path. */
  const bool inner = (uint64_t)m * k <= LEN(a) && (uint64_t)k * n <= LEN(b) &&
                     (CUBE_POS_Y + 1) * SGEMM_TILE <= m && (CUBE_POS_X + 1) * SGEMM_TILE <= n;
  EXCLUSIVE(float, acc);
  PHASE {
    MY(acc) = 0.0f;
  }
  for (uint32_t t = 0; t < k; t += SGEMM_TILE) {
    if (inner && t + SGEMM_TILE <= k) {
      PHASE {
        const uint32_t row = CUBE_POS_Y * SGEMM_TILE + UNIT_POS_Y;
        const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
        sh->a[UNIT_POS_Y][UNIT_POS_X] = a[(uint64_t)row * k + t + UNIT_POS_X];
        sh->b[UNIT_POS_Y][UNIT_POS_X] = b[(uint64_t)(t + UNIT_POS_Y) * n + col];
      }
    } else {
      PHASE {
        const uint32_t row = CUBE_POS_Y * SGEMM_TILE + UNIT_POS_Y;
        const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
        const uint32_t ka = t + UNIT_POS_X, kb = t + UNIT_POS_Y;
        sh->a[UNIT_POS_Y][UNIT_POS_X] = row < m && ka < k ? LOAD(a, (uint64_t)row * k + ka) : 0.0f;
        sh->b[UNIT_POS_Y][UNIT_POS_X] = kb < k && col < n ? LOAD(b, (uint64_t)kb * n + col) : 0.0f;
      }
    }
    SYNC_CUBE();
    PHASE {
      float s = MY(acc);
      for (uint32_t i = 0; i < SGEMM_TILE; ++i) s += sh->a[UNIT_POS_Y][i] * sh->b[i][UNIT_POS_X];
      MY(acc) = s;
    }
    SYNC_CUBE();
  }
  PHASE {
    const uint32_t row = CUBE_POS_Y * SGEMM_TILE + UNIT_POS_Y;
    const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
    if (row < m && col < n) STORE(c, (uint64_t)row * n + col, MY(acc));
  }
}

CUBE_KERNEL(sgemm_tiled_fibers, (sgemm_tiles, sh), (const float, a), (const float, b), (float, c)) {
  const uint32_t m = INFO_U32(0), n = INFO_U32(1), k = INFO_U32(2);
  const bool inner = (uint64_t)m * k <= LEN(a) && (uint64_t)k * n <= LEN(b) &&
                     (CUBE_POS_Y + 1) * SGEMM_TILE <= m && (CUBE_POS_X + 1) * SGEMM_TILE <= n;
  const uint32_t row = CUBE_POS_Y * SGEMM_TILE + UNIT_POS_Y;
  const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
  float acc = 0.0f;
  for (uint32_t t = 0; t < k; t += SGEMM_TILE) {
    if (inner && t + SGEMM_TILE <= k) {
      sh->a[UNIT_POS_Y][UNIT_POS_X] = a[(uint64_t)row * k + t + UNIT_POS_X];
      sh->b[UNIT_POS_Y][UNIT_POS_X] = b[(uint64_t)(t + UNIT_POS_Y) * n + col];
    } else {
      const uint32_t ka = t + UNIT_POS_X, kb = t + UNIT_POS_Y;
      sh->a[UNIT_POS_Y][UNIT_POS_X] = row < m && ka < k ? LOAD(a, (uint64_t)row * k + ka) : 0.0f;
      sh->b[UNIT_POS_Y][UNIT_POS_X] = kb < k && col < n ? LOAD(b, (uint64_t)kb * n + col) : 0.0f;
    }
    SYNC_CUBE();
    for (uint32_t i = 0; i < SGEMM_TILE; ++i) acc += sh->a[UNIT_POS_Y][i] * sh->b[i][UNIT_POS_X];
    SYNC_CUBE();
  }
  if (row < m && col < n) STORE(c, (uint64_t)row * n + col, acc);
}

/* sgemm_tiled_4rows: the same 16 x 16 tiles of C, register-blocked: cube dim (16, 4, 1), and
   unit (x, y) computes the four rows y, y + 4, y + 8, y + 12 of column x, in four EXCLUSIVE
   accumulators. Each B element read from shared memory feeds four independent sums instead of
   one (more arithmetic per load, and four addition chains the CPU overlaps), and each unit
   loads four elements of each tile. Other cube dims do nothing. */
PHASED_KERNEL(sgemm_tiled_4rows, (sgemm_tiles, sh), (const float, a), (const float, b),
              (float, c)) {
  const uint32_t m = INFO_U32(0), n = INFO_U32(1), k = INFO_U32(2);
  if (CUBE_DIM_X != SGEMM_TILE || CUBE_DIM_Y != SGEMM_TILE / 4 || CUBE_DIM_Z != 1) return;
  const bool inner = (uint64_t)m * k <= LEN(a) && (uint64_t)k * n <= LEN(b) &&
                     (CUBE_POS_Y + 1) * SGEMM_TILE <= m && (CUBE_POS_X + 1) * SGEMM_TILE <= n;
  EXCLUSIVE(float, acc0);
  EXCLUSIVE(float, acc1);
  EXCLUSIVE(float, acc2);
  EXCLUSIVE(float, acc3);
  PHASE {
    MY(acc0) = MY(acc1) = MY(acc2) = MY(acc3) = 0.0f;
  }
  for (uint32_t t = 0; t < k; t += SGEMM_TILE) {
    if (inner && t + SGEMM_TILE <= k) {
      PHASE {
        const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
        for (uint32_t j = 0; j < SGEMM_TILE; j += 4) {
          const uint32_t y = UNIT_POS_Y + j, row = CUBE_POS_Y * SGEMM_TILE + y;
          sh->a[y][UNIT_POS_X] = a[(uint64_t)row * k + t + UNIT_POS_X];
          sh->b[y][UNIT_POS_X] = b[(uint64_t)(t + y) * n + col];
        }
      }
    } else {
      PHASE {
        const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X, ka = t + UNIT_POS_X;
        for (uint32_t j = 0; j < SGEMM_TILE; j += 4) {
          const uint32_t y = UNIT_POS_Y + j, row = CUBE_POS_Y * SGEMM_TILE + y, kb = t + y;
          sh->a[y][UNIT_POS_X] = row < m && ka < k ? LOAD(a, (uint64_t)row * k + ka) : 0.0f;
          sh->b[y][UNIT_POS_X] = kb < k && col < n ? LOAD(b, (uint64_t)kb * n + col) : 0.0f;
        }
      }
    }
    SYNC_CUBE();
    PHASE {
      float s0 = MY(acc0), s1 = MY(acc1), s2 = MY(acc2), s3 = MY(acc3);
      for (uint32_t i = 0; i < SGEMM_TILE; ++i) {
        const float bv = sh->b[i][UNIT_POS_X];
        s0 += sh->a[UNIT_POS_Y][i] * bv;
        s1 += sh->a[UNIT_POS_Y + 4][i] * bv;
        s2 += sh->a[UNIT_POS_Y + 8][i] * bv;
        s3 += sh->a[UNIT_POS_Y + 12][i] * bv;
      }
      MY(acc0) = s0;
      MY(acc1) = s1;
      MY(acc2) = s2;
      MY(acc3) = s3;
    }
    SYNC_CUBE();
  }
  PHASE {
    const uint32_t row = CUBE_POS_Y * SGEMM_TILE + UNIT_POS_Y;
    const uint32_t col = CUBE_POS_X * SGEMM_TILE + UNIT_POS_X;
    if (col < n) {
      if (row < m) STORE(c, (uint64_t)row * n + col, MY(acc0));
      if (row + 4 < m) STORE(c, (uint64_t)(row + 4) * n + col, MY(acc1));
      if (row + 8 < m) STORE(c, (uint64_t)(row + 8) * n + col, MY(acc2));
      if (row + 12 < m) STORE(c, (uint64_t)(row + 12) * n + col, MY(acc3));
    }
  }
}
