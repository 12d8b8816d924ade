#!/usr/bin/env bash
# Runs one Hugging Face oracle check: llmft dumps, transformers verifies.
# usage: run_oracle.sh DUMP_PROGRAM PYTHON ORACLE_SCRIPT OUT_DIR DUMP_ARGS...
# ORACLE_SCRIPT is tests/oracle/hf_oracle.py, which checks GPT-2 and LLaMA dumps alike
# (config.json's architectures picks the family).
set -euo pipefail
dump_program=$1 python=$2 oracle=$3 out=$4
shift 4
rm -rf "$out"
"$dump_program" "$out" "$@"
"$python" "$oracle" "$out" --tol 1e-4
