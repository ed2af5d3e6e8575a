/* CPU server: device properties, topology, the backend object, storage pages, reads/writes and
   profiling, driven through the server vtable. */
#include <hwloc.h>
#include <stdio.h>

#include "base/config.h"
#include "cpu_harness.h"
#include "cubert/backend.h"
#include "cubert/config.h"
#include "stream/timing.h"

/* Cores with a PU in the process's cpubind set, counted independently of the server. */
static uint32_t hwloc_cores_in_cpubind(void) {
  hwloc_topology_t topo;
  cr_assert_eq(hwloc_topology_init(&topo), 0);
  cr_assert_eq(hwloc_topology_load(topo), 0);
  hwloc_bitmap_t bind = hwloc_bitmap_alloc();
  cr_assert_eq(hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS), 0);
  uint32_t cores = 0;
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
    if (hwloc_bitmap_intersects(core->cpuset, bind)) ++cores;
  }
  hwloc_bitmap_free(bind);
  hwloc_topology_destroy(topo);
  return cores;
}

Test(cpu_server, properties) {
  cubert_server *server = cpu_server_new();
  const cubert_device_properties *p = &server->properties;
  const cubert_hardware_properties *hw = &p->hardware;
  cr_assert_str_eq(p->backend, "cpu");
  cr_assert_neq(p->name[0], '\0');
  cr_assert_eq(p->type, CUBERT_DEVICE_TYPE_CPU_SERVER);
  cr_assert_eq(p->timing_method, CUBERT_TIMING_SYSTEM);
  cr_assert_eq(hw->load_width, 512);
  cr_assert_eq(hw->plane_size_min, 1);
  cr_assert_eq(hw->plane_size_max, 1);
  cr_assert_eq(hw->max_bindings, UINT32_MAX);
  cr_assert_geq(hw->max_shared_memory_size, 64 * 1024);
  for (int i = 0; i < 3; ++i) cr_assert_eq(hw->max_cube_count[i], UINT32_MAX);
  cr_assert_eq(hw->max_units_per_cube, 1024);
  cr_assert_eq(hw->max_cube_dim[0], 1024);
  cr_assert_eq(hw->max_cube_dim[1], 1024);
  cr_assert_eq(hw->max_cube_dim[2], 64);
  cr_assert_eq(hw->max_vector_size, 16);
  cr_assert_eq(p->memory.alignment, 64);
  cr_assert_gt(p->memory.max_page_size, 0);
  cr_assert_leq(p->memory.max_page_size, 1ull << 36);
  cr_assert(p->features & CUBERT_FEATURE_FP64);
  cpu_server_free(server);
}

