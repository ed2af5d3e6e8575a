# Which x86-64 builds of the library's heaviest kernel files to compile besides the baseline
# (CUBERT_KERNEL_CPU_VARIANTS; kernels/ops/cpu_variant.c picks among those built, at run time):
#   all   x86-64-v3 and x86-64-v4: a library that runs at full speed on any x86-64 CPU (the
#         default; what `cmake --install`, `make package` and `make test` build)
#   host  only the one this machine's CPU would pick (none on a CPU below x86-64-v3): full speed
#         here for a third of the variants' compile time, for a build that never leaves this host
#   none  the baseline only: `make run`'s quick start (which runs none of these kernels) and the
#         ASan, TSan and fuzz builds (which test the library's logic, not code generation for
#         another ISA from the same source)
# Ignored off x86-64, in the fuzz build (none) and with CUBERT_KERNEL_ARCH (every kernel file is
# then built for that ISA).

# The variant names a run-time pick would choose on this machine: "x86v4", "x86v3" or "".
function(cubert_host_cpu_variant out)
  if(DEFINED CACHE{CUBERT_HOST_CPU_VARIANT})
    set(${out} "${CUBERT_HOST_CPU_VARIANT}" PARENT_SCOPE)
    return()
  endif()
  set(src ${CMAKE_BINARY_DIR}/CMakeFiles/cubert_host_cpu_variant.c)
  # The same tests as cubert_ops_cpu_level_get (kernels/ops/cpu_variant.c).
  file(WRITE ${src} [=[
#include <stdio.h>
int main(void) {
  __builtin_cpu_init();
  int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi2");
  int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512cd");
  puts(v4 ? "x86v4" : v3 ? "x86v3" : "");
  return 0;
}
]=])
  try_run(run_result compile_result ${CMAKE_BINARY_DIR} ${src} RUN_OUTPUT_VARIABLE found)
  string(STRIP "${found}" found)
  if(NOT compile_result OR NOT run_result EQUAL 0)
    set(found "")
  endif()
  set(CUBERT_HOST_CPU_VARIANT "${found}" CACHE INTERNAL "the kernel CPU variant this host picks")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Sets `out` to the VARIANTS list for cubert_add_kernel_cpu_variants (empty: baseline only).
function(cubert_kernel_cpu_variant_list out)
  set(all x86v3:x86-64-v3 x86v4:x86-64-v4)
  set(list "")
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" OR CUBERT_FUZZ OR CUBERT_KERNEL_ARCH)
    set(list "")
  elseif(CUBERT_KERNEL_CPU_VARIANTS STREQUAL "all")
    set(list ${all})
  elseif(CUBERT_KERNEL_CPU_VARIANTS STREQUAL "host")
    cubert_host_cpu_variant(host)
    foreach(v ${all})
      if(v MATCHES "^${host}:" AND host)
        set(list ${v})
      endif()
    endforeach()
  elseif(NOT CUBERT_KERNEL_CPU_VARIANTS STREQUAL "none")
    message(FATAL_ERROR "CUBERT_KERNEL_CPU_VARIANTS is '${CUBERT_KERNEL_CPU_VARIANTS}': "
                        "use all, host or none")
  endif()
  set(${out} ${list} PARENT_SCOPE)
endfunction()
