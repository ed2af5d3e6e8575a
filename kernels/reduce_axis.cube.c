/* Reductions along one axis (cubert_op_reduce, kernels/ops/reduce.c): two phased kernels per
   family (op x element type), written once below as a template.

   The host brings every problem into one form: `rows` outputs, each the reduction of R
   elements `in[base(k) + r * sR]`, r in [0, R), where base(k) and the output's place come from
   the output's coordinates over the kept (not reduced) axes. kernels.h lists the info words.

   reduce_inner_<f>: one cube per (output, split). Unit u adds elements r0 + u, r0 + u + units,
   ... of its chunk (neighbouring units read neighbouring elements when sR == 1: coalesced on a
   GPU, one contiguous vectorised loop per phase on the CPU), then the cube folds the units'
   values in a branch-free ping-pong tree (examples/softmax.cube.c says why branch-free).
   For rows whose reduced axis is the fastest-moving one (a row sum of a row-major matrix).

   reduce_outer_<f>: one cube per (block of `units` outputs along the last kept axis, the other
   kept coordinates, split). Each unit owns one output and walks the reduced axis; the loop over
   r is outside the phases, so on the CPU each step is one vectorised loop over the cube's
   outputs (contiguous when the last kept axis has stride 1: a column sum of a row-major
   matrix), and on a GPU neighbouring units read neighbouring elements. No shared memory.

   Splits (S > 1): each cube reduces `chunk` elements of the axis and writes its partial value
   (and index) to part/part_idx at k * S + s; the host then runs reduce_inner over those rows
   with in_idx = part_idx (flags bit 0), so long reductions with few outputs (a full reduction)
   still spread over every core or compute unit.

   argmax/argmin carry (value, index) pairs; a pair wins over another when its value is better,
   or equal with a lower index, and a NaN beats every number (the first NaN wins): so ties and
   NaN give the lowest index whatever order the tree folds in, on every device.

   Buffers (all kernels): 0 in (const T), 1 in_idx (const int32_t; read only with flags bit 0),
   2 part (A), 3 part_idx (int32_t), 4 out (O). Unused buffers may be any 4-byte handle. */
#include "cubert/cube.h"

#define RA_MAX_UNITS 256 /* units per cube of reduce_inner (the tree's slots) */
#define RA_MAX_KEPT 7    /* kept axes: rank 8 minus the reduced one */

/* Info words (kernels.h). */
#define RA_KR 0
#define RA_R 1
#define RA_SR 2
#define RA_IN_OFF 3
#define RA_OUT_OFF 4
#define RA_S 5
#define RA_CHUNK 6
#define RA_FLAGS 7
#define RA_DIV 8
#define RA_ROWS 9
#define RA_SHAPE 10 /* then kr shape words, kr in-stride words, kr out-stride words */
#define RA_FLAG_IN_IDX 1u
#define RA_FLAG_PARTIAL 2u
#define RA_FLAG_WIDE 4u  /* reduce_inner, sR == 1: eight loads per unit and phase */
#define RA_FLAG_ROWS8 8u /* reduce_outer_wide, full blocks with sI == 1: eight rows per step */

/* RA_REPn(M, ...) expands M(g, ...) for g = 0 .. n-1 (unrolled steps with constant indices, so
   a GPU keeps the values in registers). */
/* clang-format off */
#define RA_REP4(M, ...) M(0, __VA_ARGS__) M(1, __VA_ARGS__) M(2, __VA_ARGS__) M(3, __VA_ARGS__)
#define RA_REP8(M, ...) \
  RA_REP4(M, __VA_ARGS__) M(4, __VA_ARGS__) M(5, __VA_ARGS__) M(6, __VA_ARGS__) M(7, __VA_ARGS__)
/* clang-format on */
/* reduce_inner's contiguous walk with flags bit 2 (RA_FLAG_WIDE): eight loads per unit and phase,
   folded pairwise before they meet the accumulator (the fold order does not matter to
   argmax/argmin: their steps resolve ties by index). A GPU keeps eight reads in flight per unit
   (H200 row sums: 72 µs instead of 85); the CPU server's phase loop runs slower that way (9 ms
   instead of 5.3–6.1), so the one-load walk stays and autotune picks. */
