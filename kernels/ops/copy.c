/* cubert_op_copy and cubert_op_permute: the operand checks, with messages that name the
   operation, over the core's strided copy (lib/strided_copy.c, which picks the kernel). */
#include <stdbool.h>

#include "cubert/ops.h"
#include "ops/operand.h"
#include "strided_copy.h"

/* cubert_op_copy under the name `op` (for messages). */
static cubert_status copy_as(cubert_client *client, const char *op, const cubert_tensor *in,
                             const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, op));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "in", in, 0, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "out", out, 0, true, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_shape(op, "in", in, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(op, "in", in, "out", out));
  if (in->elem_size != out->elem_size)
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT, "%s: in.elem_size is %llu but out.elem_size is %llu", op,
        (unsigned long long)in->elem_size, (unsigned long long)out->elem_size);
  if (!cubert_client_properties(client))
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s: the client is released", op);
  return cubert_strided_copy(client, op, in, out);
}

cubert_status(cubert_op_copy)(cubert_client *client, const cubert_tensor *in,
                              const cubert_tensor *out) {
  return copy_as(client, "copy", in, out);
}

cubert_status(cubert_op_permute)(cubert_client *client, const cubert_tensor *in,
                                 const uint32_t *axes, const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, "permute"));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor("permute", "in", in, 0, false, NULL));
  cubert_tensor view;
  CUBERT_RETURN_IF_ERROR(cubert_tensor_permute(in, axes, &view));
  return copy_as(client, "permute", &view, out);
}
