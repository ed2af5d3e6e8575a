/* cubert_op_copy's kernels, typed by the machine word that moves an element (u8, u16, u32,
   u64; kernels/ops/copy.c splits wider elements into words along an extra innermost axis):
   - copy_<w>_c: both sides dense (elementwise_ops.h's contiguous layout, offsets included);
   - copy_<w>_r: rank <= 2, rows (elementwise_ops.h's rows layout; only out and a are used);
   - copy_<w>_nd: any strides on both sides (the strided layout; only out and a are used);
   - transpose_<w>: out[i][j] = in[i + j * P], a 2-D transpose in 32 x 32 tiles through shared
     memory, so that both sides are read and written along rows (info below).

   Transpose info: [0] R, [1] C (out is R x C with unit stride along C), [2] out offset, [3] out
   row stride, [4] in offset, [5] P = in's stride along C (its stride along R is 1), [6] tiles
   along C = ceil(C / 32), [7] tiles in all. One cube per tile, CUBE_POS the tile (a spread cube
   count may add cubes past the last tile; they do nothing), cube dim (32, d) with 32 % d == 0
   (the host uses (32, 8), which takes the fast path: a fixed number of rows per unit); other dims
   copy nothing. On the CPU server it is a phased kernel: each phase is a loop over a tile row that
   reads or writes 32 contiguous elements. */
#include "cubert/cube.h"
#include "elementwise_ops.h"

#define TILE 32
#define TILE_ROWS 8 /* the host's cube dim along y: (TILE, TILE_ROWS) */

#define COPY_KERNELS_(T, w)                                                                       \
  UNIT_KERNEL(copy_##w##_c, INFO_U64(0), (T, out), (const T, a)) {                                \
    STORE_UNIT(out, LOAD_UNIT(a));                                                                \
  }                                                                                               \
  UNIT_KERNEL(copy_##w##_nd, INFO_U64(0), (T, out), (const T, a)) {                               \
    EW_ND_OFFSETS_(po, pa, pb)                                                                    \
    (void)pb;                                                                                     \
    STORE(out, po, LOAD(a, pa));                                                                  \
  }                                                                                               \
  PHASED_KERNEL(copy_##w##_r, NO_SHARED, (T, out), (const T, a)) {                                \
    EW_R_PROLOGUE_(out, a, a)                                                                     \
    (void)pb;                                                                                     \
    if (fast) {                                                                                   \
      PHASE {                                                                                     \
        out[po + UNIT_POS] = sa ? a[pa + UNIT_POS] : a[pa];                                       \
      }                                                                                           \
    } else {                                                                                      \
      PHASE {                                                                                     \
        if (UNIT_POS < cnt) STORE(out, po + UNIT_POS * so, LOAD(a, pa + UNIT_POS * sa));          \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  typedef struct transpose_tile_##w {                                                             \
    T t[TILE][TILE + 1]; /* + 1: column reads hit distinct banks on GPUs */                       \
  } transpose_tile_##w;                                                                           \
  PHASED_KERNEL(transpose_##w, (transpose_tile_##w, sh), (T, out), (const T, a)) {                \
    const uint64_t rows = INFO_U64(0), cols = INFO_U64(1), tiles_c = INFO_U64(6);                 \
    if (CUBE_DIM_X != TILE || CUBE_DIM_Z != 1 || TILE % CUBE_DIM_Y != 0 || tiles_c == 0 ||        \
        CUBE_POS >= INFO_U64(7))                                                                  \
      return;                                                                                     \
    const uint64_t i0 = CUBE_POS / tiles_c * TILE, j0 = CUBE_POS % tiles_c * TILE;                \
    const uint64_t oo = INFO_U64(2), os = INFO_U64(3), io = INFO_U64(4), ip = INFO_U64(5);        \
    /* A whole tile inside both buffers (checked once, at its far corners) moves unchecked. */    \
    const bool full = i0 + TILE <= rows && j0 + TILE <= cols &&                                   \
                      ew_span_ok_(io + i0 + (TILE - 1) + j0 * ip, TILE, ip, LEN(a)) &&            \
                      ew_span_ok_(oo + i0 * os + j0 + (TILE - 1), TILE, os, LEN(out));            \
    if (full && CUBE_DIM_Y == TILE_ROWS) {                                                        \
      /* The host's cube dim: a fixed trip count, so each unit issues its TILE / TILE_ROWS loads  \
         before the first store instead of one load at a time */                                  \
      PHASE {                                                                                     \
        const uint64_t from = io + i0 + UNIT_POS_X + (j0 + UNIT_POS_Y) * ip;                      \
        T v[TILE / TILE_ROWS];                                                                    \
        for (uint32_t r = 0; r < TILE / TILE_ROWS; ++r) v[r] = a[from + r * TILE_ROWS * ip];      \
        for (uint32_t r = 0; r < TILE / TILE_ROWS; ++r)                                           \
          sh->t[UNIT_POS_Y + r * TILE_ROWS][UNIT_POS_X] = v[r];                                   \
      }                                                                                           \
    } else if (full) {                                                                            \
      for (uint32_t k = 0; k < TILE; k += CUBE_DIM_Y) {                                           \
        PHASE {                                                                                   \
          sh->t[UNIT_POS_Y + k][UNIT_POS_X] =                                                     \
              a[io + i0 + UNIT_POS_X + (j0 + UNIT_POS_Y + k) * ip];                               \
        }                                                                                         \
      }                                                                                           \
    } else {                                                                                      \
      for (uint32_t k = 0; k < TILE; k += CUBE_DIM_Y) {                                           \
        PHASE {                                                                                   \
          const uint64_t i = i0 + UNIT_POS_X, j = j0 + UNIT_POS_Y + k;                            \
          if (i < rows && j < cols) sh->t[UNIT_POS_Y + k][UNIT_POS_X] = LOAD(a, io + i + j * ip); \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
    SYNC_CUBE();                                                                                  \
    if (full && CUBE_DIM_Y == TILE_ROWS) {                                                        \
      PHASE {                                                                                     \
        const uint64_t to = oo + (i0 + UNIT_POS_Y) * os + j0 + UNIT_POS_X;                        \
        for (uint32_t r = 0; r < TILE / TILE_ROWS; ++r)                                           \
          out[to + r * TILE_ROWS * os] = sh->t[UNIT_POS_X][UNIT_POS_Y + r * TILE_ROWS];           \
      }                                                                                           \
    } else if (full) {                                                                            \
      for (uint32_t k = 0; k < TILE; k += CUBE_DIM_Y) {                                           \
        PHASE {                                                                                   \
          out[oo + (i0 + UNIT_POS_Y + k) * os + j0 + UNIT_POS_X] =                                \
              sh->t[UNIT_POS_X][UNIT_POS_Y + k];                                                  \
        }                                                                                         \
      }                                                                                           \
    } else {                                                                                      \
      for (uint32_t k = 0; k < TILE; k += CUBE_DIM_Y) {                                           \
        PHASE {                                                                                   \
          const uint64_t i = i0 + UNIT_POS_Y + k, j = j0 + UNIT_POS_X;                            \
          if (i < rows && j < cols)                                                               \
            STORE(out, oo + i * os + j, sh->t[UNIT_POS_X][UNIT_POS_Y + k]);                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

COPY_KERNELS_(uint8_t, u8)
COPY_KERNELS_(uint16_t, u16)
COPY_KERNELS_(uint32_t, u32)
COPY_KERNELS_(uint64_t, u64)
