#!/usr/bin/env bash
# Throughput by its definition (parallel/flops.h) on prompt/response data, which `llmft
# prepare` packs into windows with padding: in every metrics line the processed tokens
# are dp x micro-batch x grad-accum x seq-len, the loss targets fewer, tok/s the processed
# tokens over the step's seconds, FLOPs per token the hand count for llama-tiny, MFU tok/s
# x FLOPs per token over the ranks' peak (the calibrated GEMM rate the startup line
# prints), and the ETA the mean of the steps after the first times the steps left; the
# step lines print the same figures. Without a calibration, no MFU and the reason.
# usage: throughput.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAILED: $1"; exit 1; }

"$llmft" prepare --input "$source_dir/examples/data/instruct.jsonl" --output "$work/sft.tok" \
  > /dev/null
# A calibration of this test's own (about a second), so that the CPU has a GEMM rate.
export LLMFT_CALIBRATION_CACHE=$work/calibration.json
ranks=2 micro=2 accum=2 seq=64 steps=5
run=(--model llama-tiny --data "$work/sft.tok" --seq-len $seq --micro-batch $micro
  --grad-accum $accum --threads 1)
"${mpiexec[@]}" -n $ranks "$llmft" "${run[@]}" --dp $ranks --auto-plan --plan-only \
  > "$work/plan.log" 2>&1 || { cat "$work/plan.log"; fail "the calibration run exited non-zero"; }
"${mpiexec[@]}" -n $ranks "$llmft" "${run[@]}" --steps $steps --log-every 1 \
  --metrics "$work/metrics.jsonl" > "$work/train.log" 2>&1 ||
  { cat "$work/train.log"; fail "the training run exited non-zero"; }
cat "$work/train.log"

peak=$(sed -nE 's/^llmft: MFU against the calibrated GEMM rate, ([0-9.e+]+) FLOP\/s per rank$/\1/p' \
  "$work/train.log")
[[ -n $peak ]] || fail "no startup line naming the calibrated GEMM rate"
# llama-tiny: 4 layers, hidden 128, 2 of 4 heads for keys and values (64 wide), MLP 352,
# vocab 257. 6 x (4 x (128 x (128 + 2 x 64) + 128^2 + 3 x 352 x 128) + 257 x 128) + 12 x 4
# x 128 x 64.
flops_per_token=5014272

# field LINE NAME: a number of a metrics line.
field() { echo "$1" | sed -nE "s/.*\"$2\":([-0-9.e+]+).*/\1/p"; }
# close A B TOLERANCE: |A - B| <= TOLERANCE x |B|.
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
  m = b < 0 ? -b : b; exit !(d <= t * m) }'; }

timed=0 count=0
while IFS= read -r line; do
  step=$(field "$line" step)
  processed=$(field "$line" processed_tokens) targets=$(field "$line" target_tokens)
  seconds=$(field "$line" step_seconds) tok_s=$(field "$line" tokens_per_s)
  mfu=$(field "$line" mfu) eta=$(field "$line" eta_seconds)
  [[ $processed == $((ranks * micro * accum * seq)) ]] ||
    fail "step $step: processed tokens $processed, not dp x micro-batch x grad-accum x seq-len"
  ((targets > 0 && targets < processed)) || fail "step $step: $targets targets of $processed"
  [[ $(field "$line" flops_per_token) == "$flops_per_token" ]] ||
    fail "step $step: FLOPs per token $(field "$line" flops_per_token), not $flops_per_token"
  # The metrics carry 17 significant digits: only the division's rounding differs.
  close "$tok_s" "$(awk -v p="$processed" -v s="$seconds" 'BEGIN { printf "%.17g", p / s }')" 1e-12 ||
    fail "step $step: $tok_s tok/s, not $processed tokens / $seconds s"
  # The startup line prints the peak to 4 significant digits: 5e-4 of it is rounding.
  close "$mfu" "$(awk -v r="$tok_s" -v f="$flops_per_token" -v n="$ranks" -v p="$peak" \
    'BEGIN { printf "%.17g", r * f / (n * p) }')" 1e-3 ||
    fail "step $step: MFU $mfu, not $tok_s tok/s x $flops_per_token FLOPs / ($ranks x $peak)"
  # The step line prints tok/s to the unit and MFU to 0.1%: half of that is rounding.
  printed=$(grep -E "^step +$step/" "$work/train.log")
  close "$(echo "$printed" | sed -nE 's/.*\| ([0-9]+) tok\/s.*/\1/p')" "$tok_s" \
    "$(awk -v r="$tok_s" 'BEGIN { print 0.5 / r }')" || fail "step $step: line says $printed"
  close "$(echo "$printed" | sed -nE 's/.*MFU ([0-9.]+)% of the calibrated GEMM rate.*/\1/p')" \
    "$(awk -v m="$mfu" 'BEGIN { print 100 * m }')" "$(awk -v m="$mfu" 'BEGIN { print 0.0005 / m }')" ||
    fail "step $step: line says $printed"
  # ETA: the mean of this run's steps after the first, times the steps left.
  if ((step == 1)); then
    [[ -z $eta ]] || fail "step 1 has an ETA before any step was timed"
  else
    timed=$(awk -v a="$timed" -v s="$seconds" 'BEGIN { printf "%.17g", a + s }')
    count=$((count + 1))
    close "$eta" "$(awk -v a="$timed" -v n="$count" -v l=$((steps - step)) \
      'BEGIN { printf "%.17g", a / n * l }')" 1e-9 || fail "step $step: ETA $eta s"
  fi
done < <(grep '"step"' "$work/metrics.jsonl")  # the step lines, not the run record
[[ $count == $((steps - 1)) ]] || fail "$count timed steps, expected $((steps - 1))"
grep -E "^throughput \| mean of steps 2-$steps: [0-9]+ tok/s .* MFU [0-9.]+% of the calibrated GEMM rate" \
  "$work/train.log" > /dev/null || fail "no summary of steps 2-$steps"

# Without a calibration the CPU has no peak: the startup line says why, no MFU anywhere.
LLMFT_CALIBRATION_CACHE=$work/none.json "$llmft" --model llama-tiny --data "$work/sft.tok" \
  --seq-len $seq --threads 1 --steps 1 --metrics "$work/none.jsonl" > "$work/none.log" 2>&1 ||
  { cat "$work/none.log"; fail "the run without a calibration exited non-zero"; }
grep -E "^llmft: no MFU: no calibrated GEMM rate for 1 ranks of 1 threads" "$work/none.log" ||
  fail "no startup line saying why there is no MFU"
! grep -q "MFU [0-9]" "$work/none.log" || fail "an MFU without a peak"
! grep -q '"mfu"' "$work/none.jsonl" || fail "an MFU in the metrics without a peak"
echo "ok"
