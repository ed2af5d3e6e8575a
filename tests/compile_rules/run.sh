#!/bin/sh
# Compile-failure tests of the kernel language's rules (CTest kernel_rules_*): each file here
# breaks one rule and must fail to build with the rule's message, at the line marked RULE_LINE;
# clean.cube.c must build with no warning under -Wall -Wextra -Wpedantic -Werror.
#   run.sh CASE SOURCE_DIR CC [BUILD_DIR CHECK_TOOL]
# The C cases compile the file as cubert_add_kernels does (its flags); `opencl_only` builds it
# through cubert_add_kernels itself, with the build-time OpenCL check (needs a device: 77 without).
set -eu
case_=$1 src=$2 cc=$3
dir=$src/tests/compile_rules
file=$dir/$case_.cube.c
case $case_ in host_*) file=$dir/$case_.c ;; esac
flags="-std=c11 -O2 -fopenmp-simd -ffp-contract=off -Werror=vla -Wall -Wextra -Wpedantic"
# As cubert_add_kernels: clang's "loop not vectorized" remarks are not errors.
"$cc" --version 2>/dev/null | grep -q clang && flags="$flags -Wno-pass-failed"
line=$(grep -n RULE_LINE "$file" | head -1 | cut -d: -f1)
name=$(basename "$file")
expect_fail() { # message...
  out=$("$cc" $flags -I"$src/lib/include" -c "$file" -o /dev/null 2>&1) && {
    echo "FAIL: $name compiled, but it breaks a rule"; exit 1; }
  echo "$out" | grep -F "$1" >/dev/null || { echo "FAIL: no \"$1\" in:"; echo "$out"; exit 1; }
  echo "$out" | grep -F "$name:$line:" >/dev/null ||
    { echo "FAIL: the error does not name $name:$line:"; echo "$out"; exit 1; }
  echo "ok: $name fails at line $line with \"$1\""
}
case $case_ in
  clean) # this file, and the examples' kernel files as a user's would be
    for f in "$file" "$src"/examples/*.cube.c; do
      "$cc" $flags -Werror -I"$src/lib/include" -c "$f" -o /dev/null
      echo "ok: $(basename "$f") builds without warnings under $flags -Werror"
    done ;;
  sync_in_unit_kernel) expect_fail "SYNC_CUBE() in a UNIT_KERNEL: unit kernels have no barriers" ;;
  sync_in_phase) expect_fail "SYNC_CUBE() inside a PHASE block: in a PHASED_KERNEL barriers go between phases" ;;
  size_t) expect_fail "poisoned" ;;
  printf) expect_fail "poisoned" ;;
  double_without_fp64) expect_fail "poisoned" ;;
  vla) expect_fail "variable length array" ;;
  double_literal)
    if "$cc" --version 2>/dev/null | grep -q clang; then expect_fail "double-promotion"
    else expect_fail "unsuffixed-float-constants"; fi ;;
  scalar_type) expect_fail "the type of a named scalar is one of int8_t .. uint64_t, float or double" ;;
  parameter_order) expect_fail "the parameters come in this order: the (type, name) buffers" ;;
  dynamic_shared_in_unit_kernel)
    expect_fail "(dynamic_shared, ...) in a UNIT_KERNEL: unit kernels have no shared memory" ;;
  host_read_tensor_pointer)
    flags="-std=c11 -Wall -Wextra"
    expect_fail "the second argument must be a cubert_tensor * or a cubert_copy_desc *" ;;
  host_op_copy_desc)
    flags="-std=c11 -Wall -Wextra"
    expect_fail "this argument must be a cubert_tensor *" ;;
  opencl_only)
    build=$4/compile_rules_opencl tool=$5
    rm -rf "$build"
    cmake -S "$dir" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCUBERT_CMAKE_DIR="$src/cmake" \
      -DCUBERT_CUBE_INCLUDE_DIR="$src/lib/include" -DCUBERT_KERNEL_CHECK_TOOL="$tool" \
      -DRULES_FILE="$file" >/dev/null
    if out=$(cmake --build "$build" 2>&1); then
      echo "$out" | grep -F "no OpenCL device" >/dev/null && { echo "SKIP: no OpenCL device"; exit 77; }
      echo "FAIL: the build passed, but $case_.cube.c does not build as OpenCL C"; echo "$out"; exit 1
    fi
    echo "$out" | grep -F "$case_.cube.c:$line:" >/dev/null ||
      { echo "FAIL: the build failed without naming $case_.cube.c:$line:"; echo "$out"; exit 1; }
    echo "ok: the build fails at $case_.cube.c:$line (the OpenCL compiler's log)" ;;
  *) echo "unknown case $case_"; exit 2 ;;
esac
