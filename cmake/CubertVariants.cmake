# Which x86-64 builds of the library's heaviest kernel files to compile besides the baseline
# (CUBERT_KERNEL_CPU_VARIANTS; kernels/ops/cpu_variant.c picks among those built, at run time):
#   all   x86-64-v3 and x86-64-v4: a library that runs at full speed on any x86-64 CPU (the
#         default; what `cmake --install`, `make package` and `make test` build)
#   none  the baseline only: `make run`'s quick start (which runs none of these kernels) and the
#         ASan, TSan and fuzz builds (which test the library's logic, not code generation for
#         another ISA from the same source)
# Ignored off x86-64, in the fuzz build (none) and with CUBERT_KERNEL_ARCH (every kernel file is
# then built for that ISA).

# Sets `out` to the VARIANTS list for cubert_add_kernel_cpu_variants (empty: baseline only).
function(cubert_kernel_cpu_variant_list out)
  set(list "")
  if(NOT CUBERT_KERNEL_CPU_VARIANTS MATCHES "^(all|none)$")
    message(FATAL_ERROR "CUBERT_KERNEL_CPU_VARIANTS is '${CUBERT_KERNEL_CPU_VARIANTS}': "
                        "use all or none")
  endif()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT CUBERT_FUZZ AND NOT CUBERT_KERNEL_ARCH
     AND CUBERT_KERNEL_CPU_VARIANTS STREQUAL "all")
    set(list x86v3:x86-64-v3 x86v4:x86-64-v4)
  endif()
  set(${out} ${list} PARENT_SCOPE)
endfunction()
