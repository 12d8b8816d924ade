#!/usr/bin/env bash
# Runs COMMAND and passes its exit code on, but fails when COMMAND changed any PATH: its
# kind of node, inode, device numbers or size, or a regular file's bytes.
# usage: unchanged_by.sh PATH... -- COMMAND...
set -uo pipefail
paths=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  paths+=("$1")
  shift
done
shift
snapshot() {
  for path in "${paths[@]}"; do
    stat -c '%n: %F, inode %i, device %t:%T, %s bytes' -- "$path"
    if [[ -f $path && ! -L $path ]]; then cksum < "$path"; fi
  done
}
before=$(snapshot 2>&1)
"$@"
code=$?
after=$(snapshot 2>&1)
if [[ $before != "$after" ]]; then
  echo "FAILED: the command changed what it must keep:"
  diff <(echo "$before") <(echo "$after")
  exit 1
fi
exit $code
