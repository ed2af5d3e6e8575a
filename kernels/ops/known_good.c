/* cubert — known-good defaults of the operations' tunable sets per device family
   (cubert_tune_call.known_good), the small table CLBlast ships as its "database".

   Why a table: on PoCL every (kernel, local size) pair is compiled on its first launch, so the
   warm-up of each candidate costs 0.2–2 s of LLVM time while its timed runs cost microseconds
   (docs/benchmarks-history.md, "Tuning in seconds"). CUBERT_AUTOTUNE=minimal takes the entry for
   the device family without running anything else; full still measures every candidate and so
   refines the table per key. An entry is a candidate name, found by name in the set (a renamed
   or removed candidate simply makes the entry inert), and must stay a choice that full tuning
   makes or comes within a few percent of: the entries below are the winners of full tuning on
   PoCL 3.1 (AVX-512 host) at the sizes of examples/mlp.c. A set may have several entries per
   family, in order of preference: the first one valid for the key is taken (vec8x32 for the
   MLP's first product; simple for its second, 61 x 128 x 10, where vec8x32 is not valid and
   full tuning picks simple over tile32x32). The unit-per-row forms lead their sets: they are
   valid only for rows of at most 128 elements (the MLP's softmax and argmax over 10 classes,
   where full tuning picks them), and longer rows take the cube forms after them, the MLP's
   winners before those forms existed. Families without measured entries have none: minimal
   then measures the set's group 0 as before. */
#include "ops/known_good.h"

#include <string.h>

#include "cubert/client.h"
#include "cubert/device.h"
#include "cubert/tune.h"

typedef enum family { FAMILY_CPU_SERVER, FAMILY_POCL, FAMILY_NVIDIA, FAMILY_OTHER } family;

typedef struct known_good_entry {
  const char *set_name;
  family family;
  const char *candidate;
} known_good_entry;

static const known_good_entry table[] = {
    {"ops.softmax", FAMILY_POCL, "units_d64"},
    {"ops.softmax", FAMILY_POCL, "online_d32"},
    {"ops.reduce_axis", FAMILY_POCL, "rowwise_d64"},
    {"ops.reduce_axis", FAMILY_POCL, "inner_x8_d64"},
    {"matmul_f32", FAMILY_POCL, "vec8x32"},
    {"matmul_f32", FAMILY_POCL, "simple"},
};

static family family_of(const cubert_client *client) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p) return FAMILY_OTHER;
  if (p->type == CUBERT_DEVICE_TYPE_CPU_SERVER) return FAMILY_CPU_SERVER;
  if (strstr(p->platform_version, "PoCL") || strstr(p->driver_version, "PoCL")) return FAMILY_POCL;
  if (strstr(p->vendor, "NVIDIA")) return FAMILY_NVIDIA;
  return FAMILY_OTHER;
}

uint32_t cubert_ops_known_good(const cubert_client *client, const cubert_tune_set *set,
                               const uint8_t *eligible) {
  const family f = family_of(client);
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (table[i].family != f || strcmp(table[i].set_name, set->name) != 0) continue;
    for (uint32_t c = 0; c < set->candidate_count; ++c)
      if (eligible[c] && strcmp(set->candidates[c].name, table[i].candidate) == 0) return c;
  }
  return UINT32_MAX;
}
