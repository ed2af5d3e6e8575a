# cubert_add_mpi_test(<name> RANKS <n> PROGRAM <target> [ARGS args...] [TIMEOUT s]
#                     [LABELS labels...] [ENV VAR=value...] [EXPECT pass|fail REGEX])
# An MPI test: a plain C program (Criterion cannot host MPI ranks) run as
#   mpiexec -n <n> <the launcher flags below> <program> <args>
# EXPECT runs it through tests/expect.sh (exit status and a regular expression on the output).
#
# The launcher flags, in one place (what works in this project's containers and CI):
#   --oversubscribe           more ranks than cores (2 cores here, tests use 4 ranks)
#   --bind-to none            no core binding: oversubscribed ranks bound to one core each
#                             would share it and crawl
#   --mca btl self,vader      shared memory only (no TCP interface probing; one host)
# and the environment OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 on the test
# only (containers run as root; Open MPI refuses root without it). With another MPI than
# Open MPI (MPIEXEC_EXECUTABLE not Open MPI's) no extra flags are passed.
# Every MPI test holds the RESOURCE_LOCK `mpi` (one job of several ranks at a time) and has a
# TIMEOUT (default 120 s), so that a hang fails instead of blocking ctest.
set(CUBERT_MPIEXEC_FLAGS "" CACHE STRING "extra flags for mpiexec in the MPI tests")
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _cubert_mpiexec_version
                ERROR_QUIET)
if(_cubert_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(CUBERT_MPIEXEC_DEFAULT_FLAGS --oversubscribe --bind-to none --mca btl self,vader)
  set(CUBERT_MPIEXEC_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
else()
  set(CUBERT_MPIEXEC_DEFAULT_FLAGS)
  set(CUBERT_MPIEXEC_ENV)
endif()

# The launcher command for `ranks` ranks, into <out> (a list), for tests and benchmarks.
function(cubert_mpiexec_command out ranks)
  set(${out} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${CUBERT_MPIEXEC_DEFAULT_FLAGS}
      ${CUBERT_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS} PARENT_SCOPE)
endfunction()

function(cubert_add_mpi_test name)
  cmake_parse_arguments(A "" "RANKS;PROGRAM;TIMEOUT" "ARGS;LABELS;ENV;EXPECT" ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  cubert_mpiexec_command(launcher ${A_RANKS})
  set(cmd ${launcher} $<TARGET_FILE:${A_PROGRAM}> ${MPIEXEC_POSTFLAGS} ${A_ARGS})
  if(A_EXPECT)
    list(GET A_EXPECT 0 want)
    list(GET A_EXPECT 1 regex)
    set(cmd sh ${PROJECT_SOURCE_DIR}/tests/expect.sh ${want} ${regex} ${cmd})
  endif()
  add_test(NAME ${name} COMMAND ${cmd})
  # Under AddressSanitizer the ranks keep its memory checks but not LeakSanitizer: Open MPI's
  # components are dlopen'ed and closed again at MPI_Finalize, so their leaks come out with
  # unknown modules in every frame, which no suppression can name.
  set(env ${CUBERT_MPIEXEC_ENV} ${A_ENV})
  if(CUBERT_SANITIZE MATCHES "address")
    list(APPEND env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0")
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${A_TIMEOUT} LABELS "mpi;${A_LABELS}"
                       ENVIRONMENT "${env}" RESOURCE_LOCK mpi
                       PROCESSORS 2 SKIP_RETURN_CODE 77)
endfunction()
