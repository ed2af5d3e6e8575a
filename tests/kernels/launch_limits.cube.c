/* Kernels of the launch-limit tests (tests/cts/cts_launch.c): each asks for more of a resource
   than any device gives, so that every launch of it is refused before anything is queued. */
#include "cubert/cube.h"

/* 64 MiB of shared memory per cube: far above every device's max_shared_memory_size (the CPU
   server's max(L1d, 64 KiB), PoCL's few MiB, a GPU's tens or hundreds of KiB). The size is the
   shared type's (the definition's shared_bytes) on every server, and the core refuses every
   launch of it before an OpenCL program is built: a GPU's compiler refuses to build it
   (NVIDIA's ptxas), so the build's OpenCL check skips this file (tests/CMakeLists.txt). */
typedef struct too_much_shared {
  uint32_t words[16u << 20];
} too_much_shared;
CUBE_KERNEL(too_much_shared_memory, (too_much_shared, sh), (uint32_t, out)) {
  sh->words[UNIT_POS] = (uint32_t)UNIT_POS;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->words[(UNIT_POS + 1) % CUBE_DIM]);
}