#define RA_I_LOAD(g, A)                                              \
  A x##g = (A)in[at + (uint64_t)(g)*units];                          \
  int32_t xi##g = (int32_t)(row + (uint64_t)(g)*units + UNIT_POS_X); \
  (void)xi##g;
#define RA_I_FOLD8(COMBINE)  \
  COMBINE(x0, xi0, x1, xi1); \
  COMBINE(x2, xi2, x3, xi3); \
  COMBINE(x4, xi4, x5, xi5); \
  COMBINE(x6, xi6, x7, xi7); \
  COMBINE(x0, xi0, x2, xi2); \
  COMBINE(x4, xi4, x6, xi6); \
  COMBINE(x0, xi0, x4, xi4); \
  COMBINE(MY(acc), MY(ai), x0, xi0);

/* ---- combine steps: COMBINE(v, vi, x, xi) folds (x, xi) into (v, vi) ---- */
#define RA_SUM(v, vi, x, xi) v = (v) + (x)
#define RA_MAXF(v, vi, x, xi) v = ((x) > (v) || (x) != (x)) ? (x) : (v)
#define RA_MINF(v, vi, x, xi) v = ((x) < (v) || (x) != (x)) ? (x) : (v)
#define RA_MAXI(v, vi, x, xi) v = (x) > (v) ? (x) : (v)
#define RA_MINI(v, vi, x, xi) v = (x) < (v) ? (x) : (v)
/* (x, xi) wins over (v, vi): a better value, an equal one at a lower index, or (floats) a NaN
   where v is a number, or a NaN at a lower index. */
#define RA_WINS_F(CMP, v, vi, x, xi)          \
  (((x) != (x)) ? ((v) == (v) || (xi) < (vi)) \
                : ((v) == (v) && ((x)CMP(v) || ((x) == (v) && (xi) < (vi)))))
#define RA_WINS_I(CMP, v, vi, x, xi) ((x)CMP(v) || ((x) == (v) && (xi) < (vi)))
#define RA_ARG_STEP(WINS, CMP, v, vi, x, xi)    \
  do {                                          \
    const bool ra_w_ = WINS(CMP, v, vi, x, xi); \
    vi = ra_w_ ? (xi) : (vi);                   \
    v = ra_w_ ? (x) : (v);                      \
  } while (0)
#define RA_GT >
#define RA_LT <
#define RA_ARGMAXF(v, vi, x, xi) RA_ARG_STEP(RA_WINS_F, RA_GT, v, vi, x, xi)
#define RA_ARGMINF(v, vi, x, xi) RA_ARG_STEP(RA_WINS_F, RA_LT, v, vi, x, xi)
#define RA_ARGMAXI(v, vi, x, xi) RA_ARG_STEP(RA_WINS_I, RA_GT, v, vi, x, xi)
#define RA_ARGMINI(v, vi, x, xi) RA_ARG_STEP(RA_WINS_I, RA_LT, v, vi, x, xi)

/* ---- finishing: FINISH(acc, idx, divisor) is the output value ---- */
#define RA_VALUE(a, i, d) (a)
#define RA_INDEX(a, i, d) (i)
#define RA_MEANF(a, i, d) ((a) / (float)(d))
/* The mean of a 64-bit integer sum: quotient plus the remainder's fraction, so an exact mean
   is exact and others round about once (no double needed); an empty axis gives NaN. */
#define RA_MEANI(a, i, d) \
  ((d) == 0 ? NAN : (float)((a) / (int64_t)(d)) + (float)((a) % (int64_t)(d)) / (float)(int64_t)(d))

