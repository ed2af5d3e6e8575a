/* The row softmax of kernels/softmax.cube.c (f32) and softmax_f64.cube.c (f64), written once:
   the including file defines SM_T (the element type) and SM_NAME (the kernel's name).

   One cube per row (1-D cubes of up to SM_MAX_UNITS units). Three passes over the row, the
   last two of which hit the cache for rows up to a few hundred KiB, so memory sees about one
   read and one write of the data:
     1. each unit takes the max of a strided share of the row (unit u: columns u, u + units, ...
        so neighbouring units read neighbouring elements), then a tree over the units;
     2. each unit writes e = exp(x - max) for its share into out and sums its e's, then a tree;
     3. each unit scales its share of out by 1 / sum.
   The trees are the branch-free ping-pong trees of examples/softmax.cube.c (any unit count;
   slots past the units hold the identity). A row of -inf gives NaN (-inf - -inf), as the
   formula does; NaN anywhere in a row makes the row NaN.
   out may be in (same offset and strides): each element is read before its unit writes it.
   Info words: kernels.h (CUBERT_KERNEL_SOFTMAX_INFO). */
#define SM_MAX_UNITS 256

/* SM_EXP: exp as OpenCL's built-in on devices; on the CPU server the f32 kernel uses
   softmax_expf_ below, because the C library's expf is a scalar call that blocks
   vectorisation of the phase loops (4096² softmax ran at 6% of the triad with it). */
#ifndef SM_EXP
#define SM_EXP(x) exp(x)
#endif
#define SM_MAX_KEPT 7

/* The trees' operators: the maximum with NaN winning (a NaN anywhere makes the row NaN), and
   the sum. */
#define SM_MAXNAN(a, b) (((b) > (a) || (b) != (b)) ? (b) : (a))
#define SM_ADD(a, b) ((a) + (b))
/* A branch-free ping-pong tree over `pair` (SM_T [2][2 * SM_MAX_UNITS]), as in
   examples/softmax.cube.c: each unit has stored its value in pair[0][unit] and OP's identity in
   pair[0][units + unit] and pair[1][units + unit], so any unit count works (`top` is the power
   of two at or above `units`). Every unit gets the result in `dst`; the closing barrier lets
   the caller reuse the slots. */
#define SM_TREE(pair, OP, dst)                                                           \
  SYNC_CUBE();                                                                           \
  {                                                                                      \
    uint32_t sm_from = 0;                                                                \
    for (uint32_t sm_step = top / 2; sm_step > 0; sm_step /= 2, sm_from = 1 - sm_from) { \
      PHASE {                                                                            \
        (pair)[1 - sm_from][UNIT_POS_X] =                                                \
            OP((pair)[sm_from][UNIT_POS_X], (pair)[sm_from][UNIT_POS_X + sm_step]);      \
      }                                                                                  \
      SYNC_CUBE();                                                                       \
    }                                                                                    \
    (dst) = (pair)[sm_from][0];                                                          \
  }                                                                                      \
  SYNC_CUBE()
/* The first elements of row `row` in in and out, into bi and bo: the row's index split over
   the kept dimensions (info words 7..), each part times its strides. */
#define SM_ROW_BASES(row, bi, bo)                          \
  do {                                                     \
    uint64_t sm_rem = (row);                               \
    bi = INFO_U64(4);                                      \
    bo = INFO_U64(5);                                      \
    for (uint32_t sm_d = kr; sm_d-- > 0;) {                \
      const uint64_t sm_len = INFO_U64(7 + sm_d);          \
      const uint64_t sm_cd = sm_len ? sm_rem % sm_len : 0; \
      sm_rem = sm_len ? sm_rem / sm_len : 0;               \
      bi += sm_cd * INFO_U64(7 + kr + sm_d);               \
      bo += sm_cd * INFO_U64(7 + 2 * kr + sm_d);           \
    }                                                      \
  } while (0)

