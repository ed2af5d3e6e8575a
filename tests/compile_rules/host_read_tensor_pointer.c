/* Host rule: cubert_client_read_tensor takes a tensor or a copy descriptor; a host pointer in
   their place is a compile error naming the call, not a run-time error. */
#include <cubert/cubert.h>

cubert_status read_wrong(cubert_client *client, float *host, float *dst) {
  return cubert_client_read_tensor(client, host, dst, 16); /* RULE_LINE */
}
