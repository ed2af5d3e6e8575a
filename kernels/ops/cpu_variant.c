/* cubert — the widest CPU build of a kernel file that the host runs: the x86-64 levels are
   detected once (base/x86_level.h). */
#include "ops/cpu_variant.h"

#include <stdatomic.h>

#include "base/x86_level.h"
#include "cubert/device.h"

cubert_ops_cpu_level cubert_ops_cpu_level_get(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  /* Racing first calls compute the same value; the relaxed atomic only avoids a torn read. */
  static _Atomic int level = -1;
  int l = atomic_load_explicit(&level, memory_order_relaxed);
  if (l < 0) {
    const int x86 = cubert_x86_level();
    l = x86 >= 4 ? CUBERT_OPS_CPU_X86V4 : x86 >= 3 ? CUBERT_OPS_CPU_X86V3 : CUBERT_OPS_CPU_BASELINE;
    atomic_store_explicit(&level, l, memory_order_relaxed);
  }
  return (cubert_ops_cpu_level)l;
#else
  return CUBERT_OPS_CPU_BASELINE;
#endif
}

const cubert_kernel_def *cubert_ops_cpu_pick(cubert_client *client,
                                             const cubert_kernel_def *baseline,
                                             const cubert_kernel_def *x86v3,
                                             const cubert_kernel_def *x86v4) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p || p->type != CUBERT_DEVICE_TYPE_CPU_SERVER) return baseline;
  const cubert_ops_cpu_level level = cubert_ops_cpu_level_get();
  if (x86v4 && level >= CUBERT_OPS_CPU_X86V4) return x86v4;
  if (x86v3 && level >= CUBERT_OPS_CPU_X86V3) return x86v3;
  return baseline;
}