typedef struct SM_SHARED {
  SM_T slot[2][2 * SM_MAX_UNITS];
} SM_SHARED;

/* PHASED_KERNEL pastes its name: expand SM_NAME first. */
#define SM_KERNEL_(name, ...) PHASED_KERNEL(name, __VA_ARGS__)
SM_KERNEL_(SM_NAME, (SM_SHARED, sh), (const SM_T, in), (SM_T, out)) {
  const uint32_t kr = INFO_U32(0), units = CUBE_DIM_X;
  const uint64_t C = INFO_U64(1), si = INFO_U64(2), so = INFO_U64(3), rows = INFO_U64(6);
  const uint64_t row = CUBE_POS;
  if (row >= rows || C == 0 || units > SM_MAX_UNITS || CUBE_DIM_Y * CUBE_DIM_Z != 1 ||
      kr > SM_MAX_KEPT)
    return;
  uint64_t bi, bo;
  SM_ROW_BASES(row, bi, bo);
  /* The passes index in and out directly (the CPU loops vectorise): bound the row's last
     elements by the buffers, through one checked access that validate mode reports. */
  const uint64_t li = bi + (C - 1) * si, lo = bo + (C - 1) * so;
  if (li < bi || lo < bo || (si && C - 1 > (UINT64_MAX - bi) / si) ||
      (so && C - 1 > (UINT64_MAX - bo) / so) || li >= LEN(in) || lo >= LEN(out)) {
    PHASE {
      if (UNIT_POS_X == 0) (void)LOAD(in, li);
    }
    return;
  }
  const uint64_t full = C / units, rest = C % units;
  const bool unit_stride = si == 1 && so == 1;
  uint32_t top = 1;
  while (top < units) top *= 2;

  /* Loops over the row's blocks of `units` columns sit outside the phases, so on the CPU each
     phase is one loop over neighbouring columns (contiguous and vectorised when the strides
     are 1; the general case is the same loop with strided accesses). */
  EXCLUSIVE(SM_T, acc);
  /* 1. The row's maximum (a NaN propagates). */
  PHASE {
    MY(acc) = -INFINITY;
  }
  uint64_t r0 = 0;
  if (unit_stride) {
    /* Four blocks per phase: a quarter of the phases' loop overhead on the CPU. */
    for (; r0 + 4 <= full; r0 += 4) {
      const uint64_t at = bi + r0 * units;
      PHASE {
        const uint64_t u = at + UNIT_POS_X;
        const SM_T x0 = in[u], x1 = in[u + units], x2 = in[u + 2 * units], x3 = in[u + 3 * units];
        const SM_T m01 = SM_MAXNAN(x0, x1), m23 = SM_MAXNAN(x2, x3);
        const SM_T m = SM_MAXNAN(m01, m23);
        MY(acc) = SM_MAXNAN(MY(acc), m);
      }
    }
  }
  if (unit_stride) {
    for (uint64_t r = r0; r < full; ++r) {
      const uint64_t at = bi + r * units;
      PHASE {
        const SM_T x = in[at + UNIT_POS_X];
        MY(acc) = SM_MAXNAN(MY(acc), x);
      }
    }
  } else {
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t at = r * units;
      PHASE {
        const SM_T x = in[bi + (at + UNIT_POS_X) * si];
        MY(acc) = SM_MAXNAN(MY(acc), x);
      }
    }
  }
  PHASE {
    if (UNIT_POS_X < rest) {
      const SM_T x = in[bi + (full * units + UNIT_POS_X) * si];
      MY(acc) = SM_MAXNAN(MY(acc), x);
    }
    sh->slot[0][UNIT_POS_X] = MY(acc);
    sh->slot[0][units + UNIT_POS_X] = -INFINITY;
    sh->slot[1][units + UNIT_POS_X] = -INFINITY;
  }
  SM_T row_max;
  SM_TREE(sh->slot, SM_MAXNAN, row_max);

  /* 2. e = exp(x - max) into out, and the sum of the e's. */
  PHASE {
    MY(acc) = 0;
  }
  r0 = 0;
  if (unit_stride) {
    for (; r0 + 4 <= full; r0 += 4) {
      const uint64_t at = r0 * units;
      PHASE {
        const uint64_t ui = bi + at + UNIT_POS_X, uo = bo + at + UNIT_POS_X;
        const SM_T e0 = SM_EXP(in[ui] - row_max), e1 = SM_EXP(in[ui + units] - row_max);
        const SM_T e2 = SM_EXP(in[ui + 2 * units] - row_max);
        const SM_T e3 = SM_EXP(in[ui + 3 * units] - row_max);
        out[uo] = e0;
        out[uo + units] = e1;
        out[uo + 2 * units] = e2;
        out[uo + 3 * units] = e3;
        MY(acc) += (e0 + e1) + (e2 + e3);
      }
    }
    for (uint64_t r = r0; r < full; ++r) {
      const uint64_t at = r * units;
      PHASE {
        const SM_T e = SM_EXP(in[bi + at + UNIT_POS_X] - row_max);
        out[bo + at + UNIT_POS_X] = e;
        MY(acc) += e;
      }
    }
  } else {
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t at = r * units;
      PHASE {
        const uint64_t j = at + UNIT_POS_X;
        const SM_T e = SM_EXP(in[bi + j * si] - row_max);
        out[bo + j * so] = e;
        MY(acc) += e;
      }
    }
  }
  PHASE {
    if (UNIT_POS_X < rest) {
      const uint64_t j = full * units + UNIT_POS_X;
      const SM_T e = SM_EXP(in[bi + j * si] - row_max);
      out[bo + j * so] = e;
      MY(acc) += e;
    }
    sh->slot[0][UNIT_POS_X] = MY(acc);
    sh->slot[0][units + UNIT_POS_X] = 0;
    sh->slot[1][units + UNIT_POS_X] = 0;
  }
  SM_T total;
  SM_TREE(sh->slot, SM_ADD, total);
  const SM_T scale = (SM_T)1 / total;

  /* 3. Scale. */
  if (unit_stride) {
    uint64_t r = 0;
    for (; r + 4 <= full; r += 4) {
      const uint64_t at = bo + r * units;
      PHASE {
        const uint64_t u = at + UNIT_POS_X;
        out[u] *= scale;
        out[u + units] *= scale;
        out[u + 2 * units] *= scale;
        out[u + 3 * units] *= scale;
      }
    }
    for (; r < full; ++r) {
      const uint64_t at = bo + r * units;
      PHASE {
        out[at + UNIT_POS_X] *= scale;
      }
    }
  } else {
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t at = r * units;
      PHASE {
        out[bo + (at + UNIT_POS_X) * so] *= scale;
      }
    }
  }
  PHASE {
    if (UNIT_POS_X < rest) out[bo + (full * units + UNIT_POS_X) * so] *= scale;
  }
}

