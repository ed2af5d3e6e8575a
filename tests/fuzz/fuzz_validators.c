/* libFuzzer target over the core's pure validators (issue 10): layouts (compute, plan,
   is_contiguous), cube geometry (count spread, cube dim heuristic, unit counts) and status
   objects (any code, any message bytes, limits, dims, causes). Beyond the sanitizers' checks,
   each accepted result is checked against what its header promises; a broken promise traps.

   Input: the first byte picks the function, the rest feeds its arguments. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/status.h"
#include "cubert/geometry.h"
#include "cubert/layout.h"
#include "cubert/server.h"
#include "cubert/status.h"

#define CHECK(cond)                \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static uint64_t take(input *in, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) {
    v = (v << 8) | (in->n ? *in->p : 0);
    if (in->n) {
      ++in->p;
      --in->n;
    }
  }
  return v;
}

/* Sizes biased towards the interesting ones: small, powers of two, near 2^64. */
static uint64_t take_size(input *in) {
  uint8_t kind = (uint8_t)take(in, 1);
  switch (kind % 4) {
    case 0:
      return take(in, 1);
    case 1:
      return 1ull << (take(in, 1) % 64);
    case 2:
      return UINT64_MAX - take(in, 1);
    default:
      return take(in, 8);
  }
}

static void take_desc(input *in, cubert_layout_desc *d) {
  memset(d, 0, sizeof(*d));
  d->strategy = (cubert_layout_strategy)(take(in, 1) % 3); /* 2: invalid */
  d->rank = (uint32_t)(take(in, 1) % (CUBERT_MAX_RANK + 2));
  for (uint32_t i = 0; i < CUBERT_MAX_RANK; ++i) d->shape[i] = take_size(in);
  d->elem_size = take_size(in);
}

/* An accepted layout spans every element: the last element's byte end lies within size. */
static void check_layout(const cubert_layout_desc *d, const cubert_layout *l) {
  CHECK(l->rank == d->rank);
  unsigned __int128 last = 0;
  int empty = 0;
  for (uint32_t i = 0; i < d->rank; ++i) {
    if (d->shape[i] == 0)
      empty = 1;
    else
      last += (unsigned __int128)(d->shape[i] - 1) * l->strides[i];
  }
  if (!empty && d->rank) CHECK((last + 1) * d->elem_size <= l->size);
  if (cubert_layout_is_contiguous(d->rank, d->shape, l->strides) && !empty) {
    unsigned __int128 elems = 1;
    for (uint32_t i = 0; i < d->rank; ++i) elems *= d->shape[i];
    CHECK(elems * d->elem_size == l->size);
  }
}

static void fuzz_layout(input *in) {
  cubert_layout_desc d;
  take_desc(in, &d);
  uint64_t pitch = take_size(in);
  cubert_layout l;
  cubert_status s = cubert_layout_compute(&d, pitch, &l);
  if (s) {
    CHECK(cubert_status_message(s) != NULL);
    cubert_status_free(s);
    return;
  }
  check_layout(&d, &l);
}

static void fuzz_plan(input *in) {
  enum { MAX = 4 };
  cubert_layout_desc d[MAX];
  size_t count = (size_t)(take(in, 1) % (MAX + 1));
  for (size_t i = 0; i < count; ++i) take_desc(in, &d[i]);
  uint64_t pitch = take_size(in), align = take_size(in), total = 0;
  cubert_layout l[MAX];
  cubert_status s = cubert_layout_plan(d, count, pitch, align, l, &total);
  if (s) {
    cubert_status_free(s);
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    check_layout(&d[i], &l[i]);
    if (align > 1) CHECK(l[i].offset % align == 0);
    CHECK(l[i].offset <= total && l[i].size <= total - l[i].offset);
    /* Tensors do not overlap: each starts at or after the end of the one before. */
    if (i) CHECK(l[i].offset >= l[i - 1].offset + l[i - 1].size);
  }
}

static void fuzz_geometry(input *in) {
  uint32_t max[3], out[3];
  for (int i = 0; i < 3; ++i) max[i] = (uint32_t)take(in, 4);
  uint32_t cubes = (uint32_t)take(in, 4);
  cubert_status s = cubert_cube_count_spread(max, cubes, out);
  if (s) {
    cubert_status_free(s);
  } else {
    for (int i = 0; i < 3; ++i) CHECK(out[i] <= max[i]);
    CHECK((unsigned __int128)out[0] * out[1] * out[2] >= cubes);
  }
  uint32_t units = (uint32_t)take(in, 4), plane = (uint32_t)take(in, 2);
  uint32_t max_units = (uint32_t)take(in, 4), cores = (uint32_t)take(in, 1);
  cubert_cube_dim dim = cubert_cube_dim_for_units(units, plane, max_units, cores);
  CHECK(dim.x >= 1 && dim.y >= 1 && dim.z >= 1);
  (void)cubert_cube_dim_num_elems(dim);
}

static void fuzz_status(input *in) {
  cubert_code code = (cubert_code)take(in, 2);
  CHECK(cubert_code_name(code) != NULL);
  CHECK(cubert_kind_name(cubert_code_kind(code)) != NULL);
  char text[256];
  size_t len = in->n < sizeof(text) - 1 ? in->n : sizeof(text) - 1;
  memcpy(text, in->p, len);
  text[len] = '\0';
  cubert_status cause = cubert_status_make(code, "%s", text);
  if (code == CUBERT_CODE_OK) {
    CHECK(cause == NULL); /* OK is the absence of an error */
    return;
  }
  CHECK(cause != NULL);
  uint32_t req[3] = {1, 2, 3}, max[3] = {4, 5, 6};
  cubert_status_set_limits(cause, len, 7);
  cubert_status_set_dims(cause, req, max);
  cubert_status_set_build_log(cause, text);
  cubert_status copy = cubert_status_clone(cause);
  cubert_status s = cubert_status_wrap(CUBERT_CODE_GENERIC, cause, "outer %zu", len);
  CHECK(cubert_status_message(s) != NULL);
  CHECK(cubert_status_cause(s) != NULL);
  cubert_status both[2] = {s, copy};
  cubert_status unhealthy = cubert_status_unhealthy(both, 2);
  CHECK(cubert_status_error_count(unhealthy) == 2);
  CHECK(cubert_status_message(unhealthy) != NULL);
  cubert_status_free(unhealthy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  switch (take(&in, 1) % 4) {
    case 0:
      fuzz_layout(&in);
      break;
    case 1:
      fuzz_plan(&in);
      break;
    case 2:
      fuzz_geometry(&in);
      break;
    default:
      fuzz_status(&in);
      break;
  }
  return 0;
}
