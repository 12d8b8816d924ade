#!/usr/bin/env bash
# `llmft plot` draws two runs side by side, and a resumed run's two files as one series:
# it exits 0 with nothing on stderr (gnuplot reported no error), and writes a PNG and an
# SVG that are what they say (magic bytes, the panels' titles and the series' labels),
# leaving no scratch directory behind.
# usage: plot.sh LLMFT DIR   (DIR as plot_setup.sh made it)
set -uo pipefail
llmft=$1 dir=$2
cd "$dir" || exit 1
fail() { echo "FAILED: $1"; exit 1; }

check_plot() {  # OUT_DIR LABEL... : the pictures in OUT_DIR name each LABEL
  local out=$1
  shift
  [[ -s $out/metrics.png && -s $out/metrics.svg ]] || fail "$out: metrics.png or metrics.svg missing or empty"
  [[ $(head -c 8 "$out/metrics.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "$out/metrics.png is not a PNG"
  grep -q '<svg' "$out/metrics.svg" || fail "$out/metrics.svg is not an SVG"
  for text in 'training loss' 'validation loss' 'learning rate' 'gradient norm' \
              'throughput (tokens/s processed' 'peak memory per rank' "$@"; do
    grep -qF ">$text" "$out/metrics.svg" || fail "$out/metrics.svg has no text '$text'"
  done
  [[ -z $(find "$out" -name '.plot-*') ]] || fail "a scratch directory was left in $out"
}

rm -rf two resumed
"$llmft" plot a.jsonl b.jsonl --out two > plot.out 2> plot.err || fail "plot exited $?: $(cat plot.err)"
[[ ! -s plot.err ]] || fail "stderr is not empty: $(cat plot.err)"
check_plot two a b
"$llmft" plot a_first.jsonl,a_resumed.jsonl --out resumed 2> plot.err || fail "plot of a resumed run: $(cat plot.err)"
[[ ! -s plot.err ]] || fail "stderr is not empty: $(cat plot.err)"
check_plot resumed a_first+a_resumed
echo "ok: $(wc -c < two/metrics.png) byte PNG, $(wc -c < two/metrics.svg) byte SVG"