/* SM_ONLINE_NAME (optional): the same softmax in two passes over the row instead of three.
     1. each unit keeps a running maximum m and a sum s of exp(x - m) over its share, four
        blocks at a time: the four blocks' maximum m' updates m, s is rescaled by exp(m - m')
        and the blocks' exp(x - m') are added (1.25 exps per element); then a tree combines the
        units' (m, s) pairs the same way;
     2. each unit writes exp(x - max) / sum for its share.
   The only pass that reads the row from memory now computes too, so the exps hide the memory
   latency that the three-pass kernel's first pass (a bare maximum) waits on, and the scaling
   pass is gone; in exchange, 2.25 exps per element instead of 1. Which wins depends on the
   device (exp against memory), so cubert_op_softmax tunes between the two.
   -inf: a rescale from m = -inf to m' = -inf multiplies by 1 (not exp(NaN)), and blocks whose
   maximum is -inf add 0, so a row that starts with -inf is exact; a row of -inf still gives
   NaN in pass 2, as the formula and the three-pass kernel do. NaN propagates through m. */
#ifdef SM_ONLINE_NAME
/* exp(from - to) to rescale a sum kept relative to `from` to one relative to `to` >= from. */
#define SM_RESCALE(from, to) ((from) == (to) ? (SM_T)1 : SM_EXP((from) - (to)))

