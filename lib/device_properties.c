/* cubert — what the core adds to the backends' device descriptions: the stable properties
   checksum (device.h, properties_hash) and the public device listing and count over every
   backend (server.h, cubert_devices_list; the reference's enumerate_devices / device_count).

   The checksum is FNV-1a 64 over the fields one by one, never over the struct's bytes: padding
   and the bytes after a string's NUL are whatever the filler left there, and a checksum the
   caches key on must be the same in every process for the same device. Integers go in as
   little-endian bytes, so the checksum does not depend on the host's byte order either. */
#include <stdio.h>
#include <string.h>

#include "backend_list.h"
#include "cubert/backend.h"
#include "cubert/device.h"
#include "cubert/server.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static void mix_bytes(uint64_t *h, const void *data, size_t size) {
  const unsigned char *p = data;
  for (size_t i = 0; i < size; ++i) *h = (*h ^ p[i]) * FNV_PRIME;
}

static void mix_u64(uint64_t *h, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = (unsigned char)(v >> (8 * i));
  mix_bytes(h, b, sizeof b);
}

/* The string up to its NUL (or the array's end), then its length, so that "ab"+"c" and
   "a"+"bc" in two neighbouring fields differ. */
static void mix_string(uint64_t *h, const char *s, size_t capacity) {
  size_t n = strnlen(s, capacity);
  mix_bytes(h, s, n);
  mix_u64(h, n);
}

#define MIX_STR(h, field) mix_string(h, field, sizeof(field))

uint64_t cubert_device_properties_hash(const cubert_device_properties *p) {
  if (!p) return 0;
  uint64_t h = FNV_OFFSET;
  const cubert_hardware_properties *hw = &p->hardware;
  MIX_STR(&h, p->name);
  mix_u64(&h, hw->load_width);
  mix_u64(&h, hw->plane_size_min);
  mix_u64(&h, hw->plane_size_max);
  mix_u64(&h, hw->max_bindings);
  mix_u64(&h, hw->max_shared_memory_size);
  for (int i = 0; i < 3; ++i) mix_u64(&h, hw->max_cube_count[i]);
  mix_u64(&h, hw->max_units_per_cube);
  for (int i = 0; i < 3; ++i) mix_u64(&h, hw->max_cube_dim[i]);
  mix_u64(&h, hw->num_cpu_cores);
  mix_u64(&h, hw->max_vector_size);
  mix_u64(&h, hw->num_compute_units);
  mix_u64(&h, hw->max_total_cubes);
  mix_u64(&h, p->memory.max_page_size);
  mix_u64(&h, p->memory.alignment);
  mix_u64(&h, p->features);
  mix_u64(&h, (uint64_t)p->timing_method);
  mix_u64(&h, (uint64_t)p->type);
  MIX_STR(&h, p->backend);
  MIX_STR(&h, p->vendor);
  MIX_STR(&h, p->driver_version);
  MIX_STR(&h, p->platform_version);
  const cubert_vector_widths *w = &p->vector_widths;
  const uint32_t widths[] = {w->i8, w->i16, w->i32, w->i64, w->f16, w->f32, w->f64};
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) mix_u64(&h, widths[i]);
  uint32_t planes =
      p->plane_size_count < CUBERT_MAX_PLANE_SIZES ? p->plane_size_count : CUBERT_MAX_PLANE_SIZES;
  mix_u64(&h, planes);
  for (uint32_t i = 0; i < planes; ++i) mix_u64(&h, p->plane_sizes[i]);
  return h;
}

cubert_status cubert_device_io_vector_sizes(const cubert_device_properties *p, size_t elem_bytes,
                                            uint32_t *out, size_t capacity, size_t *out_count) {
  const char *fn = "cubert_device_io_vector_sizes";
  if (!p || !out_count || !elem_bytes || (!out && capacity))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s", fn,
                              !p           ? "properties is NULL"
                              : !out_count ? "out_count is NULL"
                              : !elem_bytes
                                  ? "elem_bytes is 0; expected the element size in bytes (>= 1)"
                                  : "out is NULL but capacity is not 0");
  uint64_t max = p->hardware.load_width / (8u * (uint64_t)elem_bytes);
  if (max > p->hardware.max_vector_size) max = p->hardware.max_vector_size;
  if (max < 1) max = 1;
  /* the reference: log2 of max's lowest set bit, plus one, candidates 2^k down to 1 */
  unsigned k = 0;
  while (!((max >> k) & 1u)) ++k;
  size_t n = 0;
  for (int i = (int)k; i >= 0; --i, ++n)
    if (n < capacity) out[n] = 1u << i;
  *out_count = n;
  return NULL;
}

/* The backend named `name`; NOT_FOUND naming the backends built in. */
static cubert_status find_backend(const char *name, const char *fn, const cubert_backend **out) {
  *out = cubert_backend_find(name, strlen(name));
  if (*out) return NULL;
  char known[256];
  cubert_backend_names(known, sizeof known);
  return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                            "%s: backend is \"%s\"; the backends of this library are %s", fn, name,
                            known);
}

/* One backend's devices into out[0..capacity) (hashes filled), *total += its count. */
static cubert_status list_backend(const cubert_backend *b, cubert_device_info *out, size_t capacity,
                                  size_t *total) {
  size_t count = 0;
  CUBERT_RETURN_IF_ERROR(b->enumerate(capacity ? out : NULL, capacity, &count));
  size_t filled = count < capacity ? count : capacity;
  for (size_t i = 0; i < filled; ++i)
    out[i].properties.properties_hash = cubert_device_properties_hash(&out[i].properties);
  *total += count;
  return NULL;
}

/* cubert_devices_list and _count; `fn` names the public call in errors. */
static cubert_status list_devices(const char *fn, const char *backend, cubert_device_info *out,
                                  size_t capacity, size_t *out_count) {
  if (!out_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: out_count is NULL", fn);
  *out_count = 0;
  if (!out && capacity)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: out is NULL but capacity is %zu (pass capacity 0 to count)", fn,
                              capacity);
  size_t total = 0;
  if (backend) {
    const cubert_backend *b = NULL;
    CUBERT_RETURN_IF_ERROR(find_backend(backend, fn, &b));
    CUBERT_RETURN_IF_ERROR(list_backend(b, out, capacity, &total));
  } else {
    const cubert_backend *all[CUBERT_MAX_REGISTERED_BACKENDS + 8];
    size_t n = cubert_backend_all(all, sizeof all / sizeof *all);
    for (size_t i = 0; i < n && i < sizeof all / sizeof *all; ++i) {
      size_t at = total < capacity ? total : capacity;
      CUBERT_RETURN_IF_ERROR(list_backend(all[i], out ? out + at : NULL, capacity - at, &total));
    }
  }
  *out_count = total;
  return NULL;
}

cubert_status cubert_devices_list(const char *backend, cubert_device_info *out, size_t capacity,
                                  size_t *out_count) {
  return list_devices("cubert_devices_list", backend, out, capacity, out_count);
}

cubert_status cubert_devices_count(const char *backend, size_t *out_count) {
  return list_devices("cubert_devices_count", backend, NULL, 0, out_count);
}
