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
   On OpenCL both are the same ordinary work-group kernel. examples/sgemm.c runs both and checks
   them; bench/kernel_language.c times them. */
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