typedef struct SM_ONLINE_SHARED {
  SM_T m[2][2 * SM_MAX_UNITS], s[2][2 * SM_MAX_UNITS];
} SM_ONLINE_SHARED;

SM_KERNEL_(SM_ONLINE_NAME, (SM_ONLINE_SHARED, sh), (const SM_T, in), (SM_T, out)) {
  const uint32_t kr = INFO_U32(0), units = CUBE_DIM_X;
  const uint64_t C = INFO_U64(1), si = INFO_U64(2), so = INFO_U64(3), rows = INFO_U64(6);
  const uint64_t row = CUBE_POS;
  if (row >= rows || C == 0 || units > SM_MAX_UNITS || CUBE_DIM_Y * CUBE_DIM_Z != 1 ||
      kr > SM_MAX_KEPT)
    return;
  uint64_t bi, bo;
  SM_ROW_BASES(row, bi, bo);
  const uint64_t li = bi + (C - 1) * si, lo = bo + (C - 1) * so;
  if (li < bi || lo < bo || (si && C - 1 > (UINT64_MAX - bi) / si) ||
      (so && C - 1 > (UINT64_MAX - bo) / so) || li >= LEN(in) || lo >= LEN(out)) {
    PHASE {
      if (UNIT_POS_X == 0) (void)LOAD(in, li);
    }
    return;
  }
  const uint64_t full = C / units, rest = C % units;
  const bool unit_stride = si == 1 && so == 1;
  uint32_t top = 1;
  while (top < units) top *= 2;

  /* 1. Running maximum and sum per unit. */
  EXCLUSIVE(SM_T, m);
  EXCLUSIVE(SM_T, s);
  PHASE {
    MY(m) = -INFINITY;
    MY(s) = 0;
  }
  uint64_t r0 = 0;
  if (unit_stride) {
    for (; r0 + 4 <= full; r0 += 4) {
      const uint64_t at = bi + r0 * units;
      PHASE {
        const uint64_t u = at + UNIT_POS_X;
        const SM_T x0 = in[u], x1 = in[u + units], x2 = in[u + 2 * units], x3 = in[u + 3 * units];
        const SM_T mb = SM_MAXNAN(SM_MAXNAN(x0, x1), SM_MAXNAN(x2, x3));
        const SM_T mo = MY(m), mn = SM_MAXNAN(mo, mb);
        const SM_T e = (SM_EXP(x0 - mn) + SM_EXP(x1 - mn)) + (SM_EXP(x2 - mn) + SM_EXP(x3 - mn));
        MY(s) = MY(s) * SM_RESCALE(mo, mn) + (mb == -INFINITY ? (SM_T)0 : e);
        MY(m) = mn;
      }
    }
  }
  /* The blocks left over (every block when the strides are not 1), one at a time. */
  for (uint64_t r = r0; r < full; ++r) {
    const uint64_t at = r * units;
    PHASE {
      const SM_T x = in[bi + (at + UNIT_POS_X) * si];
      const SM_T mo = MY(m), mn = SM_MAXNAN(mo, x);
      MY(s) = MY(s) * SM_RESCALE(mo, mn) + (x == -INFINITY ? (SM_T)0 : SM_EXP(x - mn));
      MY(m) = mn;
    }
  }
  PHASE {
    if (UNIT_POS_X < rest) {
      const SM_T x = in[bi + (full * units + UNIT_POS_X) * si];
      const SM_T mo = MY(m), mn = SM_MAXNAN(mo, x);
      MY(s) = MY(s) * SM_RESCALE(mo, mn) + (x == -INFINITY ? (SM_T)0 : SM_EXP(x - mn));
      MY(m) = mn;
    }
    sh->m[0][UNIT_POS_X] = MY(m);
    sh->s[0][UNIT_POS_X] = MY(s);
    sh->m[0][units + UNIT_POS_X] = -INFINITY;
    sh->s[0][units + UNIT_POS_X] = 0;
    sh->m[1][units + UNIT_POS_X] = -INFINITY;
    sh->s[1][units + UNIT_POS_X] = 0;
  }
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    PHASE {
      const SM_T ma = sh->m[from][UNIT_POS_X], mb = sh->m[from][UNIT_POS_X + step];
      const SM_T mn = SM_MAXNAN(ma, mb);
      sh->s[1 - from][UNIT_POS_X] = sh->s[from][UNIT_POS_X] * SM_RESCALE(ma, mn) +
                                    sh->s[from][UNIT_POS_X + step] * SM_RESCALE(mb, mn);
      sh->m[1 - from][UNIT_POS_X] = mn;
    }
    SYNC_CUBE();
  }
  const SM_T row_max = sh->m[from][0], scale = (SM_T)1 / sh->s[from][0];

  /* 2. out = exp(x - max) / sum. */
  r0 = 0;
  if (unit_stride) {
    for (; r0 + 4 <= full; r0 += 4) {
      const uint64_t at = r0 * units;
      PHASE {
        const uint64_t ui = bi + at + UNIT_POS_X, uo = bo + at + UNIT_POS_X;
        const SM_T e0 = SM_EXP(in[ui] - row_max), e1 = SM_EXP(in[ui + units] - row_max);
        const SM_T e2 = SM_EXP(in[ui + 2 * units] - row_max);
        const SM_T e3 = SM_EXP(in[ui + 3 * units] - row_max);
        out[uo] = e0 * scale;
        out[uo + units] = e1 * scale;
        out[uo + 2 * units] = e2 * scale;
        out[uo + 3 * units] = e3 * scale;
      }
    }
  }
  for (uint64_t r = r0; r < full; ++r) {
    const uint64_t at = r * units;
    PHASE {
      const uint64_t j = at + UNIT_POS_X;
      out[bo + j * so] = SM_EXP(in[bi + j * si] - row_max) * scale;
    }
  }
  PHASE {
    if (UNIT_POS_X < rest) {
      const uint64_t j = full * units + UNIT_POS_X;
      out[bo + j * so] = SM_EXP(in[bi + j * si] - row_max) * scale;
    }
  }
}
#undef SM_RESCALE
#endif /* SM_ONLINE_NAME */