Test(cpu_server, cores_are_hwloc_cores_in_cpubind) {
  cubert_server *server = cpu_server_new();
  uint32_t cores = hwloc_cores_in_cpubind();
  cr_assert_gt(cores, 0);
  cr_assert_eq(server->properties.hardware.num_cpu_cores, cores);
  /* Without CUBERT_CPU_THREADS, one kernel thread per core. */
  if (cubert_config_get()->cpu_threads == 0)
    cr_assert_eq(server->properties.hardware.num_compute_units, cores);
  cubert_cpu_topology_info info;
  cr_assert_null(cubert_cpu_topology_query(&info));
  cr_assert_eq(info.core_count, cores);
  cr_assert_geq(info.pu_count, info.core_count);
  cr_assert_geq(info.numa_node_count, 1);
  cr_assert_eq(info.from_hwloc, 1);
  cr_assert_neq(info.cpubind[0], '\0');
  cubert_status bad = cubert_cpu_topology_query(NULL);
  cr_assert_eq(cubert_status_code(bad), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(bad);
  cpu_server_free(server);
}

Test(cpu_server, cpu_threads_overrides_the_pool) {
  setenv("CUBERT_CPU_THREADS", "3", 1);
  cubert_config_reload_for_tests();
  cubert_server *server = cpu_server_new();
  cr_assert_eq(server->properties.hardware.num_compute_units, 3);
  cr_assert_eq(server->properties.hardware.num_cpu_cores, hwloc_cores_in_cpubind());
  cpu_server_free(server);
  unsetenv("CUBERT_CPU_THREADS");
  cubert_config_reload_for_tests();
}

Test(cpu_server, backend_object) {
  cr_assert_str_eq(cubert_cpu_backend.name, "cpu");
  size_t count = 0;
  cubert_device_info info[2];
  cr_assert_null(cubert_cpu_backend.enumerate(info, 2, &count));
  cr_assert_eq(count, 1);
  cr_assert_str_eq(info[0].selector, "cpu");
  cr_assert_eq(info[0].available, 1);
  cr_assert_str_eq(info[0].properties.backend, "cpu");
  cr_assert_null(cubert_cpu_backend.enumerate(NULL, 0, &count));
  cr_assert_eq(count, 1);

  cubert_server *server = NULL;
  cubert_status s = cubert_cpu_backend.create("7", &server);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND);
  cr_assert_not_null(strstr(cubert_status_message(s), "cpu:0"), "%s", cubert_status_message(s));
  cr_assert_null(server);
  cubert_status_free(s);
  s = cubert_cpu_backend.create("0", &server);
  cr_assert_null(s);
  cpu_server_free(server);

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cubert_cpu_backend.describe(0, out);
  fclose(out);
  cr_assert_not_null(strstr(text, "cores in cpubind"), "%s", text);
  cr_assert_not_null(strstr(text, "L1d"), "%s", text);
  cr_assert_not_null(strstr(text, "NUMA nodes"), "%s", text);
  free(text);
}

Test(cpu_server, storage_pages_are_aligned_and_distinct) {
  cubert_server *server = cpu_server_new();
  const uint64_t sizes[] = {0, 1, 63, 64, 100, 4096, 300000, 1u << 20, 9u << 20, 64u << 20};
  enum { N = sizeof sizes / sizeof sizes[0] };
  cubert_storage pages[N];
  for (int i = 0; i < N; ++i) {
    cubert_status s = server->vtable->storage_alloc(server, sizes[i], &pages[i]);
    cr_assert_null(s, "%s", cubert_status_message(s));
    cr_assert_not_null(pages[i].host_ptr);
    cr_assert_eq((uintptr_t)pages[i].host_ptr % 64, 0, "size %llu", (unsigned long long)sizes[i]);
    cr_assert_eq(pages[i].size, sizes[i]);
    if (sizes[i] >= (1u << 20)) cr_assert_eq((uintptr_t)pages[i].host_ptr % 4096, 0);
    for (int j = 0; j < i; ++j) cr_assert_neq(pages[i].id, pages[j].id);
    /* Writable end to end. */
    if (sizes[i]) {
      ((volatile char *)pages[i].host_ptr)[0] = 1;
      ((volatile char *)pages[i].host_ptr)[sizes[i] - 1] = 2;
    }
  }
  for (int i = 0; i < N; ++i) server->vtable->storage_free(server, &pages[i]);
  cpu_server_free(server);
}

Test(cpu_server, absurd_storage_is_out_of_memory) {
  cubert_server *server = cpu_server_new();
  cubert_storage page;
  const uint64_t huge = 1ull << 62;
  cubert_status s = server->vtable->storage_alloc(server, huge, &page);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY);
  cr_assert_eq(cubert_status_size(s), huge);
  cubert_status_free(s);
  s = server->vtable->storage_alloc(server, UINT64_MAX, &page);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY);
  cubert_status_free(s);
  /* Still usable. */
  cpu_buf *b = cpu_buf_new(server, 1024);
  cpu_buf_free(server, b);
  cpu_server_free(server);
}

