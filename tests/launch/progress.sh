#!/usr/bin/env bash
# Progress lines for every long operation (io/progress.h), as a batch log and a terminal
# receive them. With stderr in a file and --progress-every 0 (a line per new percentage):
# prepare (reading, encoding), the calibration at --auto-plan, a checkpoint written on 2
# ranks (rank 0 alone prints), a checkpoint read at --resume, the weights of a model
# directory (eval --init-from) and of a checkpoint (eval --checkpoint), export (verifying,
# writing) each print plain lines whose percentages rise to 100% and a "done" line, with no
# control characters; with --quiet none of them print; and at a terminal (a pseudo-terminal
# from `script`) the line is rewritten in place with carriage returns and erased at the end.
# usage: progress.sh LLMFT SOURCE_DIR WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
llmft=$1 source_dir=$2 work=$3
shift 3
mpiexec=("$@")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAILED: $1"; exit 1; }
export LLMFT_CALIBRATION_CACHE=$work/calibration.json

# OPERATION LOG: the log has rising percentages of OPERATION ending at 100%, a done line,
# and no control characters.
check_progress() {
  local operation=$1 log=$2
  python3 - "$operation" "$log" <<'PY' || { cat "$log"; fail "progress of '$operation' in $log"; }
import re, sys
operation, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8", newline="").read()
assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", text), "control characters in a log file"
lines = [l for l in text.splitlines() if l.startswith(operation)]
percents = [int(m.group(1)) for l in lines for m in [re.match(re.escape(operation) + r".*?: (\d+)% \(", l)] if m]
assert percents, "no progress line starts with " + repr(operation)
assert percents == sorted(percents) and percents[-1] == 100, percents
assert any(re.match(re.escape(operation) + r".*: done, .* in [0-9hms]+$", l) for l in lines), "no done line"
PY
}

corpus=(--input "$source_dir/examples/data/train.txt" --output train.tok)
"$llmft" prepare "${corpus[@]}" --progress-every 0 > prepare.out 2> prepare.err
check_progress "prepare: reading" prepare.err
check_progress "prepare: encoding" prepare.err

run=(--model gpt2-tiny --data train.tok --seq-len 32 --micro-batch 2 --threads 1 --log-every 1)
"${mpiexec[@]}" -n 2 "$llmft" "${run[@]}" --steps 2 --auto-plan --checkpoint-dir ckpt \
  --checkpoint-every 2 --save-dir model --progress-every 0 > train.out 2> train.err ||
  { cat train.out train.err; fail "training exited non-zero"; }
check_progress "calibration" train.err
check_progress "checkpoint: writing step 2" train.err
[[ $(grep -c "checkpoint: writing step 2.*: 100% " train.err) == 1 ]] ||
  { cat train.err; fail "not rank 0 alone printed the checkpoint's progress"; }

"${mpiexec[@]}" -n 2 "$llmft" "${run[@]}" --steps 3 --auto-plan --checkpoint-dir ckpt --resume \
  --progress-every 0 > resume.out 2> resume.err || { cat resume.out resume.err; fail "the resumed run exited non-zero"; }
check_progress "checkpoint: reading" resume.err

eval_run=(--data train.tok --seq-len 32 --threads 1 --eval-windows 2 --progress-every 0)
"$llmft" eval --init-from model "${eval_run[@]}" > eval_model.out 2> eval_model.err ||
  { cat eval_model.err; fail "eval --init-from exited non-zero"; }
check_progress "loading weights from" eval_model.err
"$llmft" eval --checkpoint ckpt "${eval_run[@]}" > eval_ckpt.out 2> eval_ckpt.err ||
  { cat eval_ckpt.err; fail "eval --checkpoint exited non-zero"; }
check_progress "checkpoint: reading the weights of" eval_ckpt.err

"$llmft" export --checkpoint ckpt --save-dir exported --progress-every 0 > export.out \
  2> export.err || { cat export.err; fail "export exited non-zero"; }
check_progress "export: verifying" export.err
check_progress "export: writing" export.err

# --quiet: the same operations, no progress line.
"$llmft" prepare "${corpus[@]/train.tok/quiet.tok}" --progress-every 0 --quiet > /dev/null \
  2> quiet.err
"$llmft" "${run[@]}" --steps 2 --auto-plan --checkpoint-dir quiet_ckpt --checkpoint-every 2 \
  --progress-every 0 --quiet > /dev/null 2>> quiet.err
"$llmft" export --checkpoint quiet_ckpt --save-dir quiet_exported --progress-every 0 --quiet \
  > /dev/null 2>> quiet.err
if grep -E ": [0-9]+% \(|: done, " quiet.err; then fail "--quiet printed progress"; fi

# A terminal: one line rewritten in place, erased before the command's own summary.
script -qec "'$llmft' export --checkpoint ckpt --save-dir tty_exported" /dev/null > tty.out
python3 - <<'PY' || { cat -A tty.out | head -20; fail "the terminal's progress line"; }
text = open("tty.out", encoding="utf-8", newline="").read()
assert "\rexport: verifying" in text and "\rexport: writing" in text, "no line rewritten in place"
before, summary = text.split("exported ckpt", 1)
# What the terminal shows before the summary ends with the line blanked and the cursor home.
assert before.rstrip("\r").endswith(" ") and before.endswith("\r"), repr(before[-40:])
assert "done," not in text, "a terminal gets no done line"
PY
echo "progress lines: every operation, --quiet and the terminal as described"
