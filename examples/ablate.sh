#!/usr/bin/env bash
# Ablation of parallel layouts: does the planner pick the fastest layout, and how
# close are its memory and time predictions to what training measures?
#
#   examples/ablate.sh [options] -- <workload options for llmft>
#
# On the ranks it launches, it first runs `llmft --auto-plan --plan-only` (which
# calibrates this machine and writes the planner's JSON), then trains every layout the
# planner found feasible ("fits": true), or the ones given with --layouts, for a few
# steps each, and compares the measured worst-rank peak memory, median step time and
# final loss with the predictions. The planner's choice is always among the runs.
#
# Options:
#   --ranks W        ranks to launch (default 2)
#   --steps K        optimizer steps per layout (default 6; step 1 is warm-up and not timed)
#   --out DIR        where results go (default ablation/)
#   --layouts LIST   "tp,zero,micro_batch,grad_accum,ckpt[,offload[,sp]];..." (ckpt:
#                    checkpointed blocks, a count, or off/on for none/all; offload: on or
#                    off, the optimizer in host memory; sp: on or off, sequence
#                    parallelism; both default off) instead of
#                    every feasible layout; the planner's choice is added when missing
#   --mpirun CMD     launcher prefix, split on spaces; it must start W ranks (default
#                    "mpirun -n W --oversubscribe --bind-to none", plus
#                    --allow-run-as-root as root); e.g. "srun --mpi=pmix" under SLURM
#   --llmft PATH     the binary (default build/llmft in the repository, or
#                    $LLMFT_BUILD_DIR/llmft)
#   --threads N      CPU threads per rank (default: llmft's, each rank's share of the cores)
#
# Workload options are the job's: --model, --data, --optimizer, --dtype, --seq-len,
# --global-batch, --clip-grad, --device-memory, --memory-margin, --device, ...
# Layout options among them (--tp, --zero, --micro-batch, --activation-checkpointing,
# --offload-optimizer, --sequence-parallel) constrain the plan. The script sets --steps, --metrics, --log-every and --threads.
#
# Writes to DIR: plan.json and plan.log (the planner), runs/LAYOUT.{jsonl,log} (each
# run's metrics and output), ablation.csv, ablation.txt (table and summary, with the
# calibration the plan used) and
# memory.png (predicted beside measured memory per layout, stacked by category; in pages
# of 20 layouts, memory_1.png, ..., when there are more; skipped with a note when gnuplot
# is missing).
#
# Exit status: 0 when every run succeeded and the planner's choice measured within 10%
# of the fastest layout; 1 when the plan or a run failed or a run's metrics are
# unreadable; 2 for bad options; 3 when every run succeeded but the planner's choice
# measured more than 10% slower than the fastest (a finding about the planner, not a
# crash).
#
# Example (CPU, two ranks):
#   build/llmft prepare --input examples/data/train.txt --output train.tok
#   examples/ablate.sh --ranks 2 --steps 4 --threads 1 -- --data train.tok \
#       --model gpt2-tiny --seq-len 64 --global-batch 8 --optimizer adamw
set -euo pipefail
# mpirun sends a signalled job's ranks SIGTERM, then SIGKILL this many s later: time to save.
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-30}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ranks=2
steps=6
out=ablation
layouts_spec=""
mpirun_cmd=""
llmft="${LLMFT_BUILD_DIR:-$root/build}/llmft"
threads=""
workload=()

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

die() {
  echo "ablate: $*" >&2
  exit 2
}

parse_options() {
  while [[ $# -gt 0 ]]; do
    case $1 in
      --ranks) ranks=${2:?--ranks needs a value}; shift 2 ;;
      --steps) steps=${2:?--steps needs a value}; shift 2 ;;
      --out) out=${2:?--out needs a value}; shift 2 ;;
      --layouts) layouts_spec=${2:?--layouts needs a value}; shift 2 ;;
      --mpirun) mpirun_cmd=${2:?--mpirun needs a value}; shift 2 ;;
      --llmft) llmft=${2:?--llmft needs a value}; shift 2 ;;
      --threads) threads=${2:?--threads needs a value}; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      --) shift; workload=("$@"); return ;;
      *) die "unknown option '$1' (workload options for llmft go after --; see --help)" ;;
    esac
  done
}