/* ---- the template ---- */
#define RA_FAMILY(f, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)                                    \
  typedef struct ra_shared_##f {                                                                  \
    A v[2][2 * RA_MAX_UNITS];                                                                     \
    int32_t i[2][2 * (HAS_IDX ? RA_MAX_UNITS : 1)];                                               \
  } ra_shared_##f;                                                                                \
                                                                                                  \
  PHASED_KERNEL(reduce_inner_##f, (ra_shared_##f, sh), (const T, in), (const int32_t, in_idx),    \
                (A, part), (int32_t, part_idx), (O, out)) {                                       \
    const uint32_t kr = INFO_U32(RA_KR), units = CUBE_DIM_X;                                      \
    const uint64_t R = INFO_U64(RA_R), sR = INFO_U64(RA_SR), S = INFO_U64(RA_S);                  \
    const uint64_t chunk = INFO_U64(RA_CHUNK), flags = INFO_U64(RA_FLAGS);                        \
    const uint64_t rows = INFO_U64(RA_ROWS), c = CUBE_POS;                                        \
    /* Uniform exits: extra cubes of a spread count, shapes the slots cannot hold. */             \
    if (S == 0 || c >= rows * S || units > RA_MAX_UNITS || CUBE_DIM_Y * CUBE_DIM_Z != 1 ||        \
        kr > RA_MAX_KEPT)                                                                         \
      return;                                                                                     \
    const uint64_t k = c / S, s = c % S;                                                          \
    uint64_t base = INFO_U64(RA_IN_OFF), out_pos = INFO_U64(RA_OUT_OFF), rem = k;                 \
    for (uint32_t d = kr; d-- > 0;) {                                                             \
      const uint64_t len = INFO_U64(RA_SHAPE + d), cd = len ? rem % len : 0;                      \
      rem = len ? rem / len : 0;                                                                  \
      base += cd * INFO_U64(RA_SHAPE + kr + d);                                                   \
      out_pos += cd * INFO_U64(RA_SHAPE + 2 * kr + d);                                            \
    }                                                                                             \
    uint64_t r0 = s * chunk, r1 = r0 + chunk;                                                     \
    if (r0 > R) r0 = R;                                                                           \
    if (r1 > R || S == 1) r1 = R;                                                                 \
    const bool with_idx = HAS_IDX && (flags & RA_FLAG_IN_IDX);                                    \
    /* The walk indexes in (and in_idx) directly so that the CPU loops vectorise: bound the       \
       furthest element by the buffers here, through one checked access validate mode reports. */ \
    if (r1 > r0) {                                                                                \
      const uint64_t last = base + (r1 - 1) * sR;                                                 \
      /* (a separate test: `x || (with_idx && ..)` draws a constant-operand warning when the      \
         family has no indices) */                                                                \
      const bool idx_short = with_idx && last >= LEN(in_idx);                                     \
      const bool wraps = last < base || (sR && (r1 - 1) > (UINT64_MAX - base) / sR);              \
      if (wraps || last >= LEN(in) || idx_short) {                                                \
        /* report what is out of range (validate mode): a walk past 2^64 as element 2^64-1 of     \
           in (its wrapped index may fall inside), a short in_idx as its own element */           \
        if (idx_short && !wraps && last < LEN(in))                                                \
          (void)LOAD(in_idx, last);                                                               \
        else                                                                                      \
          (void)LOAD(in, wraps ? UINT64_MAX : last);                                              \
        r1 = r0;                                                                                  \
      }                                                                                           \
    }                                                                                             \
    const uint64_t n = r1 - r0, full = n / units, rest = n % units;                               \
    EXCLUSIVE(A, acc);                                                                            \
    EXCLUSIVE(int32_t, ai);                                                                       \
    PHASE {                                                                                       \
      MY(acc) = IDENT;                                                                            \
      MY(ai) = INT32_MAX;                                                                         \
    }                                                                                             \
    if (with_idx) {                                                                               \
      for (uint64_t j = 0; j <= full; ++j) {                                                      \
        const uint64_t row = r0 + j * units;                                                      \
        PHASE {                                                                                   \
          if (j < full || UNIT_POS_X < rest) {                                                    \
            const uint64_t p = base + (row + UNIT_POS_X) * sR;                                    \
            COMBINE(MY(acc), MY(ai), (A)in[p], in_idx[p]);                                        \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    } else if (sR == 1 && (flags & RA_FLAG_WIDE)) {                                               \
      /* Eight loads per unit and phase, folded pairwise (RA_I_FOLD8). */                         \
      uint64_t j = 0;                                                                             \
      for (; j + 8 <= full; j += 8) {                                                             \
        const uint64_t row = r0 + j * units;                                                      \
        PHASE {                                                                                   \
          const uint64_t at = base + row + UNIT_POS_X;                                            \
          RA_REP8(RA_I_LOAD, A)                                                                   \
          RA_I_FOLD8(COMBINE)                                                                     \
        }                                                                                         \
      }                                                                                           \
      for (; j < full; ++j) {                                                                     \
        const uint64_t row = r0 + j * units;                                                      \
        PHASE {                                                                                   \
          COMBINE(MY(acc), MY(ai), (A)in[base + row + UNIT_POS_X], (int32_t)(row + UNIT_POS_X));  \
        }                                                                                         \
      }                                                                                           \
      const uint64_t row = r0 + full * units;                                                     \
      PHASE {                                                                                     \
        if (UNIT_POS_X < rest)                                                                    \
          COMBINE(MY(acc), MY(ai), (A)in[base + row + UNIT_POS_X], (int32_t)(row + UNIT_POS_X));  \
      }                                                                                           \
    } else if (sR == 1) {                                                                         \
      for (uint64_t j = 0; j < full; ++j) {                                                       \
        const uint64_t row = r0 + j * units;                                                      \
        PHASE {                                                                                   \
          COMBINE(MY(acc), MY(ai), (A)in[base + row + UNIT_POS_X], (int32_t)(row + UNIT_POS_X));  \
        }                                                                                         \
      }                                                                                           \
      const uint64_t row = r0 + full * units;                                                     \
      PHASE {                                                                                     \
        if (UNIT_POS_X < rest)                                                                    \
          COMBINE(MY(acc), MY(ai), (A)in[base + row + UNIT_POS_X], (int32_t)(row + UNIT_POS_X));  \
      }                                                                                           \
    } else {                                                                                      \
      for (uint64_t j = 0; j <= full; ++j) {                                                      \
        const uint64_t row = r0 + j * units;                                                      \
        PHASE {                                                                                   \
          if (j < full || UNIT_POS_X < rest)                                                      \
            COMBINE(MY(acc), MY(ai), (A)in[base + (row + UNIT_POS_X) * sR],                       \
                    (int32_t)(row + UNIT_POS_X));                                                 \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
    uint32_t top = 1;                                                                             \
    while (top < units) top *= 2;                                                                 \
    PHASE {                                                                                       \
      sh->v[0][UNIT_POS_X] = MY(acc);                                                             \
      sh->v[0][units + UNIT_POS_X] = IDENT;                                                       \
      sh->v[1][units + UNIT_POS_X] = IDENT;                                                       \
      if (HAS_IDX) {                                                                              \
        sh->i[0][UNIT_POS_X] = MY(ai);                                                            \
        sh->i[0][units + UNIT_POS_X] = INT32_MAX;                                                 \
        sh->i[1][units + UNIT_POS_X] = INT32_MAX;                                                 \
      }                                                                                           \
    }                                                                                             \
    SYNC_CUBE();                                                                                  \
    uint32_t from = 0;                                                                            \
    for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {                         \
      PHASE {                                                                                     \
        A v = sh->v[from][UNIT_POS_X];                                                            \
        int32_t vi = HAS_IDX ? sh->i[from][UNIT_POS_X] : 0;                                       \
        COMBINE(v, vi, sh->v[from][UNIT_POS_X + step],                                            \
                HAS_IDX ? sh->i[from][UNIT_POS_X + step] : 0);                                    \
        sh->v[1 - from][UNIT_POS_X] = v;                                                          \
        if (HAS_IDX) sh->i[1 - from][UNIT_POS_X] = vi;                                            \
      }                                                                                           \
      SYNC_CUBE();                                                                                \
    }                                                                                             \
    PHASE {                                                                                       \
      if (UNIT_POS_X == 0) {                                                                      \
        const A total = sh->v[from][0];                                                           \
        const int32_t ti = HAS_IDX ? sh->i[from][0] : 0;                                          \
        if (flags & RA_FLAG_PARTIAL) {                                                            \
          STORE(part, k *S + s, total);                                                           \
          if (HAS_IDX) STORE(part_idx, k *S + s, ti);                                             \
        } else {                                                                                  \
          STORE(out, out_pos, FINISH(total, ti, INFO_U64(RA_DIV)));                               \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  RA_OUTER(reduce_outer_##f, RA_NO_SYNC, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)                \
  RA_OUTER(reduce_outer_sync_##f, SYNC_CUBE, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)            \
  RA_OUTER_WIDE(reduce_outer_wide_##f, RA_NO_SYNC, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)      \
  RA_OUTER_WIDE(reduce_outer_wide_sync_##f, SYNC_CUBE, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)

/* reduce_outer, and reduce_outer_sync (SYNC = SYNC_CUBE): the same body with a barrier after
   each step along the axis. The barrier costs nothing on the CPU server, but OpenCL compilers
   for CPUs (PoCL) turn a barrier-free body into one loop per unit that walks a whole column
   (cache-hostile); with a barrier per step they loop over the units inside each step, as the
   CPU server does. GPUs prefer the barrier-free one; autotune picks. */
#define RA_NO_SYNC()
#define RA_OUTER(name, SYNC, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)                            \
  PHASED_KERNEL(name, NO_SHARED, (const T, in), (const int32_t, in_idx), (A, part),               \
                (int32_t, part_idx), (O, out)) {                                                  \
    const uint32_t kr = INFO_U32(RA_KR), units = CUBE_DIM_X;                                      \
    const uint64_t R = INFO_U64(RA_R), sR = INFO_U64(RA_SR), S = INFO_U64(RA_S);                  \
    const uint64_t chunk = INFO_U64(RA_CHUNK), flags = INFO_U64(RA_FLAGS);                        \
    if (kr == 0 || kr > RA_MAX_KEPT || S == 0 || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;            \
    const uint64_t ilen = INFO_U64(RA_SHAPE + kr - 1), rows = INFO_U64(RA_ROWS);                  \
    if (ilen == 0) return;                                                                        \
    const uint64_t blocks = ilen / units + (ilen % units != 0), olen = rows / ilen, c = CUBE_POS; \
    if (c >= blocks * olen * S) return;                                                           \
    const uint64_t ib = c % blocks, o = (c / blocks) % olen, s = c / blocks / olen;               \
    uint64_t base = INFO_U64(RA_IN_OFF), out_pos = INFO_U64(RA_OUT_OFF), rem = o;                 \
    for (uint32_t d = kr - 1; d-- > 0;) {                                                         \
      const uint64_t len = INFO_U64(RA_SHAPE + d), cd = len ? rem % len : 0;                      \
      rem = len ? rem / len : 0;                                                                  \
      base += cd * INFO_U64(RA_SHAPE + kr + d);                                                   \
      out_pos += cd * INFO_U64(RA_SHAPE + 2 * kr + d);                                            \
    }                                                                                             \
    const uint64_t sI = INFO_U64(RA_SHAPE + 2 * kr - 1), sO = INFO_U64(RA_SHAPE + 3 * kr - 1);    \
    const uint64_t i0 = ib * units;                                                               \
    const uint32_t last_u = (uint32_t)(ilen - i0 < units ? ilen - i0 - 1 : units - 1);            \
    uint64_t r0 = s * chunk, r1 = r0 + chunk;                                                     \
    if (r0 > R) r0 = R;                                                                           \
    if (r1 > R || S == 1) r1 = R;                                                                 \
    base += i0 * sI;                                                                              \
    if (r1 > r0) {                                                                                \
      const uint64_t far = base + last_u * sI + (r1 - 1) * sR;                                    \
      const bool wraps = far < base || (sR && (r1 - 1) > (UINT64_MAX - base) / sR);               \
      if (wraps || far >= LEN(in)) {                                                              \
        (void)LOAD(in, wraps ? UINT64_MAX : far); /* past 2^64: reported as element 2^64-1 */     \
        r1 = r0;                                                                                  \
      }                                                                                           \
    }                                                                                             \
    EXCLUSIVE(A, acc);                                                                            \
    EXCLUSIVE(int32_t, ai);                                                                       \
    PHASE {                                                                                       \
      MY(acc) = IDENT;                                                                            \
      MY(ai) = INT32_MAX;                                                                         \
    }                                                                                             \
    /* Units past the last output re-read the last one's elements (clamped, so every unit loads   \
       and the CPU loop has no branch) and store nothing. */                                      \
    if (sI == 1 && last_u == units - 1) {                                                         \
      /* Eight rows per phase: eight streams in flight per unit (the CPU's prefetchers            \
         restart at every row of a column strip), combined in order. */                           \
      uint64_t r = r0;                                                                            \
      for (; r + 8 <= r1; r += 8) {                                                               \
        const uint64_t row = base + r * sR;                                                       \
        PHASE {                                                                                   \
          const uint64_t at = row + UNIT_POS_X;                                                   \
          const A x0 = (A)in[at], x1 = (A)in[at + sR], x2 = (A)in[at + 2 * sR];                   \
          const A x3 = (A)in[at + 3 * sR], x4 = (A)in[at + 4 * sR], x5 = (A)in[at + 5 * sR];      \
          const A x6 = (A)in[at + 6 * sR], x7 = (A)in[at + 7 * sR];                               \
          COMBINE(MY(acc), MY(ai), x0, (int32_t)r);                                               \
          COMBINE(MY(acc), MY(ai), x1, (int32_t)(r + 1));                                         \
          COMBINE(MY(acc), MY(ai), x2, (int32_t)(r + 2));                                         \
          COMBINE(MY(acc), MY(ai), x3, (int32_t)(r + 3));                                         \
          COMBINE(MY(acc), MY(ai), x4, (int32_t)(r + 4));                                         \
          COMBINE(MY(acc), MY(ai), x5, (int32_t)(r + 5));                                         \
          COMBINE(MY(acc), MY(ai), x6, (int32_t)(r + 6));                                         \
          COMBINE(MY(acc), MY(ai), x7, (int32_t)(r + 7));                                         \
        }                                                                                         \
        SYNC();                                                                                   \
      }                                                                                           \
      for (; r < r1; ++r) {                                                                       \
        const uint64_t row = base + r * sR;                                                       \
        PHASE {                                                                                   \
          COMBINE(MY(acc), MY(ai), (A)in[row + UNIT_POS_X], (int32_t)r);                          \
        }                                                                                         \
        SYNC();                                                                                   \
      }                                                                                           \
    } else {                                                                                      \
      for (uint64_t r = r0; r < r1; ++r) {                                                        \
        const uint64_t row = base + r * sR;                                                       \
        PHASE {                                                                                   \
          const uint32_t u = UNIT_POS_X < last_u ? UNIT_POS_X : last_u;                           \
          COMBINE(MY(acc), MY(ai), (A)in[row + u * sI], (int32_t)r);                              \
        }                                                                                         \
        SYNC();                                                                                   \
      }                                                                                           \
    }                                                                                             \
    PHASE {                                                                                       \
      if (UNIT_POS_X <= last_u) {                                                                 \
        const uint64_t i = i0 + UNIT_POS_X;                                                       \
        if (flags & RA_FLAG_PARTIAL) {                                                            \
          STORE(part, (o * ilen + i) * S + s, MY(acc));                                           \
          if (HAS_IDX) STORE(part_idx, (o * ilen + i) * S + s, MY(ai));                           \
        } else {                                                                                  \
          STORE(out, out_pos + i * sO, FINISH(MY(acc), MY(ai), INFO_U64(RA_DIV)));                \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

/* reduce_outer_wide and reduce_outer_wide_sync: as reduce_outer, but a cube covers RA_WIDE * units
   outputs of the last kept axis and unit u owns RA_WIDE of them, i0 + g * units + u for
   g < RA_WIDE. A step along the reduced axis reads the block's whole run of one row in RA_WIDE
   phases of `units` neighbouring elements: on the CPU one sequential stream through the row
   (reduce_outer's eight rows per phase are eight short strips), on a GPU RA_WIDE coalesced loads
   in flight per unit. Outputs past the axis re-read the last one (clamped) and store nothing. */
#define RA_WIDE 8
#define RA_W_INIT(g, IDENT) \
  MY_AT(acc, g) = IDENT;    \
  MY_AT(ai, g) = INT32_MAX;
/* One phase of step r: output g * units + u of the block, at `stride` elements apart. */
/* CLAMP: RA_W_CLAMP in a block cut short by the end of the axis (its units past the end read
   the last element again), RA_W_FULL in a full block: the plain index keeps the CPU's loop over
   units one contiguous vector loop (a clamped index made GCC fall back to scalar loads). */
#define RA_W_CLAMP(col) ((col) < last ? (col) : last)
#define RA_W_FULL(col) (col)
#define RA_W_STEP(g, A, COMBINE, stride, CLAMP)                                           \
  PHASE {                                                                                 \
    const uint64_t col = (uint64_t)(g)*units + UNIT_POS_X;                                \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[row + CLAMP(col) * (stride)], (int32_t)r); \
  }
#define RA_W_STORE(g, HAS_IDX, FINISH)                                                       \
  PHASE {                                                                                    \
    const uint64_t col = (uint64_t)(g)*units + UNIT_POS_X;                                   \
    if (col <= last) {                                                                       \
      const uint64_t i = i0 + col;                                                           \
      if (flags & RA_FLAG_PARTIAL) {                                                         \
        STORE(part, (o * ilen + i) * S + s, MY_AT(acc, g));                                  \
        if (HAS_IDX) STORE(part_idx, (o * ilen + i) * S + s, MY_AT(ai, g));                  \
      } else {                                                                               \
        STORE(out, out_pos + i * sO, FINISH(MY_AT(acc, g), MY_AT(ai, g), INFO_U64(RA_DIV))); \
      }                                                                                      \
    }                                                                                        \
  }
/* With flags bit 3 (RA_FLAG_ROWS8), full blocks of a unit-stride axis take eight rows per step:
   phase g adds rows r .. r + 7 of output g * units + u, in order. On the CPU that is eight
   sequential streams through whole rows of the block at once (a cube spanning a row of 8192
   floats: 8 x 32 KiB), where one row per step is one stream (too few misses in flight for one
   core) and reduce_outer's eight rows per phase are eight strips of `units` elements each. */
#define RA_W_STEP8(g, A, COMBINE)                                               \
  PHASE {                                                                       \
    const uint64_t at = row + (uint64_t)(g)*units + UNIT_POS_X;                 \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at], (int32_t)r);                \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + sR], (int32_t)(r + 1));     \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 2 * sR], (int32_t)(r + 2)); \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 3 * sR], (int32_t)(r + 3)); \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 4 * sR], (int32_t)(r + 4)); \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 5 * sR], (int32_t)(r + 5)); \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 6 * sR], (int32_t)(r + 6)); \
    COMBINE(MY_AT(acc, g), MY_AT(ai, g), (A)in[at + 7 * sR], (int32_t)(r + 7)); \
  }
#define RA_OUTER_WIDE(name, SYNC, T, A, O, IDENT, HAS_IDX, COMBINE, FINISH)                     \
  PHASED_KERNEL(name, NO_SHARED, (const T, in), (const int32_t, in_idx), (A, part),             \
                (int32_t, part_idx), (O, out)) {                                                \
    const uint32_t kr = INFO_U32(RA_KR), units = CUBE_DIM_X;                                    \
    const uint64_t R = INFO_U64(RA_R), sR = INFO_U64(RA_SR), S = INFO_U64(RA_S);                \
    const uint64_t chunk = INFO_U64(RA_CHUNK), flags = INFO_U64(RA_FLAGS);                      \
    if (kr == 0 || kr > RA_MAX_KEPT || S == 0 || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;          \
    const uint64_t ilen = INFO_U64(RA_SHAPE + kr - 1), rows = INFO_U64(RA_ROWS);                \
    if (ilen == 0) return;                                                                      \
    const uint64_t span = (uint64_t)units * RA_WIDE;                                            \
    const uint64_t blocks = ilen / span + (ilen % span != 0), olen = rows / ilen, c = CUBE_POS; \
    if (c >= blocks * olen * S) return;                                                         \
    const uint64_t ib = c % blocks, o = (c / blocks) % olen, s = c / blocks / olen;             \
    uint64_t base = INFO_U64(RA_IN_OFF), out_pos = INFO_U64(RA_OUT_OFF), rem = o;               \
    for (uint32_t d = kr - 1; d-- > 0;) {                                                       \
      const uint64_t len = INFO_U64(RA_SHAPE + d), cd = len ? rem % len : 0;                    \
      rem = len ? rem / len : 0;                                                                \
      base += cd * INFO_U64(RA_SHAPE + kr + d);                                                 \
      out_pos += cd * INFO_U64(RA_SHAPE + 2 * kr + d);                                          \
    }                                                                                           \
    const uint64_t sI = INFO_U64(RA_SHAPE + 2 * kr - 1), sO = INFO_U64(RA_SHAPE + 3 * kr - 1);  \
    const uint64_t i0 = ib * span, last = (ilen - i0 < span ? ilen - i0 : span) - 1;            \
    uint64_t r0 = s * chunk, r1 = r0 + chunk;                                                   \
    if (r0 > R) r0 = R;                                                                         \
    if (r1 > R || S == 1) r1 = R;                                                               \
    base += i0 * sI;                                                                            \
    if (r1 > r0) {                                                                              \
      const uint64_t far = base + last * sI + (r1 - 1) * sR;                                    \
      const bool wraps = far < base || (sR && (r1 - 1) > (UINT64_MAX - base) / sR);             \
      if (wraps || far >= LEN(in)) {                                                            \
        (void)LOAD(in, wraps ? UINT64_MAX : far); /* past 2^64: reported as element 2^64-1 */   \
        r1 = r0;                                                                                \
      }                                                                                         \
    }                                                                                           \
    EXCLUSIVE_ARRAY(A, acc, RA_WIDE);                                                           \
    EXCLUSIVE_ARRAY(int32_t, ai, RA_WIDE);                                                      \
    PHASE {                                                                                     \
      RA_REP8(RA_W_INIT, IDENT)                                                                 \
    }                                                                                           \
    if (sI == 1 && last + 1 == span) {                                                          \
      uint64_t r = r0;                                                                          \
      for (; (flags & RA_FLAG_ROWS8) && r + 8 <= r1; r += 8) {                                  \
        const uint64_t row = base + r * sR;                                                     \
        RA_REP8(RA_W_STEP8, A, COMBINE)                                                         \
        SYNC();                                                                                 \
      }                                                                                         \
      for (; r < r1; ++r) {                                                                     \
        const uint64_t row = base + r * sR;                                                     \
        RA_REP8(RA_W_STEP, A, COMBINE, 1, RA_W_FULL)                                            \
        SYNC();                                                                                 \
      }                                                                                         \
    } else if (sI == 1) {                                                                       \
      for (uint64_t r = r0; r < r1; ++r) {                                                      \
        const uint64_t row = base + r * sR;                                                     \
        RA_REP8(RA_W_STEP, A, COMBINE, 1, RA_W_CLAMP)                                           \
        SYNC();                                                                                 \
      }                                                                                         \
    } else {                                                                                    \
      for (uint64_t r = r0; r < r1; ++r) {                                                      \
        const uint64_t row = base + r * sR;                                                     \
        RA_REP8(RA_W_STEP, A, COMBINE, sI, RA_W_CLAMP)                                          \
        SYNC();                                                                                 \
      }                                                                                         \
    }                                                                                           \
    RA_REP8(RA_W_STORE, HAS_IDX, FINISH)                                                        \
  }

/*        family      T         A         O         identity   idx combine    finish */
RA_FAMILY(sum_f32, float, float, float, 0.0f, 0, RA_SUM, RA_VALUE)
RA_FAMILY(mean_f32, float, float, float, 0.0f, 0, RA_SUM, RA_MEANF)
RA_FAMILY(sum_i32, uint32_t, uint32_t, uint32_t, 0u, 0, RA_SUM, RA_VALUE)
RA_FAMILY(mean_i32, int32_t, int64_t, float, 0, 0, RA_SUM, RA_MEANI)
RA_FAMILY(mean_i64, int64_t, int64_t, float, 0, 0, RA_SUM, RA_MEANI)
RA_FAMILY(max_f32, float, float, float, -INFINITY, 0, RA_MAXF, RA_VALUE)
RA_FAMILY(min_f32, float, float, float, INFINITY, 0, RA_MINF, RA_VALUE)
RA_FAMILY(max_i32, int32_t, int32_t, int32_t, INT32_MIN, 0, RA_MAXI, RA_VALUE)
RA_FAMILY(min_i32, int32_t, int32_t, int32_t, INT32_MAX, 0, RA_MINI, RA_VALUE)
RA_FAMILY(argmax_f32, float, float, int32_t, -INFINITY, 1, RA_ARGMAXF, RA_INDEX)
RA_FAMILY(argmin_f32, float, float, int32_t, INFINITY, 1, RA_ARGMINF, RA_INDEX)
RA_FAMILY(argmax_i32, int32_t, int32_t, int32_t, INT32_MIN, 1, RA_ARGMAXI, RA_INDEX)
RA_FAMILY(argmin_i32, int32_t, int32_t, int32_t, INT32_MAX, 1, RA_ARGMINI, RA_INDEX)
