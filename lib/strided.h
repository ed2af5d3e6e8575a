/* cubert — strided launches (strided.c) over the elementwise kernel layouts of
   kernels/elementwise_ops.h: a plan of up to three operands over one shape, its axes collapsed,
   launched with a dense ("_c"), rows ("_r") or N-D ("_nd") kernel. */
#ifndef CUBERT_STRIDED_H
#define CUBERT_STRIDED_H

#include <stdbool.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/kernel.h"
#include "cubert/layout.h"

/* Info words of an "_nd" kernel (EW_ND_WORDS in kernels/elementwise_ops.h). */
#define CUBERT_STRIDED_ND_WORDS 38

/* A launch over up to three operands (0 out, 1 a/in, 2 b) after broadcasting and collapsing:
   the common shape, each operand's strides and offset, all in elements. */
typedef struct cubert_strided_plan {
  uint32_t count; /* operands: 2 or 3 */
  uint32_t rank;  /* after collapsing, <= CUBERT_MAX_RANK */
  uint64_t n;     /* elements */
  uint64_t shape[CUBERT_MAX_RANK];
  uint64_t strides[3][CUBERT_MAX_RANK];
  uint64_t offsets[3];
} cubert_strided_plan;

/* Merges neighbouring axes that are contiguous with each other in every one of `count`
   operands (strides[i] holds operand i's strides over the common `shape`), and drops axes of
   length 1, so that a strided kernel walks as few and as long dimensions as possible. Updates
   *rank, shape and strides in place (a rank-0 result is one element). */
void cubert_strided_collapse_axes(uint32_t *rank, uint64_t shape[CUBERT_MAX_RANK],
                                  uint64_t (*strides)[CUBERT_MAX_RANK], uint32_t count);

/* True when every operand is dense (rank <= 1 with unit strides) and starts at element 0 of
   its handle: the "_c" kernels apply. */
bool cubert_strided_plan_contiguous(const cubert_strided_plan *plan);

/* The three kernels of an elementwise operation; `rows` may be NULL (then "_nd" serves). */
typedef struct cubert_strided_kernels {
  const cubert_kernel_def *dense, *rows, *strided;
} cubert_strided_kernels;

/* Launches the plan with the kernel its layout calls for: "_c" when dense (info [n]),
   "_r" for rank <= 2 with rows of at least 64 elements (elementwise_ops.h's rows layout),
   else "_nd" (CUBERT_STRIDED_ND_WORDS words with `op` in word 2), binding the handles in
   operand order. */
cubert_status cubert_strided_plan_launch(cubert_client *client, const cubert_strided_plan *plan,
                                         const cubert_strided_kernels *kernels, uint32_t op,
                                         cubert_handle *const *handles);

#endif /* CUBERT_STRIDED_H */