/* Whether the row starting at bi / bo ends inside in and out (no wrap past 2^64). */
#define SM_ROW_FITS(bi, bo)                                                                  \
  (!((si && C - 1 > (UINT64_MAX - (bi)) / si) || (so && C - 1 > (UINT64_MAX - (bo)) / so) || \
     (bi) + (C - 1) * si >= LEN(in) || (bo) + (C - 1) * so >= LEN(out)))

/* SM_UNITS_NAME (optional): one unit per row, alone through the three passes, with no shared
   memory and no barriers. For short rows (a classifier's ten classes) the cube forms spend a
   cube, two trees and their barriers on a row that one unit reads in a few loads; here the
   units of a cube take neighbouring rows. On PoCL a kernel without barriers also compiles in a
   fraction of the time (no work-group loops around barrier regions): what a cold first run
   pays. cubert_op_softmax offers it for short rows only (kernels/ops/softmax.c: a long row
   would serialise on one unit). -inf and NaN: as the three-pass kernel. */
#ifdef SM_UNITS_NAME
#define SM_UNIT_KERNEL_(name, ...) UNIT_KERNEL(name, __VA_ARGS__)
SM_UNIT_KERNEL_(SM_UNITS_NAME, INFO_U64(6), (const SM_T, in), (SM_T, out)) {
  const uint32_t kr = INFO_U32(0);
  const uint64_t C = INFO_U64(1), si = INFO_U64(2), so = INFO_U64(3);
  if (C == 0 || kr > SM_MAX_KEPT) return;
  uint64_t bi, bo;
  SM_ROW_BASES(UNIT_ID, bi, bo);
  if (!SM_ROW_FITS(bi, bo)) {
    (void)LOAD(in, bi + (C - 1) * si); /* reported in validate mode */
    return;
  }
  SM_T row_max = -INFINITY;
  for (uint64_t j = 0; j < C; ++j) row_max = SM_MAXNAN(row_max, in[bi + j * si]);
  SM_T sum = 0;
  for (uint64_t j = 0; j < C; ++j) {
    const SM_T e = SM_EXP(in[bi + j * si] - row_max);
    out[bo + j * so] = e;
    sum += e;
  }
  const SM_T scale = (SM_T)1 / sum;
  for (uint64_t j = 0; j < C; ++j) out[bo + j * so] *= scale;
}
#endif /* SM_UNITS_NAME */

