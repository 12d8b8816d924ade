#!/usr/bin/env bash
# Fine-tune on conversations, end to end, on the bundled chat example: prepare the JSONL
# conversations with the model's chat template, train a tiny Llama from scratch on 2
# ranks (samples packed into windows), score the saved model with `llmft eval`, and ask it
# a question with `llmft generate --chat`. Build first (scripts/build.sh or scripts/demo.sh).
# usage: examples/chat/run.sh [OUT_DIR]   (default: chat_run beside the build)
# Environment: LLMFT_BUILD_DIR (default build/), LLMFT_MPIEXEC (default mpiexec) and
# LLMFT_MPIEXEC_FLAGS (extra words for it, e.g. --oversubscribe), LLMFT_THREADS (per rank, 1).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
example=$root/examples/chat
llmft=${LLMFT_BUILD_DIR:-$root/build}/llmft
out=${1:-$root/chat_run}
read -r -a mpiexec <<< "${LLMFT_MPIEXEC:-mpiexec} ${LLMFT_MPIEXEC_FLAGS:-}"
[[ $(id -u) -ne 0 ]] || mpiexec+=(--allow-run-as-root)
[[ -x $llmft ]] || { echo "error: $llmft is not built; run scripts/build.sh first" >&2; exit 1; }
mkdir -p "$out"

echo "--- prepare: conversations -> token files (the chat template of examples/chat/model) ---"
"$llmft" prepare --input "$example/train.jsonl" --tokenizer "$example/model" --output "$out/train.tok" \
  --seq-len 128 | tee "$out/prepare.log"
"$llmft" prepare --input "$example/val.jsonl" --tokenizer "$example/model" --output "$out/val.tok"

echo "--- train: 2 ranks, 12 epochs ---"
rm -rf "$out/model"
"${mpiexec[@]}" -n 2 "$llmft" --model "$example/model" --data "$out/train.tok" \
  --val-data "$out/val.tok" --seq-len 128 --micro-batch 4 --epochs 12 --lr 2e-3 --warmup 10 \
  --eval-every 100 --log-every 50 --threads "${LLMFT_THREADS:-1}" --save-dir "$out/model" |
  tee "$out/train.log"

echo "--- eval: the saved model on the validation conversations ---"
"$llmft" eval --model "$out/model" --data "$out/val.tok" --seq-len 128 --micro-batch 4 --json | tee "$out/eval.json"

echo "--- generate --chat ---"
question="Which book comes after Exodus?"
echo "user: $question"
printf 'assistant: '
"$llmft" generate --checkpoint "$out/model" --chat "$question" --temperature 0 --max-new-tokens 40 |
  tee "$out/reply.txt"
