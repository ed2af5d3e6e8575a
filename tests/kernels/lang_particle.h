/* The struct of tests/kernels/lang_features.cube.c's particle buffers, shared by the kernel file
   (after cubert/cube.h) and the host test (tests/cts/cts_lang_features.c, after <stdint.h>). */
#ifndef CUBERT_TESTS_LANG_PARTICLE_H
#define CUBERT_TESTS_LANG_PARTICLE_H

typedef struct particle {
  float x, v;
  int32_t id;
  uint32_t flags;
  int64_t tag;
} particle;

#endif
