/* The CPU server discovers the machine with hwloc once per process, not on every client create
   (issue 10). hwloc_topology_load is interposed here to count discoveries; every device still
   gets the full topology (cores, CPU sets for pinning). */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <dlfcn.h>
#include <hwloc.h>
#include <stdatomic.h>

#include "cpu/api.h"

static atomic_int loads;

int hwloc_topology_load(hwloc_topology_t topology) {
  static int (*real)(hwloc_topology_t);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "hwloc_topology_load");
  atomic_fetch_add(&loads, 1);
  return real(topology);
}

Test(cpu_topology_once, hwloc_discovers_the_machine_once_per_process) {
  cubert_client *c = NULL;
  cr_assert_null(cubert_client_create("cpu", &c));
  uint32_t cores = cubert_client_properties(c)->hardware.num_cpu_cores;
  cubert_client_release(c);
  int after_first = atomic_load(&loads);
  cr_assert_leq(after_first, 1, "%d hwloc loads for one client", after_first);
  for (int i = 0; i < 5; ++i) {
    cr_assert_null(cubert_client_create("cpu", &c));
    cr_assert_eq(cubert_client_properties(c)->hardware.num_cpu_cores, cores);
    cubert_client_release(c);
  }
  cubert_cpu_topology_info info;
  cr_assert_null(cubert_cpu_topology_query(&info));
  cr_assert_gt(info.core_count, 0);
  cr_assert_eq(after_first, info.from_hwloc ? 1 : 0, "the interposer saw %d loads", after_first);
  cr_assert_eq(atomic_load(&loads), after_first, "hwloc reloaded the topology %d more times",
               atomic_load(&loads) - after_first);
}
