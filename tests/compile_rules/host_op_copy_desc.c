/* Host rule: the operations take tensors; a copy descriptor (a similar struct) in a tensor's
   place is a compile error saying what the argument must be. */
#include <cubert/cubert.h>

cubert_status copy_wrong(cubert_client *client, cubert_copy_desc *desc, cubert_tensor *out) {
  return cubert_op_copy(client, desc, out); /* RULE_LINE */
}
