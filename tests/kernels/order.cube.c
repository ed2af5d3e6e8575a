/* Kernels of the order-perturbation tests (tests/unit/cpu_order.c, CUBERT_VALIDATE_SEED).

   The ticket kernels record the order in which units ran: each takes the next ticket from an
   atomic counter and writes its UNIT_ID at that ticket, so order[k] is the k-th unit to run.
   Their result depends on the order by design, yet they have no data race (the counter is
   atomic, every element is written once), so validate mode's race checks stay quiet on them.
   The sum kernels are correct kernels with shared memory and barriers: their result must not
   depend on the order. */
#include "cubert/cube.h"

UNIT_KERNEL(order_ticket_unit, LEN(order), (uint32_t, counter), (uint32_t, order)) {
  const uint32_t ticket = ATOMIC_ADD(counter, 0, 1u);
  STORE(order, ticket, (uint32_t)UNIT_ID);
}

CUBE_KERNEL(order_ticket_fiber, NO_SHARED, (uint32_t, counter), (uint32_t, order)) {
  const uint32_t ticket = ATOMIC_ADD(counter, 0, 1u);
  STORE(order, ticket, (uint32_t)UNIT_ID);
  SYNC_CUBE();
}

PHASED_KERNEL(order_ticket_phased, NO_SHARED, (uint32_t, counter), (uint32_t, order)) {
  PHASE {
    const uint32_t ticket = ATOMIC_ADD(counter, 0, 1u);
    STORE(order, ticket, (uint32_t)UNIT_ID);
  }
}

/* out[CUBE_POS] = the sum of the cube's elements, a tree over shared memory (64 units). */
typedef struct {
  uint32_t partial[64];
} order_sums;

CUBE_KERNEL(order_sum_fiber, (order_sums, sh), (const uint32_t, in), (uint32_t, out)) {
  sh->partial[UNIT_POS] = LOAD(in, UNIT_ID);
  SYNC_CUBE();
  for (uint32_t step = CUBE_DIM / 2; step > 0; step /= 2) {
    if (UNIT_POS < step) sh->partial[UNIT_POS] += sh->partial[UNIT_POS + step];
    SYNC_CUBE();
  }
  if (UNIT_POS == 0) STORE(out, CUBE_POS, sh->partial[0]);
}

PHASED_KERNEL(order_sum_phased, (order_sums, sh), (const uint32_t, in), (uint32_t, out)) {
  PHASE {
    sh->partial[UNIT_POS] = LOAD(in, UNIT_ID);
  }
  SYNC_CUBE();
  for (uint32_t step = CUBE_DIM / 2; step > 0; step /= 2) {
    PHASE {
      if (UNIT_POS < step) sh->partial[UNIT_POS] += sh->partial[UNIT_POS + step];
    }
    SYNC_CUBE();
  }
  PHASE {
    if (UNIT_POS == 0) STORE(out, CUBE_POS, sh->partial[0]);
  }
}
