/* CUBERT_VALIDATE_SEED (backends/cpu/order.c, docs/environment.md): validate-mode launches on
   the CPU server run the cubes of a launch and the units of a cube in a seeded order, in all
   three kernel forms. Order-recording kernels (tests/kernels/order.cube.c) give the order
   itself: seed 0 is the plain reversed order, other seeds shuffles that repeat from run to run
   and differ between seeds; checked mode keeps the plain order; correct kernels (barriers,
   shared memory, every position a unit can ask for) give identical results under every seed.

   The seed is read once per process: each run sets the variable, re-reads the environment and
   opens a private device, which is destroyed (its workers joined) before the next reading. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "cpu/order.h"
#include "cubert/cubert.h"

extern const cubert_kernel_def order_ticket_unit, order_ticket_fiber, order_ticket_phased;
extern const cubert_kernel_def order_sum_fiber, order_sum_phased;
extern const cubert_kernel_def positions_unit, positions_fiber, positions_phased;

#define OK(expr)                                                              \
  do {                                                                        \
    cubert_status s_ = (expr);                                                \
    cr_assert_null(s_, "%s: %s", #expr, s_ ? cubert_status_message(s_) : ""); \
  } while (0)

enum { CUBES = 4, DIM = 64, UNITS = CUBES * DIM };

static void set_seed(const char *seed) {
  if (seed)
    setenv("CUBERT_VALIDATE_SEED", seed, 1);
  else
    unsetenv("CUBERT_VALIDATE_SEED");
  cubert_config_reload_for_tests();
}

/* Runs `kernel` with buffers {in (n0 words), out (n1 words)} (n0 = 0: {out} alone) on a private
   CPU device in `mode`, with `seed` set (NULL: unset); out receives the last buffer. in NULL:
   zeros. */
static void run(const cubert_kernel_def *kernel, const char *seed, cubert_execution_mode mode,
                cubert_cube_count count, cubert_cube_dim dim, const uint32_t *in, size_t n0,
                uint32_t *out, size_t n1, uint64_t info0) {
  set_seed(seed);
  cubert_client *client = NULL;
  OK(cubert_client_create("cpu!private", &client));
  uint32_t *zeros = calloc(n0 > n1 ? n0 : n1, sizeof(uint32_t));
  cubert_handle *h[2] = {NULL, NULL};
  const uint32_t nb = n0 ? 2 : 1;
  if (n0) OK(cubert_client_create_buffer(client, in ? in : zeros, n0 * sizeof(uint32_t), &h[0]));
  OK(cubert_client_create_buffer(client, zeros, n1 * sizeof(uint32_t), &h[nb - 1]));
  const uint64_t info[1] = {info0};
  const cubert_kernel_args args = {h, nb, info, 1};
  OK(cubert_client_launch_mode(client, kernel, count, dim, &args, mode));
  OK(cubert_client_read(client, h[nb - 1], out, n1 * sizeof(uint32_t)));
  for (uint32_t i = 0; i < nb; ++i) cubert_handle_release(h[i]);
  cubert_client_release(client);
  free(zeros);
}

/* The order in which the UNITS units of `kernel` ran. */
static void tickets(const cubert_kernel_def *kernel, const char *seed, cubert_execution_mode mode,
                    uint32_t order[UNITS]) {
  run(kernel, seed, mode, cubert_cube_count_new_3d(CUBES, 1, 1), cubert_cube_dim_new_3d(DIM, 1, 1),
      NULL, 1, order, UNITS, 0);
}

static void assert_permutation(const uint32_t *order, const char *what) {
  static int seen[UNITS];
  memset(seen, 0, sizeof seen);
  for (int k = 0; k < UNITS; ++k) {
    cr_assert_lt(order[k], UNITS, "%s: order[%d] = %u", what, k, order[k]);
    cr_assert_eq(seen[order[k]]++, 0, "%s: unit %u ran twice", what, order[k]);
  }
}

static int ascending(const uint32_t *order) {
  for (int k = 0; k < UNITS; ++k)
    if (order[k] != (uint32_t)k) return 0;
  return 1;
}

static const cubert_kernel_def *const ticket_kernels[] = {&order_ticket_unit, &order_ticket_fiber,
                                                          &order_ticket_phased};

/* Whether the seeded order reaches the units inside a cube of form f (0 unit, 1 fiber, 2
   phased): a phased kernel's PHASE loops run its units in the seeded order in the kernel
   sanitizer's copy (cube.h), which validate mode runs; a build without that copy (not GCC)
   shuffles only a phased kernel's cubes. */
static int units_shuffled(int f) {
  return f < 2 || ticket_kernels[f]->cpu_sanitize != NULL;
}

Test(cpu_order, seed_0_is_the_reversed_order_in_every_form) {
  for (int f = 0; f < 3; ++f) {
    uint32_t order[UNITS];
    tickets(ticket_kernels[f], "0", CUBERT_EXECUTION_VALIDATE, order);
    for (int k = 0; k < UNITS; ++k) {
      uint32_t expect = units_shuffled(f) ? (uint32_t)(UNITS - 1 - k)
                                          : (uint32_t)((CUBES - 1 - k / DIM) * DIM + k % DIM);
      cr_assert_eq(order[k], expect, "%s: the %d-th unit to run was %u, not %u",
                   ticket_kernels[f]->name, k, order[k], expect);
    }
  }
}

