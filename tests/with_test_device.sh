#!/bin/sh
# Runs a test program that takes its device as its first argument (the examples, the stress
# programs) on $CUBERT_TEST_DEVICE when that names the program's backend, else on the default.
#   with_test_device.sh BACKEND DEFAULT PROGRAM [ARGS...]  ->  PROGRAM DEVICE [ARGS...]
# A device that CUBERT_TEST_DEVICE names must exist: the program's "skipped" status (77) then
# becomes a failure. A value naming no backend is refused by the conformance suite and the unit
# tests (tests/test_device.h); here it leaves the default in place.
backend=$1
device=$2
program=$3
shift 3
from_env=0
case "${CUBERT_TEST_DEVICE:-}" in
  "$backend" | "$backend":?*) device=$CUBERT_TEST_DEVICE from_env=1 ;;
esac
"$program" "$device" "$@"
rc=$?
if [ "$rc" = 77 ] && [ "$from_env" = 1 ]; then
  echo "FAIL: CUBERT_TEST_DEVICE=\"$device\" is not available to $(basename "$program")" >&2
  exit 1
fi
exit "$rc"