/* SM_ROWS_NAME (optional): the three-pass softmax over several consecutive rows per cube
   (ceil(rows / CUBE_COUNT) of them), pipelined so that one pass reads memory, not two:
     0. (the cube's first row only) the row's maximum, as pass 1 above;
     1. for each row, its pass 2 (e = exp(x - max) into out, and their sum) and, in the same
        phases, the next row's pass 1 (its maximum);
     2. its pass 3 (scale, from the cache).
   On the CPU server the three-pass kernel runs each row's memory-bound pass (the maximum) and
   its compute-bound pass (the exps) one after the other, so a core either waits for memory or
   computes; here each phase loads the next row from memory while it evaluates the exps of this
   one from the cache, and the core overlaps the two. A GPU hides memory latency with many cubes
   instead, and has no use for this form (few cubes). -inf and NaN: as the three-pass kernel. */
#ifdef SM_ROWS_NAME
typedef struct SM_ROWS_SHARED {
  SM_T sum[2][2 * SM_MAX_UNITS], max[2][2 * SM_MAX_UNITS];
} SM_ROWS_SHARED;

/* Column j of pass 2 of the row at bi / bo, and of pass 1 of the row at bn; SI, SO: the
   column strides (1, or si and so). */
#define SM_ROWS_STEP(j, SI, SO)                              \
  do {                                                       \
    const SM_T sm_e = SM_EXP(in[bi + (j) * (SI)] - row_max); \
    out[bo + (j) * (SO)] = sm_e;                             \
    MY(sum) += sm_e;                                         \
    const SM_T sm_x = in[bn + (j) * (SI)];                   \
    MY(next) = SM_MAXNAN(MY(next), sm_x);                    \
  } while (0)