Test(cpu_order, a_seed_repeats_its_order_and_other_seeds_change_it) {
  for (int f = 0; f < 3; ++f) {
    const char *name = ticket_kernels[f]->name;
    uint32_t a[UNITS], again[UNITS], b[UNITS];
    tickets(ticket_kernels[f], "12345", CUBERT_EXECUTION_VALIDATE, a);
    tickets(ticket_kernels[f], "12345", CUBERT_EXECUTION_VALIDATE, again);
    tickets(ticket_kernels[f], "777", CUBERT_EXECUTION_VALIDATE, b);
    assert_permutation(a, name);
    assert_permutation(b, name);
    cr_assert_arr_eq(a, again, sizeof a, "%s: the same seed gave two orders", name);
    cr_assert(memcmp(a, b, sizeof a) != 0, "%s: seeds 12345 and 777 gave one order", name);
    cr_assert_not(ascending(a), "%s: seed 12345 ran the plain order", name);
    if (f > 0) {
      /* Cube forms: a cube runs whole (its units between two barriers, one fiber ring or one
         PHASE loop), so each run of DIM tickets is one cube's units, in a shuffled order. */
      int unit_shuffled = 0;
      for (int c = 0; c < CUBES; ++c) {
        uint32_t cube = a[c * DIM] / DIM;
        for (int u = 0; u < DIM; ++u) {
          cr_assert_eq(a[c * DIM + u] / DIM, cube, "%s: cube %u interleaved with another", name,
                       cube);
          if (a[c * DIM + u] % DIM != (uint32_t)u) unit_shuffled = 1;
        }
      }
      if (units_shuffled(f))
        cr_assert(unit_shuffled, "%s: the units of every cube ran in ascending order", name);
    }
  }
}

Test(cpu_order, checked_mode_keeps_the_plain_order) {
  /* One kernel thread runs the chunks in order, so without a shuffle the order is ascending;
     the seed only affects validate mode. */
  setenv("CUBERT_CPU_THREADS", "1", 1);
  for (int f = 0; f < 3; ++f) {
    uint32_t order[UNITS];
    tickets(ticket_kernels[f], "12345", CUBERT_EXECUTION_CHECKED, order);
    cr_assert(ascending(order), "%s: checked mode changed the order", ticket_kernels[f]->name);
    tickets(ticket_kernels[f], "12345", CUBERT_EXECUTION_UNCHECKED, order);
    cr_assert(ascending(order), "%s: unchecked mode changed the order", ticket_kernels[f]->name);
  }
}

Test(cpu_order, correct_kernels_give_the_same_result_under_every_seed) {
  static const char *const seeds[] = {NULL, "0", "1", "2", "99", "4294967295"};
  uint32_t in[UNITS], expect[CUBES] = {0};
  for (int i = 0; i < UNITS; ++i) {
    in[i] = (uint32_t)(i * 2654435761u >> 20);
    expect[i / DIM] += in[i];
  }
  const cubert_kernel_def *sums[] = {&order_sum_fiber, &order_sum_phased};
  for (int k = 0; k < 2; ++k)
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; ++s) {
      uint32_t out[CUBES];
      run(sums[k], seeds[s], CUBERT_EXECUTION_VALIDATE, cubert_cube_count_new_3d(CUBES, 1, 1),
          cubert_cube_dim_new_3d(DIM, 1, 1), in, UNITS, out, CUBES, 0);
      cr_assert_arr_eq(out, expect, sizeof out, "%s, seed %s", sums[k]->name,
                       seeds[s] ? seeds[s] : "(unset)");
    }
  /* Every position a unit can ask for, in 3-D cubes and cube counts: a shuffled unit still sees
     its own positions (16 words per unit, tests/kernels/language.cube.c). */
  const cubert_kernel_def *positions[] = {&positions_unit, &positions_fiber, &positions_phased};
  enum { WORDS = 2 * 3 * 2 * 4 * 2 * 3 * 16 };
  static uint32_t plain[WORDS], seeded[WORDS];
  for (int k = 0; k < 3; ++k) {
    run(positions[k], NULL, CUBERT_EXECUTION_VALIDATE, cubert_cube_count_new_3d(2, 3, 2),
        cubert_cube_dim_new_3d(4, 2, 3), NULL, 0, plain, WORDS, WORDS / 16);
    for (size_t s = 1; s < sizeof seeds / sizeof seeds[0]; ++s) {
      run(positions[k], seeds[s], CUBERT_EXECUTION_VALIDATE, cubert_cube_count_new_3d(2, 3, 2),
          cubert_cube_dim_new_3d(4, 2, 3), NULL, 0, seeded, WORDS, WORDS / 16);
      cr_assert_arr_eq(seeded, plain, sizeof plain, "%s, seed %s", positions[k]->name, seeds[s]);
    }
  }
}

Test(cpu_order, orders_are_permutations) {
  static const uint64_t counts[] = {1, 2, 3, 5, 64, 100, 1000, 1024, 4097};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    const uint64_t n = counts[i];
    for (uint32_t seed = 0; seed < 4; ++seed) {
      cubert_cpu_order order;
      cubert_cpu_order_init(&order, seed, 7, n);
      unsigned char *seen = calloc(n, 1);
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t x = cubert_cpu_order_at(&order, k);
        cr_assert_lt(x, n, "n %llu seed %u: %llu", (unsigned long long)n, seed,
                     (unsigned long long)x);
        cr_assert_eq(seen[x]++, 0, "n %llu seed %u: %llu twice", (unsigned long long)n, seed,
                     (unsigned long long)x);
        if (seed == 0) cr_assert_eq(x, n - 1 - k);
      }
      free(seen);
    }
  }
  /* Another salt (another cube), another order. */
  uint16_t a[64], b[64];
  cubert_cpu_order_fill_u16(5, 1, 64, a);
  cubert_cpu_order_fill_u16(5, 2, 64, b);
  cr_assert(memcmp(a, b, sizeof a) != 0);
}
