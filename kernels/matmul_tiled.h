/* One tiled, register-blocked matmul kernel, included by kernels/matmul*.cube.c once per tile
   shape and element type. Before including, define:
     MM_NAME  the kernel's name          MM_T   its element type (float or double)
     MM_RM    rows per unit              MM_RN  columns per unit
     MM_CONSEC (optional, default 0) 1: a unit's columns are consecutive (see MM_COL)
     MM_INFO_ALPHA(k)  the info word k read as MM_T (INFO_F32 or INFO_F64)
   The macros are undefined again at the end, so the file can be included again.

   Layout (the info words and buffers are those of kernels/matmul.cube.c, which explains them):
   cube dim (16, 16, 1); the cube at (cx, cy, cz) computes the MM_BM x MM_BN block of C at rows
   cy * MM_BM, columns cx * MM_BN, batch cz (+ the batch base of info word 16). Unit (x, y)
   owns rows y + 16 i (i < MM_RM) and columns x + 16 j (j < MM_RN) of the block, so that on
   the CPU (a phase is a loop over x) neighbouring units own neighbouring columns: every read
   of the B tile and every accumulator is one contiguous vector, and an A element is one value
   broadcast over the row of units. On a GPU the same mapping reads the B tile conflict-free
   and each A element as a broadcast. With MM_CONSEC the unit owns columns x * MM_RN + j
   instead: one contiguous run per unit, for compilers that vectorise inside a unit (PoCL).

   K advances MM_TK at a time: the cube stages an MM_BM x MM_TK tile of A and an MM_TK x MM_BN
   tile of B in shared memory (two barriers per step), then every unit adds MM_TK rank-1
   updates into its MM_RM x MM_RN accumulators (EXCLUSIVE_ARRAY). The loads take one of three
   forms, chosen per cube and step by values that are the same for every unit:
     - whole tiles of an operand whose inner stride is 1 and whose tile lies inside its buffer
       (bounded once per cube against LEN): unguarded, contiguous along x (vectorised on the
       CPU, coalesced on a GPU) -- row-major A and B, and transposed A or B, each have one;
     - anything else (other strides, partial tiles at the edges of C or K): checked LOAD with
       zeros outside the matrix. This is the general path: any strides, any sizes.
   Units outside C compute on zeros and skip the store. */

#ifndef MM_CONSEC
#define MM_CONSEC 0
#endif
/* Column of C (within the block) of a unit's j-th output: strided by the cube's width (0), or
   MM_RN consecutive columns per unit (1: a unit's reads of a B tile row are one contiguous
   run, which a compiler that vectorises inside a unit, as PoCL's LLVM does, packs). */
#define MM_COL(j) (MM_CONSEC ? UNIT_POS_X * MM_RN + (j) : UNIT_POS_X + MM_DX * (j))
#define MM_DX 16
#define MM_DY 16
#define MM_TK 16
#define MM_BM (MM_DY * MM_RM)
#define MM_BN (MM_DX * MM_RN)
#define MM_CAT2_(a, b) a##b
#define MM_CAT_(a, b) MM_CAT2_(a, b)
#define MM_SHARED MM_CAT_(MM_NAME, _tiles)

typedef struct MM_SHARED {
  MM_T a[MM_BM][MM_TK + 1]; /* a[row][k]; +1: a transposed load writes columns conflict-free */
  MM_T b[MM_TK][MM_BN];     /* b[k][col] */
} MM_SHARED;