SM_KERNEL_(SM_ROWS_NAME, (SM_ROWS_SHARED, sh), (const SM_T, in), (SM_T, out)) {
  const uint32_t kr = INFO_U32(0), units = CUBE_DIM_X;
  const uint64_t C = INFO_U64(1), si = INFO_U64(2), so = INFO_U64(3), rows = INFO_U64(6);
  const uint64_t per = rows / CUBE_COUNT + (rows % CUBE_COUNT != 0), first = CUBE_POS * per;
  if (first >= rows || C == 0 || units > SM_MAX_UNITS || CUBE_DIM_Y * CUBE_DIM_Z != 1 ||
      kr > SM_MAX_KEPT)
    return;
  const uint64_t end = rows - first < per ? rows : first + per;
  const uint64_t full = C / units, rest = C % units;
  const bool unit_stride = si == 1 && so == 1;
  uint32_t top = 1;
  while (top < units) top *= 2;
  uint64_t bi, bo, bn, bon;
  SM_ROW_BASES(first, bi, bo);
  if (!SM_ROW_FITS(bi, bo)) {
    PHASE {
      if (UNIT_POS_X == 0) (void)LOAD(in, bi + (C - 1) * si); /* reported in validate mode */
    }
    return;
  }
  EXCLUSIVE(SM_T, sum);
  EXCLUSIVE(SM_T, next);

  /* 0. The first row's maximum, into every unit's `next`. */
  PHASE {
    MY(next) = -INFINITY;
  }
  for (uint64_t r = 0; r < full; ++r) {
    const uint64_t at = r * units;
    if (unit_stride) {
      PHASE {
        MY(next) = SM_MAXNAN(MY(next), in[bi + at + UNIT_POS_X]);
      }
    } else {
      PHASE {
        MY(next) = SM_MAXNAN(MY(next), in[bi + (at + UNIT_POS_X) * si]);
      }
    }
  }
  PHASE {
    if (UNIT_POS_X < rest)
      MY(next) = SM_MAXNAN(MY(next), in[bi + (full * units + UNIT_POS_X) * si]);
    sh->max[0][UNIT_POS_X] = MY(next);
    sh->max[0][units + UNIT_POS_X] = -INFINITY;
    sh->max[1][units + UNIT_POS_X] = -INFINITY;
  }
  SM_T row_max;
  SM_TREE(sh->max, SM_MAXNAN, row_max);

  for (uint64_t row = first; row < end; ++row) {
    /* The next row (the last row reads itself again, from the cache). */
    SM_ROW_BASES(row + 1 < end ? row + 1 : row, bn, bon);
    if (!SM_ROW_FITS(bn, bon)) {
      PHASE {
        if (UNIT_POS_X == 0) (void)LOAD(in, bn + (C - 1) * si);
      }
      return;
    }
    /* 1. This row's exps and their sum; the next row's maximum. */
    PHASE {
      MY(sum) = 0;
      MY(next) = -INFINITY;
    }
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t at = r * units;
      if (unit_stride) {
        PHASE {
          SM_ROWS_STEP(at + UNIT_POS_X, 1, 1);
        }
      } else {
        PHASE {
          SM_ROWS_STEP(at + UNIT_POS_X, si, so);
        }
      }
    }
    PHASE {
      if (UNIT_POS_X < rest) SM_ROWS_STEP(full * units + UNIT_POS_X, si, so);
      sh->sum[0][UNIT_POS_X] = MY(sum);
      sh->max[0][UNIT_POS_X] = MY(next);
      sh->sum[0][units + UNIT_POS_X] = 0;
      sh->sum[1][units + UNIT_POS_X] = 0;
      sh->max[0][units + UNIT_POS_X] = -INFINITY;
      sh->max[1][units + UNIT_POS_X] = -INFINITY;
    }
    SYNC_CUBE();
    uint32_t from = 0;
    for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
      PHASE {
        sh->sum[1 - from][UNIT_POS_X] =
            sh->sum[from][UNIT_POS_X] + sh->sum[from][UNIT_POS_X + step];
        sh->max[1 - from][UNIT_POS_X] =
            SM_MAXNAN(sh->max[from][UNIT_POS_X], sh->max[from][UNIT_POS_X + step]);
      }
      SYNC_CUBE();
    }
    const SM_T scale = (SM_T)1 / sh->sum[from][0];
    row_max = sh->max[from][0];
    SYNC_CUBE(); /* every unit has read them before the slots are reused */

    /* 2. Scale this row (in the cache). */
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t at = r * units;
      if (unit_stride) {
        PHASE {
          out[bo + at + UNIT_POS_X] *= scale;
        }
      } else {
        PHASE {
          out[bo + (at + UNIT_POS_X) * so] *= scale;
        }
      }
    }
    PHASE {
      if (UNIT_POS_X < rest) out[bo + (full * units + UNIT_POS_X) * so] *= scale;
    }
    bi = bn;
    bo = bon;
  }
}
#undef SM_ROW_FITS
#undef SM_ROWS_STEP
#endif /* SM_ROWS_NAME */
#undef SM_MAXNAN
#undef SM_ADD
#undef SM_TREE
#undef SM_ROW_BASES
