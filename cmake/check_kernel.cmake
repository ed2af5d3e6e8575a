# Invoked by cubert_add_kernels with CUBERT_CHECK_KERNELS: builds one flattened kernel file with
# the first OpenCL device (cubert-kernel-check --quick) and fails the build with the OpenCL
# compiler's log, which names the kernel file and line (#line directives), when it does not
# build. No OpenCL device (exit 77): the check is skipped with a note; the stamp is written so
# that it does not run on every build.   -DTOOL -DCL -DSTAMP
execute_process(COMMAND ${TOOL} --quick ${CL} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(rc EQUAL 77)
  message(STATUS "cubert: no OpenCL device, ${CL} not built with an OpenCL compiler")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "the kernel file does not build as OpenCL C (CUBERT_CHECK_KERNELS=OFF "
                      "skips this check):\n${err}${out}")
endif()
file(WRITE ${STAMP} "${rc}\n")