MM_PHASED_KERNEL(MM_NAME, (MM_SHARED, sh), (const MM_T, a), (const MM_T, b), (MM_T, c)) {
  const uint64_t m = INFO_U64(0), n = INFO_U64(1), k = INFO_U64(2);
  const uint64_t bt = INFO_U64(16) + CUBE_POS_Z;
  const uint64_t a0 = INFO_U64(4) + bt * INFO_U64(5), a_sm = INFO_U64(6), a_sk = INFO_U64(7);
  const uint64_t b0 = INFO_U64(8) + bt * INFO_U64(9), b_sk = INFO_U64(10), b_sn = INFO_U64(11);
  const uint64_t c0 = INFO_U64(12) + bt * INFO_U64(13), c_sm = INFO_U64(14), c_sn = INFO_U64(15);
  const MM_T alpha = MM_INFO_ALPHA(17);
  /* Other cube dims do nothing (the host launches 16 x 16); the guard keeps the shared arrays
     in range whatever a caller does. */
  const bool shape_ok = CUBE_DIM_X == MM_DX && CUBE_DIM_Y == MM_DY && CUBE_DIM_Z == 1;
  const uint64_t row0 = (uint64_t)CUBE_POS_Y * MM_BM, col0 = (uint64_t)CUBE_POS_X * MM_BN;
  /* Whole-block interior: every row and column of the block lies inside C. */
  const bool rows_in = row0 + MM_BM <= m, cols_in = col0 + MM_BN <= n;
  /* The furthest element a whole K range of this block reads, per operand, so that the
     unguarded loads below stay inside the buffers (checked once, here). */
  const bool a_fits = rows_in && k > 0 && a0 + (row0 + MM_BM - 1) * a_sm + (k - 1) * a_sk < LEN(a);
  const bool b_fits = cols_in && k > 0 && b0 + (k - 1) * b_sk + (col0 + MM_BN - 1) * b_sn < LEN(b);
  const bool a_rowmajor = a_fits && a_sk == 1, a_colmajor = a_fits && a_sm == 1 && !a_rowmajor;
  const bool b_rowmajor = b_fits && b_sn == 1, b_colmajor = b_fits && b_sk == 1 && !b_rowmajor;

  EXCLUSIVE_ARRAY(MM_T, acc, MM_RM * MM_RN);
  PHASE {
    for (int i = 0; i < MM_RM * MM_RN; ++i) MY_AT(acc, i) = (MM_T)0;
  }
  for (uint64_t t = 0; shape_ok && t < k; t += MM_TK) {
    const bool whole_k = t + MM_TK <= k;
    /* ---- A tile: MM_BM rows x MM_TK columns ---- */
    if (whole_k && a_rowmajor) {
      PHASE {
        for (int i = 0; i < MM_RM; ++i) {
          const uint32_t r = UNIT_POS_Y + MM_DY * i;
          sh->a[r][UNIT_POS_X] = a[a0 + (row0 + r) * a_sm + t + UNIT_POS_X];
        }
      }
    } else if (whole_k && a_colmajor) {
      /* x runs along rows (contiguous), y along k */
      PHASE {
        for (int i = 0; i < MM_RM; ++i) {
          const uint32_t r = UNIT_POS_X + MM_DX * i;
          sh->a[r][UNIT_POS_Y] = a[a0 + (t + UNIT_POS_Y) * a_sk + row0 + r];
        }
      }
    } else {
      PHASE {
        for (int i = 0; i < MM_RM; ++i) {
          const uint32_t r = UNIT_POS_Y + MM_DY * i;
          const uint64_t row = row0 + r, kk = t + UNIT_POS_X;
          sh->a[r][UNIT_POS_X] = row < m && kk < k ? LOAD(a, a0 + row * a_sm + kk * a_sk) : (MM_T)0;
        }
      }
    }
    /* ---- B tile: MM_TK rows x MM_BN columns ---- */
    if (whole_k && b_rowmajor) {
      PHASE {
        for (int j = 0; j < MM_RN; ++j) {
          const uint32_t cl = UNIT_POS_X + MM_DX * j;
          sh->b[UNIT_POS_Y][cl] = b[b0 + (t + UNIT_POS_Y) * b_sk + col0 + cl];
        }
      }
    } else if (whole_k && b_colmajor) {
      /* x runs along k (contiguous), y along columns */
      PHASE {
        for (int j = 0; j < MM_RN; ++j) {
          const uint32_t cl = UNIT_POS_Y + MM_DY * j;
          sh->b[UNIT_POS_X][cl] = b[b0 + (col0 + cl) * b_sn + t + UNIT_POS_X];
        }
      }
    } else {
      PHASE {
        for (int j = 0; j < MM_RN; ++j) {
          const uint32_t cl = UNIT_POS_X + MM_DX * j;
          const uint64_t col = col0 + cl, kk = t + UNIT_POS_Y;
          sh->b[UNIT_POS_Y][cl] =
              kk < k && col < n ? LOAD(b, b0 + kk * b_sk + col * b_sn) : (MM_T)0;
        }
      }
    }
    SYNC_CUBE();
    PHASE {
      MM_T s[MM_RM * MM_RN];
      for (int i = 0; i < MM_RM * MM_RN; ++i) s[i] = MY_AT(acc, i);
      for (int kk = 0; kk < MM_TK; ++kk) {
        MM_T bv[MM_RN];
        for (int j = 0; j < MM_RN; ++j) bv[j] = sh->b[kk][MM_COL(j)];
        for (int i = 0; i < MM_RM; ++i) {
          const MM_T av = sh->a[UNIT_POS_Y + MM_DY * i][kk];
          for (int j = 0; j < MM_RN; ++j) s[i * MM_RN + j] = MM_FMA(av, bv[j], s[i * MM_RN + j]);
        }
      }
      for (int i = 0; i < MM_RM * MM_RN; ++i) MY_AT(acc, i) = s[i];
    }
    SYNC_CUBE();
  }
  PHASE {
    for (int i = 0; i < MM_RM; ++i) {
      const uint64_t row = row0 + UNIT_POS_Y + MM_DY * i;
      for (int j = 0; j < MM_RN; ++j) {
        const uint64_t col = col0 + MM_COL(j);
        if (shape_ok && row < m && col < n)
          STORE(c, c0 + row * c_sm + col * c_sn, alpha * MY_AT(acc, i * MM_RN + j));
      }
    }
  }
}

#undef MM_SHARED
#undef MM_CAT_
#undef MM_CAT2_
#undef MM_BN
#undef MM_BM
#undef MM_TK
#undef MM_DY
#undef MM_DX
#undef MM_CONSEC
#undef MM_COL
#undef MM_NAME
#undef MM_RM
#undef MM_RN
