/* The large-tile f32 matmul kernel for GPUs, included by kernels/matmul.cube.c once per K
   depth. Before including, define:
     MB_NAME  the kernel's name          MB_TK  the K depth of a shared tile (8 or 16)
   The macros are undefined again at the end, so the file can be included again.

   Layout (the info words and buffers are those of kernels/matmul.cube.c, which explains them):
   cube dim (16, 16, 1); the cube at (cx, cy, cz) computes the 128 x 128 block of C at rows
   cy * 128, columns cx * 128, batch cz (+ the batch base of info word 16). Each of the 256
   units owns an 8 x 8 register tile: rows 4 y .. 4 y + 3 and 64 + 4 y .. 64 + 4 y + 3, columns
   4 x .. 4 x + 3 and 64 + 4 x .. 64 + 4 x + 3 of the block (x, y = UNIT_POS_X, UNIT_POS_Y), so
   that each K step reads two f32x4 of the A tile and two of the B tile from shared memory (64
   fused multiply-adds against 4 vector reads). On a GPU the 32 units of a warp (x 0..15, two
   values of y) read 16 consecutive f32x4 of the B tile (conflict-free) and two of the A tile
   (broadcasts).

   Shared memory holds two buffers of each tile, stored K-major (a[k][row], b[k][col]), read
   as f32x4 through a union. K advances MB_TK at a time with one barrier per step: every unit
   first loads its share of the next tiles from global memory into registers, then multiplies
   the current tiles, then writes its registers into the other buffer; the barrier then makes
   the other buffer complete and the current one free (double buffering: the global loads of
   step t + 1 overlap the arithmetic of step t).

   Global loads: each unit moves MB_TK / 2 elements of each tile, in runs of 4 that are
   consecutive in the operand's contiguous direction: along K for a row-major A or a
   transposed (column-major) B, along M or N for a column-major A or a row-major B. Whole tiles
   of operands with a unit stride whose block lies inside the buffer (checked once per cube
   against LEN) take unguarded f32x4 loads; anything else (other strides, edges of C or K)
   takes checked LOADs with zeros outside the matrix, in the same places. Units outside C
   compute on zeros and skip the store. The K loop is two loops: the interior steps where both
   operands take the unguarded loads (no checked path in the hot loop, which keeps NVIDIA's
   compiler under the register cap of CUBE_OPENCL_OPTIONS), then the general one for the rest.
   The CPU server runs it too (tests), but it is written for GPUs: ops/matmul.c measures it only
   on GPU devices.

   Optionally define MB_MN (to 1) for the variant whose interior loop is compiled for one
   layout: A contiguous along M and B along N (a column-major or packed A, a row-major B), with
   the layout's strides and runs as constants, so the hot loop holds neither the other layout's
   index arithmetic nor its stores; other layouts take the general loop. */

#define MB_DIM 16
#define MB_BM 128
#define MB_BN 128
#define MB_LA (MB_TK * MB_BM / (MB_DIM * MB_DIM)) /* elements of each tile per unit */
#define MB_KQ (MB_TK / 4)                         /* runs of 4 along K per row of a tile */
#define MB_CAT2_(a, b) a##b
#define MB_CAT_(a, b) MB_CAT2_(a, b)
#define MB_SHARED MB_CAT_(MB_NAME, _tiles)

typedef struct MB_SHARED {
  union {
    float f[MB_TK][MB_BM];
    f32x4 v[MB_TK][MB_BM / 4];
  } a[2]; /* a[buffer].f[k][row] */
  union {
    float f[MB_TK][MB_BN];
    f32x4 v[MB_TK][MB_BN / 4];
  } b[2]; /* b[buffer].f[k][col] */
} MB_SHARED;

/* Position (o_ along M or N, k_ along K) of the g-th run of 4 that unit `tid` moves, for an
   operand contiguous along K (kc) or along M / N (!kc); element j of the run is at k_ + j
   (kc) or o_ + j (!kc). */
