#!/bin/sh
# Runs a test program on Oclgrind's simulated OpenCL device with its checks on, and fails on
# any diagnostic Oclgrind reports (data races, uninitialised values, out-of-bounds accesses,
# barrier divergence, OpenCL API misuse), even when the program itself passed.
#   oclgrind.sh VENDORS_DIR PROGRAM [ARGS...]
# VENDORS_DIR holds the build's oclgrind.icd: OCL_ICD_VENDORS points the ICD loader at it
# alone, so Oclgrind is device opencl:0 and the machine's /etc/OpenCL/vendors is not touched.
# Slow (Oclgrind interprets every work-item): it runs only when CUBERT_OCLGRIND_TESTS=1
# (`make test-oclgrind`), and otherwise reports itself skipped (77).
vendors=$1
shift
if [ "${CUBERT_OCLGRIND_TESTS:-0}" != 1 ]; then
  echo "skipped: set CUBERT_OCLGRIND_TESTS=1 (make test-oclgrind) to run the suite on Oclgrind"
  exit 77
fi
log=$(mktemp "${TMPDIR:-/tmp}/cubert-oclgrind.XXXXXX")
trap 'rm -f "$log"' EXIT
export OCL_ICD_VENDORS="$vendors" CUBERT_TEST_DEVICE=opencl:0 OCLGRIND_LOG="$log"
export OCLGRIND_DATA_RACES=1 OCLGRIND_UNINITIALIZED=1 OCLGRIND_CHECK_API=1
# Oclgrind 21.10's uninitialised-value checker stops at LLVM's `freeze` instruction ("OCLGRIND
# FATAL ERROR ... Unsupported instruction: freeze"), which the optimiser emits for a division
# and remainder of one value (copy_strided, the reductions); unoptimised code has none. The
# OpenCL disk cache keys on this variable, so these programs never mix with optimised ones.
export OCLGRIND_BUILD_OPTIONS=-cl-opt-disable
# Every buffer its own cl_mem, so Oclgrind sees where each ends (docs/environment.md).
export CUBERT_POOLS_EXCLUSIVE=1
"$@"
rc=$?
if [ -s "$log" ]; then
  echo "FAIL: Oclgrind reported $(grep -c . "$log") diagnostic lines:" >&2
  cat "$log" >&2
  exit 1
fi
exit "$rc"
