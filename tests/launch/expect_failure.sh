#!/usr/bin/env bash
# Runs a command that must fail cleanly: non-zero exit without a signal (no crash, no
# core dump), an error on stderr matching PATTERN, and none of the --absent paths left.
# With --one-line, stderr must be exactly one line; with --once (a job of several ranks,
# where the launcher adds its own lines), exactly one line holds "error:" and none
# MPI_Abort's report. With --skippable, exit code 77 (the command cannot run here, e.g. no
# GPU) is passed on for ctest's SKIP_RETURN_CODE.
# usage: expect_failure.sh PATTERN [--one-line|--once] [--skippable] [--absent PATH]... -- COMMAND...
set -uo pipefail
pattern=$1
shift
one_line=0
once=0
skippable=0
absent=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  case $1 in
    --one-line) one_line=1 ;;
    --once) once=1 ;;
    --skippable) skippable=1 ;;
    --absent) absent+=("$2"); shift ;;
    *) echo "expect_failure.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
shift
for path in "${absent[@]}"; do rm -rf "$path"; done
stderr_file=$(mktemp)
"$@" > /dev/null 2> "$stderr_file"
code=$?
stderr_text=$(cat "$stderr_file")
rm -f "$stderr_file"
echo "exit code $code; stderr:"
echo "$stderr_text"
fail() { echo "FAILED: $1"; exit 1; }
if [[ $skippable -eq 1 && $code -eq 77 ]]; then exit 77; fi
[[ $code -ne 0 ]] || fail "the command succeeded"
[[ $code -lt 128 ]] || fail "the command died from a signal (exit $code)"
grep -Eq -- "$pattern" <<< "$stderr_text" || fail "stderr does not match /$pattern/"
if [[ $one_line -eq 1 ]]; then
  [[ $(printf '%s\n' "$stderr_text" | wc -l) -eq 1 ]] || fail "the error is not one line"
fi
if [[ $once -eq 1 ]]; then
  [[ $(grep -c "error:" <<< "$stderr_text") -eq 1 ]] || fail "the error is not printed once"
  ! grep -q "MPI_ABORT" <<< "$stderr_text" || fail "MPI_Abort's report was printed"
fi
for path in "${absent[@]}"; do
  [[ ! -e $path ]] || fail "partial output $path was left behind"
done
echo "ok"
