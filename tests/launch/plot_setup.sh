#!/usr/bin/env bash
# Inputs of the `llmft plot` tests (tests/launch/plot_tests.cmake), in DIR: the metrics of
# two tiny training runs (a.jsonl, b.jsonl at another --lr, validation every 4 steps), a.jsonl
# cut in two as a resumed run's files, bad metrics files, and two stand-ins for PATH: one
# where gnuplot fails, one where there is no gnuplot (only Open MPI's orted, which a
# singleton llmft starts).
# usage: plot_setup.sh LLMFT TEXT_FILE DIR
set -euo pipefail
llmft=$1 text=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
"$llmft" prepare --input "$text" --output val.tok > /dev/null
train=(--data val.tok --val-data val.tok --eval-every 4 --eval-windows 4 --steps 12 --seq-len 32
       --micro-batch 2 --threads 1)
"$llmft" "${train[@]}" --metrics a.jsonl > a.log
"$llmft" "${train[@]}" --lr 1e-3 --metrics b.jsonl > b.log
head -n 8 a.jsonl > a_first.jsonl  # the run record and steps 1-7
tail -n +7 a.jsonl > a_resumed.jsonl  # steps 6 and 7 logged again, as after a resume
printf '{"step": 1, "loss": 2.5}\nnot json\n' > bad.jsonl
printf '{"step": 1, "loss": "low"}\n' > string_loss.jsonl
printf '{"run": "a header and no step"}\n' > no_steps.jsonl
mkdir failing_gnuplot no_gnuplot
printf '#!/bin/sh\necho "line 3: unknown or ambiguous terminal type" >&2\nexit 1\n' \
  > failing_gnuplot/gnuplot
chmod +x failing_gnuplot/gnuplot
ln -s "$(command -v orted)" no_gnuplot/orted
