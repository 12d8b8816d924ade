#!/usr/bin/env bash
# A checkpoint verifies what it restores end to end (issue: four random metadata flips of
# 350 loaded changed weights with exit 0, and a rewritten attribute trained "step -4/10"):
# damage that HDF5's Fletcher32 checksums do not cover is refused before training, with one
# line naming the file and what is wrong, both on a resume and on `llmft export`:
#  - a value rewritten through h5py (valid HDF5, checksum recomputed): the digest differs;
#  - a dataset's stored float type flipped to big-endian: HDF5 would convert the bytes;
#  - the step attribute set to -5, and the data position to another valid count: the
#    attributes' ranges and digest;
#  - the model config attribute cut short: named as invalid JSON in that attribute.
# Needs h5py (the Python environment); reports itself skipped (77) without it.
# usage: checkpoint_damage.sh LLMFT SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
llmft=$1 source_dir=$2 work=$3 python=$4
expect=$source_dir/tests/launch/expect_failure.sh
damage=$source_dir/tests/launch/damage_checkpoint.py
if [[ $python == none ]]; then
  echo "no Python environment with h5py: skipped"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
"$llmft" prepare --input "$source_dir/examples/data/val.txt" --output "$work/text.tok" > /dev/null
run=("$llmft" --model llama-tiny --data "$work/text.tok" --seq-len 32 --micro-batch 2 --threads 1
     --log-every 100)
"${run[@]}" --steps 4 --checkpoint-dir "$work/good" > "$work/good.log"
good=$work/good/step_00000004.h5
failed=0

# refused NAME PATTERN MODE ARGS...: a copy damaged by MODE is refused by a resume and by export.
refused() {
  local name=$1 pattern=$2
  shift 2
  echo "== $name"
  mkdir -p "$work/$name"
  cp "$good" "$work/$name/step_00000004.h5"
  "$python" "$damage" "$work/$name/step_00000004.h5" "$@"
  bash "$expect" "$name/step_00000004.h5.*$pattern" --one-line -- \
    "${run[@]}" --steps 6 --resume="$work/$name/step_00000004.h5" || failed=1
  bash "$expect" "$name/step_00000004.h5.*$pattern" --one-line --absent "$work/$name.export" -- \
    "$llmft" export --checkpoint "$work/$name/step_00000004.h5" --save-dir "$work/$name.export" ||
    failed=1
}

refused values "values of dataset '.*' that differ from those written" values
refused byte_order "stores dataset '.*' as another number type" byte-order
refused negative_step "'step' attribute where a whole number in \\[0, " attribute step -5
refused other_position "attributes differ from those written" attribute windows_consumed 12
refused cut_config "'model_config' attribute is not valid JSON" attribute model_config '{"vocab_size": 2'
exit $failed
