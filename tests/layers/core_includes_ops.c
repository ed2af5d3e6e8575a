/* Must not compile (CTest layers_core_includes_ops): a core file (lib/) that includes the kernel
   library's private header. The core sits below kernels/ops and never calls it; its include
   paths (cubert_core in CMakeLists.txt) do not reach kernels/. */
#include "ops/operand.h"
