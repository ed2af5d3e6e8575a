/* cubert — seeded orders for CUBERT_VALIDATE_SEED (order.h says what and why). */
#include "order.h"

/* SplitMix64's finaliser: every input bit affects every output bit. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void cubert_cpu_order_init(cubert_cpu_order *order, uint32_t seed, uint64_t salt, uint64_t count) {
  order->count = count;
  order->reversed = seed == 0;
  uint32_t bits = 1;
  while (bits < 64 && (count - 1) >> bits) ++bits;
  order->half = (bits + 1) / 2;
  order->mask = order->half >= 64 ? ~0ull : (1ull << order->half) - 1;
  uint64_t k = mix(((uint64_t)seed << 32) ^ mix(salt));
  for (int r = 0; r < 4; ++r) order->keys[r] = k = mix(k + (uint64_t)r);
}

static uint64_t feistel(const cubert_cpu_order *order, uint64_t x) {
  uint64_t l = x >> order->half, r = x & order->mask;
  for (int i = 0; i < 4; ++i) {
    uint64_t next = l ^ (mix(r ^ order->keys[i]) & order->mask);
    l = r;
    r = next;
  }
  return (l << order->half) | r;
}

uint64_t cubert_cpu_order_at(const cubert_cpu_order *order, uint64_t k) {
  if (order->reversed) return order->count - 1 - k;
  /* Cycle-walking: the domain is under 4 times the count, so a few steps on average; it ends
     because the Feistel network permutes the domain and k's cycle holds k itself. */
  uint64_t x = k;
  do x = feistel(order, x);
  while (x >= order->count);
  return x;
}

void cubert_cpu_order_fill_u16(uint32_t seed, uint64_t salt, uint32_t count, uint16_t *out) {
  cubert_cpu_order order;
  cubert_cpu_order_init(&order, seed, salt, count);
  for (uint32_t k = 0; k < count; ++k) out[k] = (uint16_t)cubert_cpu_order_at(&order, k);
}
