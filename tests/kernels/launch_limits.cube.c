/* Kernels of the launch-limit tests (tests/cts/cts_launch.c): each asks for more of a resource
   than any device gives, so that every launch of it is refused before anything is queued. */
#include "cubert/cube.h"

/* 64 MiB of shared memory per cube: far above every device's max_shared_memory_size (the CPU
   server's max(L1d, 64 KiB), PoCL's few MiB, a GPU's tens or hundreds of KiB). The CPU server
   sizes it from the shared type (the definition's shared_bytes), OpenCL from the __local
   variable it becomes (CL_KERNEL_LOCAL_MEM_SIZE). */
typedef struct too_much_shared {
  uint32_t words[16u << 20];
} too_much_shared;
CUBE_KERNEL(too_much_shared_memory, (too_much_shared, sh), (uint32_t, out)) {
  sh->words[UNIT_POS] = (uint32_t)UNIT_POS;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->words[(UNIT_POS + 1) % CUBE_DIM]);
}
