#!/usr/bin/env bash
# The run record (launch/run_record.h): a tiny run with non-default options writes it as the
# first metrics line and as run_record.json in its --save-dir and --checkpoint-dir, with
# the data file's size and FNV-1a (checked against Python's own FNV-1a of the file's bytes);
# `llmft train --config run_record.json` into other directories records the same options
# (all but the output paths and the start time) and logs the same losses, bit for bit (the
# same options on one rank make the same arithmetic); `llmft export` carries the record
# into the exported directory (and an export without one removes the stale record there)
# and `llmft eval` names its source.
# usage: run_record.sh LLMFT WORK_DIR
set -euo pipefail
llmft=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAILED: $1"; exit 1; }
for i in 1 2 3 4 5 6 7 8; do echo "line $i of a tiny corpus for the record."; done > tiny.txt
"$llmft" prepare --input tiny.txt --output tiny.tok > /dev/null
printf 'lr = 1e-3\nseed = 11\n' > options.ini
"$llmft" train --config options.ini --data tiny.tok --model gpt2-tiny --seq-len 16 \
  --micro-batch 2 --grad-accum 2 --steps 3 --warmup 1 --clip-grad 0.5 --optimizer adamw \
  --weight-decay 0.05 --threads 1 --log-every 1 --metrics a.jsonl --save-dir a_model \
  --checkpoint-dir a_ckpt --checkpoint-every 3 > a.log 2>&1 || { cat a.log; fail "run a exited non-zero"; }
"$llmft" train --config a_model/run_record.json --metrics b.jsonl --save-dir b_model \
  --checkpoint-dir b_ckpt > b.log 2>&1 || { cat b.log; fail "the run from the record exited non-zero"; }
"$llmft" export --checkpoint a_ckpt --save-dir exported > export.log 2>&1 ||
  { cat export.log; fail "export exited non-zero"; }
"$llmft" eval --init-from a_model --data tiny.tok --seq-len 16 --threads 1 > eval.log 2>&1 ||
  { cat eval.log; fail "eval exited non-zero"; }
"$llmft" eval --init-from a_model --data tiny.tok --seq-len 16 --threads 1 --json > eval.json ||
  fail "eval --json exited non-zero"
python3 - <<'PY' || fail "the records disagree (above)"
import json
def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) % 2**64
    return "%016x" % h
def first(path):
    with open(path) as f:
        return json.loads(f.readline())
def record(path):
    with open(path) as f:
        return json.load(f)
a = first("a.jsonl")["run_record"]
b = first("b.jsonl")["run_record"]
for path in ["a_model/run_record.json", "a_ckpt/run_record.json", "exported/run_record.json"]:
    assert record(path)["run_record"] == a, path + " differs from a.jsonl's first line"
assert record("b_model/run_record.json")["run_record"] == b, "b_model's record"
assert json.loads(open("eval.json").read())["run_record"] == a, "eval --json's run_record"
opts = a["options"]
# Floats as the shortest text that reads back to the same float.
assert opts["lr"] == "0.001" and opts["seed"] == "11" and opts["clip-grad"] == "0.5", opts
for name in ["lr", "seed", "steps", "clip-grad", "data", "metrics"]:
    assert name in a["given"], name + " not among the given options"
assert "eps" in opts and "eps" not in a["given"], "a default is recorded, not given"
data = open("tiny.tok", "rb").read()
assert a["data"] == [{"path": "tiny.tok", "bytes": len(data), "fnv1a64": fnv1a(data)}], a["data"]
assert a["plan"]["micro_batch"] == 2 and a["plan"]["grad_accum"] == 2 and a["plan"]["steps"] == 3
assert a["world_size"] == 1 and len(a["hosts"]) == 1
assert a["build"][0].startswith("llmft "), a["build"]
differ = {"metrics", "save-dir", "checkpoint-dir"}
for key in set(a) | set(b):
    if key == "started":
        continue
    if key == "options":
        for name in set(a["options"]) | set(b["options"]):
            if name not in differ:
                assert a["options"].get(name) == b["options"].get(name), name
        continue
    assert a[key] == b[key], key
def losses(path):
    return [line.split('"loss":')[1].split(",")[0] for line in open(path) if '"step"' in line]
assert len(losses("a.jsonl")) == 3 and losses("a.jsonl") == losses("b.jsonl"), \
    (losses("a.jsonl"), losses("b.jsonl"))
print("losses of both runs:", losses("a.jsonl"))
PY
grep -E "^trained by llmft .* on --data tiny.tok \([0-9]+ bytes, fnv1a64 [0-9a-f]{16}\) for 3 steps" eval.log ||
  { cat eval.log; fail "eval does not name the record's source"; }
# An export from a checkpoint without a record into the directory removes the record that
# no longer describes its weights.
mkdir bare_ckpt
cp a_ckpt/*.h5 bare_ckpt/
"$llmft" export --checkpoint bare_ckpt --save-dir exported > reexport.log 2>&1 ||
  { cat reexport.log; fail "the export without a record exited non-zero"; }
[[ ! -e exported/run_record.json ]] || fail "a stale run_record.json was left beside new weights"
echo '{"options": {}}' > not_a_record.json
if "$llmft" train --config not_a_record.json > bad.log 2>&1; then fail "a JSON file that is no run record was taken"; fi
grep -q "^error: --config not_a_record.json: not a run record" bad.log ||
  { cat bad.log; fail "no one-line error naming the file that is no run record"; }
echo "ok"