#define MB_RUN(kc, g, o_, k_)                          \
  {                                                    \
    const uint32_t q_ = tid + (MB_DIM * MB_DIM) * (g); \
    if (kc) {                                          \
      o_ = q_ / MB_KQ;                                 \
      k_ = q_ % MB_KQ * 4;                             \
    } else {                                           \
      k_ = q_ / (MB_BM / 4);                           \
      o_ = q_ % (MB_BM / 4) * 4;                       \
    }                                                  \
  }
/* Loads this unit's share of the tile of operand X (buffer X, first element x0, strides s_o
   along M / N and s_k along K, block start o0 of n_o) at K offset t into regs. */
#define MB_LOAD(X, regs, x0, o0, n_o, s_o, s_k, kc, fast, t)                           \
  for (uint32_t g = 0; g < MB_LA / 4; ++g) {                                           \
    uint32_t o_, k_;                                                                   \
    MB_RUN(kc, g, o_, k_)                                                              \
    const uint64_t oo_ = (o0) + o_, kk_ = (t) + k_;                                    \
    if (fast) {                                                                        \
      VSTORE_F32X4(VLOAD_F32X4(X + (x0) + oo_ * (s_o) + kk_ * (s_k)), regs + 4 * g);   \
    } else {                                                                           \
      for (uint32_t j = 0; j < 4; ++j) {                                               \
        const uint64_t oj_ = oo_ + ((kc) ? 0 : j), kj_ = kk_ + ((kc) ? j : 0);         \
        regs[4 * g + j] =                                                              \
            oj_ < (n_o) && kj_ < k ? LOAD(X, (x0) + oj_ * (s_o) + kj_ * (s_k)) : 0.0f; \
      }                                                                                \
    }                                                                                  \
  }
/* MB_LOAD for a whole tile of an operand with a unit stride inside the buffer. */
#define MB_LOAD_FAST(X, regs, x0, o0, s_o, s_k, kc, t)                                            \
  for (uint32_t g = 0; g < MB_LA / 4; ++g) {                                                      \
    uint32_t o_, k_;                                                                              \
    MB_RUN(kc, g, o_, k_)                                                                         \
    VSTORE_F32X4(VLOAD_F32X4(X + (x0) + ((o0) + o_) * (s_o) + ((t) + k_) * (s_k)), regs + 4 * g); \
  }
/* Writes regs into the shared tile T (sh->a[buf] or sh->b[buf]), K-major. */
#define MB_PUT(T, regs, kc)                                               \
  for (uint32_t g = 0; g < MB_LA / 4; ++g) {                              \
    uint32_t o_, k_;                                                      \
    MB_RUN(kc, g, o_, k_)                                                 \
    if (kc) {                                                             \
      for (uint32_t j = 0; j < 4; ++j) T.f[k_ + j][o_] = regs[4 * g + j]; \
    } else {                                                              \
      T.v[k_][o_ / 4] = VLOAD_F32X4(regs + 4 * g);                        \
    }                                                                     \
  }
#define MB_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define MB_FMA(i)                                     \
  {                                                   \
    const f32x4 av_ = VSPLAT_F32X4(av[i]);            \
    s[2 * (i)] = VFMA(av_, b_lo, s[2 * (i)]);         \
    s[2 * (i) + 1] = VFMA(av_, b_hi, s[2 * (i) + 1]); \
  }

