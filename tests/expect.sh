#!/bin/sh
# Runs a command and checks both its exit status and its output (stdout and stderr):
#   expect.sh pass|fail REGEX COMMAND [ARGS...]
# pass: exit status 0; fail: non-zero and not 77 (a skip is not the failure expected). The
# output must match the extended regular expression REGEX. For tests of error paths, where
# CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit status.
want=$1
regex=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
case "$want" in
  pass) [ "$rc" -eq 0 ] || { echo "expect.sh: exit status $rc, expected 0" >&2; exit 1; } ;;
  fail) if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
          echo "expect.sh: exit status $rc, expected a failure" >&2; exit 1
        fi ;;
  *) echo "expect.sh: first argument must be pass or fail" >&2; exit 2 ;;
esac
printf '%s\n' "$out" | grep -Eq -- "$regex" || { echo "expect.sh: output lacks /$regex/" >&2; exit 1; }
exit 0
