# cubert_add_kernel_forms(<target> PREFIX <prefix> [NO_OPENCL_CHECK] [NO_SANITIZE]
#                         FILES a.cube.c ...)
#
# Adds each kernel file to <target> twice (cmake/CubertKernels.cmake), so that one program holds
# both CPU forms of its CUBE_KERNELs (issue 37):
#   - as cubert_add_kernels builds it by default: the definitions under their own names, the
#     CUBE_KERNELs phased by the build's transform where it runs (CUBERT_KERNEL_PHASES);
#   - in the fiber form (cubert_add_kernels' FIBERS), every definition of the file named
#     <prefix><kernel>.
# A source file has one set of compile properties per target, so the second copy is a generated
# file, <build>/cubert_kernel_forms/<target>/<id>.cube.c, that only includes the original.
# NO_OPENCL_CHECK is passed on to both calls (files no OpenCL compiler is meant to build), and
# so is NO_SANITIZE (no kernel sanitizer copy: a target that never runs validate mode).
# Used by the differential test of the two forms (tests/unit/phase_forms.c) and by
# bench/natural_kernels.c.
function(cubert_add_kernel_forms target)
  cmake_parse_arguments(A "NO_OPENCL_CHECK;NO_SANITIZE" "PREFIX" "FILES" ${ARGN})
  if(NOT A_PREFIX)
    message(FATAL_ERROR "cubert_add_kernel_forms(${target}): PREFIX (the fiber copy's symbol "
                        "prefix, e.g. fib_) is required")
  endif()
  set(check "")
  if(A_NO_OPENCL_CHECK)
    set(check NO_OPENCL_CHECK)
  endif()
  if(A_NO_SANITIZE)
    list(APPEND check NO_SANITIZE)
  endif()
  cubert_add_kernels(${target} FILES ${A_FILES} ${check})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cubert_kernel_forms/${target})
  set(copies "")
  foreach(file ${A_FILES})
    get_filename_component(path ${file} ABSOLUTE)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${path})
    string(MAKE_C_IDENTIFIER ${rel} id)
    set(copy ${dir}/${id}.cube.c)
    # Relative, as the sanitize copies' wrappers (cmake/CubertKernels.cmake): the same text in
    # every clone whose build folder sits at the same place, for the compiler cache.
    file(RELATIVE_PATH inc ${dir} ${path})
    cubert_write_if_changed(${copy}
      "/* generated: ${rel} in the fiber form (cubert_add_kernel_forms) */\n#include \"${inc}\"\n")
    list(APPEND copies ${copy})
  endforeach()
  cubert_add_kernels(${target} FIBERS ${check} PREFIX ${A_PREFIX} FILES ${copies})
endfunction()