/* acc += the product of the current shared tiles (buffer cur), this unit's 8 x 8. */
#define MB_MULTIPLY(cur)                                           \
  {                                                                \
    f32x4 s[16];                                                   \
    for (int i = 0; i < 16; ++i) s[i] = MY_AT(acc, i);             \
    UNROLL for (int kk = 0; kk < MB_TK; ++kk) {                    \
      const f32x4 b_lo = sh->b[cur].v[kk][UNIT_POS_X];             \
      const f32x4 b_hi = sh->b[cur].v[kk][UNIT_POS_X + MB_DIM];    \
      float av[8];                                                 \
      VSTORE_F32X4(sh->a[cur].v[kk][UNIT_POS_Y], av);              \
      VSTORE_F32X4(sh->a[cur].v[kk][UNIT_POS_Y + MB_DIM], av + 4); \
      MB_ROWS(MB_FMA)                                              \
    }                                                              \
    for (int i = 0; i < 16; ++i) MY_AT(acc, i) = s[i];             \
  }

MM_PHASED_KERNEL(MB_NAME, (MB_SHARED, sh), (const float, a), (const float, b), (float, c)) {
  const uint64_t m = INFO_U64(0), n = INFO_U64(1), k = INFO_U64(2);
  const uint64_t bt = INFO_U64(16) + CUBE_POS_Z;
  const uint64_t a0 = INFO_U64(4) + bt * INFO_U64(5), a_sm = INFO_U64(6), a_sk = INFO_U64(7);
  const uint64_t b0 = INFO_U64(8) + bt * INFO_U64(9), b_sk = INFO_U64(10), b_sn = INFO_U64(11);
  const uint64_t c0 = INFO_U64(12) + bt * INFO_U64(13), c_sm = INFO_U64(14), c_sn = INFO_U64(15);
  const float alpha = INFO_F32(17);
  /* Other cube dims do nothing (the host launches 16 x 16). */
  const bool shape_ok = CUBE_DIM_X == MB_DIM && CUBE_DIM_Y == MB_DIM && CUBE_DIM_Z == 1;
  const uint64_t row0 = (uint64_t)CUBE_POS_Y * MB_BM, col0 = (uint64_t)CUBE_POS_X * MB_BN;
  const bool rows_in = row0 + MB_BM <= m, cols_in = col0 + MB_BN <= n;
  /* The furthest element a whole K range of this block reads, per operand (checked once). */
  const bool a_fits = rows_in && k > 0 && a0 + (row0 + MB_BM - 1) * a_sm + (k - 1) * a_sk < LEN(a);
  const bool b_fits = cols_in && k > 0 && b0 + (k - 1) * b_sk + (col0 + MB_BN - 1) * b_sn < LEN(b);
  /* Runs along K (A row-major, B column-major) or along M / N (the other layouts, and the
     checked path of any other stride). */
  const bool a_kc = a_sk == 1, b_kc = b_sk == 1 && b_sn != 1;
  const bool a_unit = a_fits && (a_sk == 1 || a_sm == 1), b_unit = b_fits && (b_kc || b_sn == 1);

  EXCLUSIVE_ARRAY(f32x4, acc, 16);
  PHASE {
    for (int i = 0; i < 16; ++i) MY_AT(acc, i) = VSPLAT_F32X4(0.0f);
    if (shape_ok && k > 0) {
      const uint32_t tid = UNIT_POS_Y * MB_DIM + UNIT_POS_X;
      const bool whole = MB_TK <= k;
      float pa[MB_LA], pb[MB_LA];
      MB_LOAD(a, pa, a0, row0, m, a_sm, a_sk, a_kc, whole && a_unit, 0)
      MB_LOAD(b, pb, b0, col0, n, b_sn, b_sk, b_kc, whole && b_unit, 0)
      MB_PUT(sh->a[0], pa, a_kc)
      MB_PUT(sh->b[0], pb, b_kc)
    }
  }
  SYNC_CUBE();
  uint32_t cur = 0;
  uint64_t t = 0;
  /* Interior steps: the next tiles are whole and both operands take unguarded f32x4 loads, so
     the hot loop holds no checked path (fewer live registers on a GPU). */
#ifdef MB_MN
  const bool fast = shape_ok && a_unit && b_unit && !a_kc && !b_kc && a_sm == 1 && b_sn == 1;
#define MB_A_SM_ 1
#define MB_B_SN_ 1
#define MB_A_KC_ false
#define MB_B_KC_ false
#else
  const bool fast = shape_ok && a_unit && b_unit;
#define MB_A_SM_ a_sm
#define MB_B_SN_ b_sn
#define MB_A_KC_ a_kc
#define MB_B_KC_ b_kc
#endif
  for (; fast && t + 2 * MB_TK <= k; t += MB_TK) {
    const uint64_t tn = t + MB_TK;
    PHASE {
      const uint32_t tid = UNIT_POS_Y * MB_DIM + UNIT_POS_X;
      float pa[MB_LA], pb[MB_LA];
      MB_LOAD_FAST(a, pa, a0, row0, MB_A_SM_, a_sk, MB_A_KC_, tn)
      MB_LOAD_FAST(b, pb, b0, col0, MB_B_SN_, b_sk, MB_B_KC_, tn)
      MB_MULTIPLY(cur)
      MB_PUT(sh->a[cur ^ 1u], pa, MB_A_KC_)
      MB_PUT(sh->b[cur ^ 1u], pb, MB_B_KC_)
    }
    SYNC_CUBE();
    cur ^= 1u;
  }
  /* The rest: edge tiles, other strides, the last step. */
  for (; shape_ok && t < k; t += MB_TK) {
    const uint64_t tn = t + MB_TK;
    const bool more = tn < k, whole = tn + MB_TK <= k;
    PHASE {
      const uint32_t tid = UNIT_POS_Y * MB_DIM + UNIT_POS_X;
      float pa[MB_LA], pb[MB_LA];
      if (more) {
        MB_LOAD(a, pa, a0, row0, m, a_sm, a_sk, a_kc, whole && a_unit, tn)
        MB_LOAD(b, pb, b0, col0, n, b_sn, b_sk, b_kc, whole && b_unit, tn)
      }
      MB_MULTIPLY(cur)
      if (more) {
        MB_PUT(sh->a[cur ^ 1u], pa, a_kc)
        MB_PUT(sh->b[cur ^ 1u], pb, b_kc)
      }
    }
    SYNC_CUBE();
    cur ^= 1u;
  }
  const bool c_fast = shape_ok && rows_in && cols_in && c_sn == 1 &&
                      c0 + (row0 + MB_BM - 1) * c_sm + col0 + MB_BN - 1 < LEN(c);
  PHASE {
    for (uint32_t i = 0; i < 8; ++i) {
      const uint64_t row = row0 + (i < 4 ? 0 : MB_BM / 2) + UNIT_POS_Y * 4 + i % 4;
      for (uint32_t h = 0; h < 2; ++h) {
        const uint64_t col = col0 + h * (MB_BN / 2) + UNIT_POS_X * 4;
        const f32x4 v = MY_AT(acc, 2 * i + h) * alpha;
        if (c_fast) {
          VSTORE_F32X4(v, c + c0 + row * c_sm + col);
        } else {
          float o[4];
          VSTORE_F32X4(v, o);
          for (uint32_t j = 0; j < 4; ++j)
            if (shape_ok && row < m && col + j < n)
              STORE(c, c0 + row * c_sm + (col + j) * c_sn, o[j]);
        }
      }
    }
  }
}

#undef MB_B_KC_
#undef MB_A_KC_
#undef MB_B_SN_
#undef MB_A_SM_
#undef MB_MN
#undef MB_MULTIPLY
#undef MB_FMA
#undef MB_LOAD_FAST
#undef MB_ROWS
#undef MB_PUT
#undef MB_LOAD
#undef MB_RUN
#undef MB_SHARED
#undef MB_CAT_
#undef MB_CAT2_
#undef MB_KQ
#undef MB_LA
#undef MB_BN
#undef MB_BM
#undef MB_DIM
#undef MB_NAME
#undef MB_TK
