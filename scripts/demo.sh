#!/usr/bin/env bash
# The walking skeleton end to end: install what is missing, build, tokenize the bundled
# corpus (examples/data), fine-tune the default tiny GPT-2 for a few hundred steps on
# one rank, show the validation loss fall below the uniform guess, and sample text.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LLMFT_BUILD_DIR:-$root/build}
run=${LLMFT_DEMO_DIR:-$root/demo_run}
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
mkdir -p "$run"
llmft=$build/llmft
mpirun_flags=(-np 1)
[[ $(id -u) -ne 0 ]] || mpirun_flags+=(--allow-run-as-root)

"$llmft" prepare --input "$root/examples/data/train.txt" --output "$run/train.tok"
"$llmft" prepare --input "$root/examples/data/val.txt" --output "$run/val.tok"
mpirun "${mpirun_flags[@]}" "$llmft" --config "$root/examples/demo.ini" \
  --data "$run/train.tok" --val-data "$run/val.tok" \
  --metrics "$run/metrics.jsonl" --save-dir "$run/model"
echo
echo "--- a sample from the trained model ---"
"$llmft" generate --checkpoint "$run/model" --prompt "And God said" --max-new-tokens 240 \
  --temperature 0.8 --top-k 40