check_options() {
  [[ $ranks =~ ^[1-9][0-9]*$ ]] || die "--ranks must be a positive integer (got '$ranks')"
  [[ $steps =~ ^[1-9][0-9]*$ ]] || die "--steps must be a positive integer (got '$steps')"
  [[ -z $threads || $threads =~ ^[0-9]+$ ]] || die "--threads must be an integer (got '$threads')"
  [[ -x $llmft ]] || die "no llmft binary at $llmft (build it, or give --llmft PATH)"
  [[ ${#workload[@]} -gt 0 ]] || die "no workload options: give them after --, e.g. -- --data train.tok --model gpt2-tiny"
  local item items tp
  IFS=';' read -r -a items <<<"${layouts_spec// /}"
  for item in "${items[@]}"; do
    [[ -n $item ]] || continue
    [[ $item =~ ^[1-9][0-9]*,[0-3],[1-9][0-9]*,[1-9][0-9]*,([0-9]+|on|off)(,(on|off)(,(on|off))?)?$ ]] ||
      die "layout '$item' is not tp,zero,micro_batch,grad_accum,ckpt[,offload[,sp]] (integers; zero 0-3; ckpt a count, on or off; offload and sp on or off)"
    tp=${item%%,*}
    [[ $((ranks % tp)) -eq 0 ]] || die "layout '$item': tp $tp does not divide --ranks $ranks"
  done
  local arg
  for arg in "${workload[@]}"; do
    case ${arg%%=*} in
      --steps|--metrics|--log-every|--threads|--auto-plan|--plan-only|--plan-json|--save-dir)
        die "the script sets ${arg%%=*} itself: leave it out of the workload options" ;;
    esac
  done
}

# The launcher as an array: --mpirun split on spaces, or mpirun for --ranks ranks.
launcher=()
make_launcher() {
  if [[ -n $mpirun_cmd ]]; then
    read -r -a launcher <<<"$mpirun_cmd"
  else
    launcher=(mpirun -n "$ranks" --oversubscribe --bind-to none)
    [[ $(id -u) -ne 0 ]] || launcher+=(--allow-run-as-root)
  fi
  thread_args=()
  [[ -z $threads ]] || thread_args=(--threads "$threads")
}

# The workload without the options a layout sets, for the training runs. Values may be
# given as "--opt value" or "--opt=value"; --activation-checkpointing,
# --offload-optimizer and --sequence-parallel take their values only as "=value".
run_workload=()
strip_layout_options() {
  run_workload=()
  local i=0 arg name
  while [[ $i -lt ${#workload[@]} ]]; do
    arg=${workload[$i]}
    name=${arg%%=*}
    case $name in
      --tp|--dp|--zero|--micro-batch|--grad-accum|--global-batch)
        [[ $arg == *=* ]] || i=$((i + 1)) ;;  # drop its value too
      --activation-checkpointing|--offload-optimizer|--sequence-parallel|--no-calibrate) ;;
      *) run_workload+=("$arg") ;;
    esac
    i=$((i + 1))
  done
}

run_plan() {
  echo "ablate: planning on $ranks ranks (log: $out/plan.log)"
  rm -f "$out/plan.json"
  if ! "${launcher[@]}" "$llmft" --auto-plan --plan-only --plan-json "$out/plan.json" \
      "${thread_args[@]}" "${workload[@]}" </dev/null >"$out/plan.log" 2>&1; then
    tail -n 20 "$out/plan.log" >&2
    echo "ablate: the plan failed; see $out/plan.log" >&2
    exit 1
  fi
  [[ -s $out/plan.json ]] || { echo "ablate: the plan wrote no $out/plan.json" >&2; exit 1; }
  # The calibration the plan used: its GEMM rate, when and under what load it was measured.
  sed -n 's/^calibration: /ablate: calibration: /p' "$out/plan.log"
}

# Prints the layouts to run, one "tp zero micro_batch grad_accum ckpt offload sp" per line: the
# --layouts list or the plan's feasible candidates, then the plan's choice if missing.
list_layouts() {
  python3 - "$out/plan.json" "$layouts_spec" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
spec = sys.argv[2]

def key(c):
    return (c["tp"], c["zero"], c["micro_batch"], c["grad_accum"], c["checkpointed_blocks"],
            int(c.get("offload_optimizer", False)), int(c.get("sequence_parallel", False)))

# The model's blocks: the count of a candidate that checkpoints all of them.
blocks = max([c.get("checkpointed_blocks", 0) for c in plan["candidates"]] + [1])

if spec:  # checked by check_options
    layouts = []
    for item in filter(None, spec.replace(" ", "").split(";")):
        fields = item.split(",")
        ckpt = {"on": blocks, "off": 0}.get(fields[4]) if fields[4] in ("on", "off") else int(fields[4])
        offload = int(len(fields) > 5 and fields[5] == "on")
        sp = int(len(fields) > 6 and fields[6] == "on")
        layouts.append(tuple(int(f) for f in fields[:4]) + (min(ckpt, blocks), offload, sp))
else:
    layouts = [key(c) for c in plan["candidates"] if c.get("fits")]
if plan.get("chosen") and key(plan["chosen"]) not in layouts:
    layouts.append(key(plan["chosen"]))
seen = set()
for layout in layouts:
    if layout not in seen:
        seen.add(layout)
        print(*layout)
PY
}

layout_name() {  # tp zero mb accum ckpt offload sp
  local name="dp$((ranks / $1))-tp$1-z$2-mb$3x$4"
  [[ $7 -eq 0 ]] || name+="-sp"
  [[ $5 -eq 0 ]] || name+="-ckpt$5"
  [[ $6 -eq 0 ]] || name+="-offload"
  echo "$name"
}

# Trains one layout for --steps steps; appends "name tp zero mb accum ckpt offload sp rc"
# to the manifest the report reads. Returns the run's exit status.
run_layout() {
  local tp=$1 zero=$2 mb=$3 accum=$4 ckpt=$5 offload=$6 sp=$7
  local name rc=0
  name=$(layout_name "$@")
  local ckpt_args=(--offload-optimizer="$( ((offload)) && echo on || echo off)"
                   --sequence-parallel="$( ((sp)) && echo on || echo off)")
  [[ $ckpt -eq 0 ]] || ckpt_args+=("--activation-checkpointing=$ckpt")
  rm -f "$out/runs/$name.jsonl"
  printf 'ablate: %-28s ' "$name"
  "${launcher[@]}" "$llmft" "${run_workload[@]}" --tp "$tp" --zero "$zero" \
    --micro-batch "$mb" --grad-accum "$accum" "${ckpt_args[@]}" --steps "$steps" \
    --log-every 1 --metrics "$out/runs/$name.jsonl" "${thread_args[@]}" \
    </dev/null >"$out/runs/$name.log" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "ok"
  else
    echo "FAILED (exit $rc; see $out/runs/$name.log)"
    grep -m 1 -i 'error' "$out/runs/$name.log" | sed 's/^/ablate:   /' || true
  fi
  echo "$name $tp $zero $mb $accum $ckpt $offload $sp $rc" >>"$out/runs/manifest.txt"
  return "$rc"
}

# Reads plan.json, the manifest and each run's metrics; writes ablation.csv,
# ablation.txt and memory.dat (the chart's data). Exits 1 when a run's metrics are
# missing or no run can be compared with the choice, 3 when the choice is not within 10%
# of the fastest.
write_report() {
  python3 - "$out" "$ranks" "$steps" <<'PY'
import csv, json, os, statistics, sys
out, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
plan = json.load(open(os.path.join(out, "plan.json")))
CATEGORIES = ["params", "master_params", "grads", "optimizer_state", "activations",
              "workspace", "comm_buffers", "other"]

def key(c):
    return (c["tp"], c["zero"], c["micro_batch"], c["grad_accum"], c["checkpointed_blocks"],
            int(c.get("offload_optimizer", False)), int(c.get("sequence_parallel", False)))

candidates = {key(c): c for c in plan["candidates"]}
chosen_key = key(plan["chosen"]) if plan.get("chosen") else None
problems = []

def measure(path):
    """Worst-rank peak, its breakdown, median step time (step 1 left out), final loss."""
    lines = [json.loads(line) for line in open(path) if line.strip()]
    steps = [line for line in lines if "step" in line]  # after the run record
    if not steps:
        raise ValueError("no steps")
    last = steps[-1]
    for field in ("worst_rank_peak_memory_bytes", "worst_rank_peak_by_category"):
        if field not in last:
            raise ValueError(f"no '{field}' in the metrics (is llmft older than the script?)")
    timed = [s["step_seconds"] for s in steps if s["step"] > 1] or [steps[0]["step_seconds"]]
    return {"peak": max(s["worst_rank_peak_memory_bytes"] for s in steps),
            "host_peak": max(s.get("host_peak_memory_bytes", 0) for s in steps),
            "by_category": last["worst_rank_peak_by_category"],
            "step_s": statistics.median(timed), "loss": last["loss"]}

rows = []
for line in open(os.path.join(out, "runs", "manifest.txt")):
    name, tp, zero, mb, accum, ckpt, offload, sp, rc = line.split()
    k = (int(tp), int(zero), int(mb), int(accum), int(ckpt), int(offload), int(sp))
    row = {"layout": name, "dp": ranks // k[0], "tp": k[0], "zero": k[1], "micro_batch": k[2],
           "grad_accum": k[3], "checkpointed_blocks": k[4], "offload_optimizer": k[5],
           "sequence_parallel": k[6],
           "chosen": int(k == chosen_key),
           "rc": int(rc), "measured": None, "predicted": candidates.get(k)}
    if row["rc"] == 0:
        try:
            row["measured"] = measure(os.path.join(out, "runs", name + ".jsonl"))
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"{name}: unreadable metrics: {e}")
    rows.append(row)

def error_pct(predicted, measured):
    if predicted is None or measured is None or measured == 0:
        return None
    return 100.0 * (predicted - measured) / measured

for r in rows:
    p, m = r["predicted"], r["measured"]
    r["predicted_peak_bytes"] = p["memory"]["peak"] if p and p.get("memory") else None
    r["predicted_step_s"] = p.get("predicted_step_s") if p else None
    r["measured_peak_bytes"] = m["peak"] if m else None
    r["measured_step_s"] = m["step_s"] if m else None
    r["final_loss"] = m["loss"] if m else None
    r["memory_error_pct"] = error_pct(r["predicted_peak_bytes"], r["measured_peak_bytes"])
    # The host pool of an offloaded optimizer: rank 0's, which holds the largest shard.
    offloaded = r["offload_optimizer"] and p and p.get("host")
    r["predicted_host_peak_bytes"] = p["host"]["peak"] if offloaded else None
    r["measured_host_peak_bytes"] = m["host_peak"] if offloaded and m else None
    r["host_error_pct"] = error_pct(r["predicted_host_peak_bytes"], r["measured_host_peak_bytes"])
    r["time_error_pct"] = error_pct(r["predicted_step_s"], r["measured_step_s"])

# --- ablation.csv
COLUMNS = ["layout", "dp", "tp", "zero", "micro_batch", "grad_accum", "checkpointed_blocks",
           "offload_optimizer", "sequence_parallel", "chosen", "predicted_peak_bytes", "measured_peak_bytes", "memory_error_pct",
           "predicted_step_s", "measured_step_s", "time_error_pct", "final_loss",
           "predicted_host_peak_bytes", "measured_host_peak_bytes", "host_error_pct"]
def csv_value(v):
    if v is None:
        return ""
    return f"{v:.6g}" if isinstance(v, float) else v
with open(os.path.join(out, "ablation.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([csv_value(r[c]) for c in COLUMNS])

# --- ablation.txt
def mib(b):
    return "-" if b is None else f"{b / 2**20:.2f} MiB"
def ms(s):
    return "-" if s is None else f"{s * 1e3:.1f} ms"
def pct(e, digits=1):
    return "-" if e is None else f"{e:+.{digits}f}%"
header = ["layout", "dp", "tp", "sp", "zero", "mb", "accum", "ckpt", "offload", "chosen", "pred peak", "meas peak",
          "mem err", "pred host", "meas host", "pred step", "meas step", "time err", "final loss", "run"]
table = [header]
for r in rows:
    status = "ok" if r["rc"] == 0 and r["measured"] else (f"exit {r['rc']}" if r["rc"] else "no metrics")
    table.append([r["layout"], r["dp"], r["tp"], "on" if r["sequence_parallel"] else "off",
                  r["zero"], r["micro_batch"], r["grad_accum"],
                  str(r["checkpointed_blocks"]) if r["checkpointed_blocks"] else "off",
                  "on" if r["offload_optimizer"] else "off",
                  "*" if r["chosen"] else "",
                  mib(r["predicted_peak_bytes"]), mib(r["measured_peak_bytes"]),
                  pct(r["memory_error_pct"], 2), mib(r["predicted_host_peak_bytes"]),
                  mib(r["measured_host_peak_bytes"]), ms(r["predicted_step_s"]), ms(r["measured_step_s"]),
                  pct(r["time_error_pct"]), "-" if r["final_loss"] is None else f"{r['final_loss']:.4f}",
                  status])
widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
def fmt(row):
    cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
    return "  ".join(cells).rstrip()
model = plan.get("model", {}).get("name", "?")
timed = f"median of steps 2-{steps}" if steps > 1 else "step 1, warm-up included"
lines = [f"ablation: {model} on {ranks} ranks, {steps} steps per layout (step time: {timed}); "
         f"memory: worst rank's peak", ""]
lines += [fmt(table[0]), "  ".join("-" * w for w in widths)] + [fmt(row) for row in table[1:]]

measured = [r for r in rows if r["measured"]]
failed = [r["layout"] for r in rows if r["rc"] != 0 or not r["measured"]]
chosen = next((r for r in rows if r["chosen"]), None)
fastest = min(measured, key=lambda r: r["measured_step_s"]) if measured else None
lines.append("")
verdict_ok = False
if chosen is None:
    lines.append("planner's choice: none (no layout fits)")
elif not chosen["measured"]:
    lines.append(f"planner's choice: {chosen['layout']} (its run failed)")
else:
    lines.append(f"planner's choice: {chosen['layout']}, predicted {ms(chosen['predicted_step_s'])}, "
                 f"measured {ms(chosen['measured_step_s'])}")
if fastest:
    lines.append(f"measured fastest: {fastest['layout']}, {ms(fastest['measured_step_s'])}")
measured_choice = bool(chosen and chosen["measured"] and fastest)
if measured_choice:
    slower = 100.0 * (chosen["measured_step_s"] / fastest["measured_step_s"] - 1.0)
    verdict_ok = slower <= 10.0
    lines.append(f"choice within 10% of the fastest: {'PASS' if verdict_ok else 'FAIL'} "
                 f"({slower:.1f}% slower)" if slower > 0 else
                 f"choice within 10% of the fastest: PASS (it is the fastest)")
else:
    lines.append("choice within 10% of the fastest: FAIL (no measurement to compare)")
for label, field, digits in (("memory", "memory_error_pct", 2), ("host pool", "host_error_pct", 2),
                             ("step time", "time_error_pct", 1)):
    if field == "host_error_pct" and not any(r["offload_optimizer"] for r in rows):
        continue
    errors = [abs(r[field]) for r in rows if r[field] is not None]
    if errors:
        lines.append(f"{label} prediction error |pred - meas| / meas over {len(errors)} layouts: "
                     f"max {max(errors):.{digits}f}%, mean {statistics.mean(errors):.{digits}f}%")
    else:
        lines.append(f"{label} prediction error: no layout with both figures")
lines.append(f"runs: {len(rows)}, failed: {', '.join(failed) if failed else 'none'}")
lines += [l.rstrip() for l in open(os.path.join(out, "plan.log")) if l.startswith("calibration:")]
lines.extend(problems)
with open(os.path.join(out, "ablation.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))

# --- memory.dat: one line per layout: index, label, then MiB by category predicted
# (the plan's "overhead" counted as "other") and measured; zeros where missing.
def mib_by_category(source, overhead=0):
    if source is None:
        return [0.0] * len(CATEGORIES)
    values = [source.get(c, 0) for c in CATEGORIES]
    values[-1] += overhead
    return [v / 2**20 for v in values]
with open(os.path.join(out, "memory.dat"), "w") as f:
    f.write("# index label " + " ".join("pred_" + c for c in CATEGORIES) + " "
            + " ".join("meas_" + c for c in CATEGORIES) + "  (MiB)\n")
    for i, r in enumerate(rows):
        label = r["layout"] + (" *" if r["chosen"] else "")
        p = r["predicted"]["memory"] if r["predicted"] and r["predicted"].get("memory") else None
        values = mib_by_category(p, p.get("overhead", 0) if p else 0)
        values += mib_by_category(r["measured"]["by_category"] if r["measured"] else None)
        f.write(f'{i} "{label}" ' + " ".join(f"{v:.4f}" for v in values) + "\n")

sys.exit(1 if problems or not measured_choice else 0 if verdict_ok else 3)
PY
}

# memory.png from memory.dat: per layout a predicted (light) and a measured (solid) bar,
# stacked by category. Pages of at most 20 layouts keep the labels readable: more layouts
# make memory_1.png, memory_2.png, ..., all on the same MiB scale. Skipped, with a note,
# without gnuplot.
layouts_per_page=20
draw_chart() {
  if ! command -v gnuplot >/dev/null; then
    echo "ablate: gnuplot is not installed; no $out/memory.png (apt-get install gnuplot-nox)"
    return 0
  fi
  local terminal=png layouts pages page first last count width ymax file range
  gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo && terminal=pngcairo
  layouts=$(grep -vc '^#' "$out/memory.dat")
  pages=$(((layouts + layouts_per_page - 1) / layouts_per_page))
  # The tallest bar over all pages: the label may hold a space, so count columns from the end.
  ymax=$(awk '!/^#/ { p = 0; m = 0; for (i = 0; i < 8; ++i) { p += $(NF - 15 + i); m += $(NF - 7 + i) }
                      if (p > top) top = p; if (m > top) top = m }
              END { print (top > 0 ? top * 1.05 : 1) }' "$out/memory.dat")
  rm -f "$out"/memory.png "$out"/memory_*.png
  for ((page = 1; page <= pages; ++page)); do
    first=$(((page - 1) * layouts_per_page))
    last=$((first + layouts_per_page - 1))
    [[ $last -lt $layouts ]] || last=$((layouts - 1))
    count=$((last - first + 1))
    width=$((count * 60 + 400))
    [[ $width -ge 900 ]] || width=900
    file="$out/memory.png" range=""
    [[ $pages -eq 1 ]] || file="$out/memory_$page.png" range=": layouts $((first + 1))-$((last + 1)) of $layouts"
    gnuplot <<GP || { echo "ablate: gnuplot failed; no $file" >&2; return 0; }
set terminal $terminal noenhanced size $width,760 font ",11"
set output "$file"
set title "Peak memory per rank (the worst rank), by category$range\nleft bar: predicted (light); right bar: measured (solid); *: the planner's choice"
set ylabel "MiB"
set yrange [0:$ymax]
set xrange [-1:$((3 * count - 1))]
set xtics rotate by -40 nomirror font ",10"
set bmargin 12
set grid ytics
set key outside right top vertical invert
set style fill solid 1.0 border rgb "gray40"
n = 8
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f"
names = "params master_params grads optimizer_state activations workspace comm_buffers other/overhead"
# Columns 3..10 are predicted MiB by category, 11..18 measured. Category k is the box
# from the sum of those below it to the sum up to it (x:y:xlow:xhigh:ylow:yhigh); x is
# the layout's place on this page.
x(i) = 3 * (i - $first)
upto(first, k) = sum [j=1:k] column(first + j)
plot for [k=1:n] "$out/memory.dat" every ::$first::$last using (x(\$1)+1):(0):(x(\$1)+0.55):(x(\$1)+1.45):(upto(10, k-1)):(upto(10, k)) \
       with boxxyerror fillstyle solid 1.0 lc rgb word(colors, k) title word(names, k), \
     for [k=1:n] "$out/memory.dat" every ::$first::$last using (x(\$1)):(0):(x(\$1)-0.45):(x(\$1)+0.45):(upto(2, k-1)):(upto(2, k)) \
       with boxxyerror fillstyle transparent solid 0.35 lc rgb word(colors, k) notitle, \
     "$out/memory.dat" every ::$first::$last using (x(\$1)+0.5):(NaN):xtic(2) notitle
GP
    echo "ablate: wrote $file"
  done
}

main() {
  parse_options "$@"
  check_options
  make_launcher
  strip_layout_options
  mkdir -p "$out/runs"
  rm -f "$out/runs/manifest.txt"

  run_plan
  local layouts failures=0 layout
  layouts=$(list_layouts) || exit 2
  [[ -n $layouts ]] || { echo "ablate: no feasible layout in $out/plan.json" >&2; exit 1; }
  echo "ablate: $(wc -l <<<"$layouts") layouts, $steps steps each"
  while read -r layout; do
    # shellcheck disable=SC2086  # seven fields on purpose
    run_layout $layout || failures=$((failures + 1))
  done <<<"$layouts"

  local report=0
  echo
  write_report || report=$?
  draw_chart
  echo "ablate: wrote $out/ablation.csv and $out/ablation.txt"
  [[ $failures -eq 0 ]] || return 1
  return "$report"
}

main "$@"