Test(cpu_server, write_then_read_round_trips) {
  cubert_server *server = cpu_server_new();
  cpu_stream st = cpu_stream_new(server);
  cpu_buf *b = cpu_buf_new(server, 4096);
  uint8_t src[1000], dst[1000];
  for (int i = 0; i < 1000; ++i) src[i] = (uint8_t)(i * 7 + 3);
  cubert_binding part = {&b->slice, 96, 1000};
  cr_assert_null(server->vtable->write(server, st.stream, &part, src, sizeof src));
  memset(dst, 0, sizeof dst);
  cr_assert_null(server->vtable->read(server, st.stream, &part, dst, sizeof dst));
  cr_assert_arr_eq(dst, src, sizeof src);
  cr_assert_arr_eq((uint8_t *)cpu_buf_ptr(b) + 96, src, sizeof src);
  /* Larger than the binding: refused with the numbers. */
  cubert_status s = server->vtable->read(server, st.stream, &part, dst, 2000);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(cubert_status_message(s), "2000"));
  cubert_status_free(s);
  cpu_buf_free(server, b);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* Busy work: each unit spins `info[0]` iterations and writes its id. */
static void busy_kernel(const cubert_cpu_ctx *ctx) {
  uint64_t *out = ctx->buffers[0];
  for (uint64_t id = ctx->unit_begin; id < ctx->unit_end; ++id) {
    volatile uint64_t acc = 0;
    for (uint64_t k = 0; k < ctx->info[0]; ++k) acc += k;
    out[id] = id + (acc & 0);
  }
}
static const cubert_kernel_def busy = {.name = "busy", .cpu = busy_kernel};

/* The CPU server has no profiler of its own (no cubert_server_profiler table): the core times
   its regions on the host (lib/stream/timing.c), and they nest and overlap. */
Test(cpu_server, host_timed_regions_nest_and_overlap) {
  cubert_server *server = cpu_server_new();
  cr_assert_null(server->profiler);
  cpu_stream st = cpu_stream_new(server);
  cpu_buf *b = cpu_buf_new(server, 64 * sizeof(uint64_t));
  const uint64_t spin = 200000;
  cubert_timing r1, r2, r3;
  cr_assert_null(cubert_timing_begin(server, st.stream, 1, &r1));
  cr_assert_null(cubert_timing_begin(server, st.stream, 2, &r2));
  cpu_launch(server, st, &busy, 64, 1, &b, 1, &spin, 1);
  cubert_profile_duration inner, outer, third;
  cr_assert_null(cubert_timing_begin(server, st.stream, 3, &r3));
  /* Region 2 ends while region 3 is open: overlapping regions. */
  cr_assert_null(cubert_timing_end(server, st.stream, &r2, &inner));
  cr_assert_eq(inner.method, CUBERT_TIMING_SYSTEM);
  cr_assert_gt(inner.duration_ns, 0);
  cr_assert_null(cubert_timing_end(server, st.stream, &r3, &third));
  cr_assert_null(cubert_timing_end(server, st.stream, &r1, &outer));
  cr_assert_geq(outer.duration_ns, inner.duration_ns);
  /* Host clock ticks: region 2 inside region 1, region 3 starting after region 2's work. */
  cr_assert_eq(inner.end_ticks - inner.start_ticks, inner.duration_ns);
  cr_assert_leq(outer.start_ticks, inner.start_ticks);
  cr_assert_geq(outer.end_ticks, third.end_ticks);
  cr_assert_geq(third.start_ticks, inner.start_ticks);
  /* The work really ran before the region ended. */
  for (uint64_t i = 0; i < 64; ++i) cr_assert_eq(((uint64_t *)cpu_buf_ptr(b))[i], i);
  cpu_buf_free(server, b);
  cpu_stream_free(server, st);
  cpu_server_free(server);
}

/* A kernel without CPU code, or more units per cube than the device allows, is refused by the
   core before the server sees the launch (server.h's launch contract): cts_launch.c's
   kernel_without_implementation_names_kernel_and_backend and
   too_many_units_per_cube_names_the_limit test it on every server. */
