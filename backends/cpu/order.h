/* cubert — seeded orders for validate mode's order perturbation (CUBERT_VALIDATE_SEED).

   A GPU runs the units of a cube and the cubes of a launch in no particular order; the CPU
   server runs them in ascending order, so a kernel whose result depends on the order (a race)
   gives one stable answer here and another on a GPU. With CUBERT_VALIDATE_SEED=n, validate-mode
   launches run in an order that the seed picks, the same for the same seed in every run:
   seed 0 is the plain reversed order; any other seed a pseudo-random permutation (a 4-round
   Feistel network over the next even power of two, cycle-walked into [0, n): a bijection that
   needs no memory, so launches of any size are shuffled without a table). */
#ifndef CUBERT_CPU_ORDER_H
#define CUBERT_CPU_ORDER_H

#include <stdint.h>

/* A permutation of [0, count). Plain data: copy it freely. */
typedef struct cubert_cpu_order {
  uint64_t count;
  uint64_t mask; /* (1 << half) - 1: the Feistel halves */
  uint32_t half; /* bits per half */
  int reversed;  /* seed 0 */
  uint64_t keys[4];
} cubert_cpu_order;

/* The order of `count` items for `seed`; `salt` tells apart the orders one seed gives to
   different sets (the cubes of a launch, the units of cube c). */
void cubert_cpu_order_init(cubert_cpu_order *order, uint32_t seed, uint64_t salt, uint64_t count);

/* The item that runs k-th (k < count). */
uint64_t cubert_cpu_order_at(const cubert_cpu_order *order, uint64_t k);

/* out[k] = the k-th of `count` (<= 65536) items in the order of (seed, salt). */
void cubert_cpu_order_fill_u16(uint32_t seed, uint64_t salt, uint32_t count, uint16_t *out);

#endif /* CUBERT_CPU_ORDER_H */
