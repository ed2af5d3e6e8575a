/* Views of tensors: new shapes and strides over the same handle, no data moved. */
#include <stdbool.h>

#include "cubert/ops.h"

cubert_status(cubert_tensor_permute)(const cubert_tensor *in, const uint32_t *axes,
                                     cubert_tensor *out) {
  if (!in || !out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "tensor_permute: %s is NULL",
                              !in ? "in" : "out");
  if (!axes && in->rank > 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "tensor_permute: axes is NULL but in has rank %u (axes needs %u "
                              "entries)",
                              in->rank, in->rank);
  if (in->rank > CUBERT_MAX_RANK)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "tensor_permute: in.rank is %u, maximum %d", in->rank,
                              CUBERT_MAX_RANK);
  bool seen[CUBERT_MAX_RANK] = {false};
  for (uint32_t i = 0; i < in->rank; ++i) {
    if (axes[i] >= in->rank)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "tensor_permute: axes[%u] is %u, but in has rank %u", i, axes[i],
                                in->rank);
    if (seen[axes[i]])
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "tensor_permute: axes[%u] is %u, which an earlier entry already "
                                "names",
                                i, axes[i]);
    seen[axes[i]] = true;
  }
  cubert_tensor t = *in; /* `out` may be `in` */
  for (uint32_t i = 0; i < in->rank; ++i) {
    t.shape[i] = in->shape[axes[i]];
    t.strides[i] = in->strides[axes[i]];
  }
  *out = t;
  return NULL;
}
