#!/usr/bin/env bash
# The GPU checks of the CUDA backend, in one run on a machine with an NVIDIA GPU (sized for
# under 8 minutes on one H200 with 16 cores). It builds llmft with CUDA for the GPU it
# finds, runs the GPU tests (every Backend hook against the CPU backend in f32/bf16/fp16,
# training steps CPU vs GPU with the memory model exact on the GPU allocator), runs the
# conformance tests under compute-sanitizer, 1, 2 and 4 ranks sharing the GPU through
# the staged MPI communicator (tests/launch/layout_invariance.sh) and the NCCL
# communicator's test with one rank, then benchmarks: tokens/s and MFU (against
# --peak-tflops, default the H200's 989 dense bf16 TFLOP/s) for gpt2 (124M), gpt2-xl and
# TinyLlama-1.1B with and without activation checkpointing, the same steps in PyTorch
# where python3 has torch and transformers, predicted vs measured peaks for adamw, lomo
# and adalomo, and LLaMA-7B with LOMO on the one GPU; optimizer offload and sequence
# parallelism (two ranks sharing the GPU); attention's tensor-core kernels against its f32
# ones. Everything goes to stdout and, when $OUT is set, to $OUT/gpu_check.log.
#
# On a machine without llmft's build dependencies and without a package registry, run
# scripts/gpu_deps.sh first where apt works and carry .gpu-deps: this script unpacks the
# packages into a prefix of its own (never into /).
#
# usage: scripts/gpu_check.sh [--peak-tflops 989]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peak=989
[[ ${1:-} == --peak-tflops ]] && peak=$2
log=${OUT:-/tmp}/gpu_check.log
exec > >(tee "$log") 2>&1
failures=0
step() { echo; echo "=== $* ($(date +%T))"; }
check() { "$@" || { echo "FAILED: $*"; failures=$((failures + 1)); }; }

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
nproc

prefix=/tmp/llmft-deps
cmake_extra=()
if compgen -G "$root/.gpu-deps/*.deb" > /dev/null; then
  step "unpacking the carried build dependencies into $prefix"
  for deb in "$root"/.gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
  lib=$prefix/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$lib:$lib/openblas-openmp:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OPAL_PREFIX=$prefix/usr PATH=$prefix/usr/bin:$PATH
  cmake_extra=(-DCMAKE_PREFIX_PATH="$prefix/usr"
               -DMPI_CXX_COMPILER="$prefix/usr/bin/mpicxx.openmpi")
fi

step "build (CUDA, for this GPU's architecture)"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
build=$root/build-gpu
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLLMFT_CUDA=ON \
  -DLLMFT_CUDA_ARCHITECTURES="${arch:-90}" "${cmake_extra[@]}" > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target llmft cuda_tests nccl_tests bench_gpu_step bench_attention || exit 1

step "GPU tests"
check "$build/tests/cuda_tests"
"$build/llmft" prepare --input "$root/examples/data/val.txt" --output /tmp/val.tok > /dev/null
check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok --val-data /tmp/val.tok \
  --steps 3 --log-every 1 --dtype bf16

step "several ranks on the one GPU (MPI through host copies), and NCCL with one rank"
mpi_flags=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then mpi_flags+=(--allow-run-as-root); fi
# 1, 2 and 4 ranks: accumulation, DDP, tp 2, ZeRO-1/2/3, dp 2 x tp 2, LOMO: the same loss
# curves, every run's allocator peak equal to the prediction and its device peak within 2%.
check env LLMFT_TEST_DEVICE=cuda bash "$root/tests/launch/layout_invariance.sh" "$build/llmft" \
  "$root" /tmp/layout_invariance_cuda mpiexec "${mpi_flags[@]}"
check mpiexec -n 1 "${mpi_flags[@]}" "$build/tests/nccl_tests"

step "optimizer offload (pinned host pool) and sequence parallelism on the GPU"
# The memory tables print the GPU allocator's and the host pool's measured peaks beside
# the predictions; the first two runs' losses should agree to the printed digits in fp32.
for offload in off on; do
  check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok --steps 3 \
    --log-every 1 --micro-batch 2 --grad-accum 2 --offload-optimizer=$offload
done
check "$build/llmft" --device cuda --model tinyllama-1.1b --data /tmp/val.tok --steps 2 \
  --log-every 1 --dtype bf16 --seq-len 256 --micro-batch 2 --offload-optimizer --clip-grad 0
check env LLMFT_EXTRA_OPTIONS="--device cuda --share-devices" bash \
  "$root/tests/launch/sequence_parallel.sh" "$build/llmft" /tmp/val.tok /tmp/sequence_parallel_cuda \
  mpiexec "${mpi_flags[@]}"

step "conformance under compute-sanitizer (memcheck, then racecheck on attention)"
if command -v compute-sanitizer > /dev/null; then
  check compute-sanitizer --error-exitcode 1 --tool memcheck "$build/tests/cuda_tests" \
    --source-file='*backend_conformance*'
  check compute-sanitizer --error-exitcode 1 --tool racecheck "$build/tests/cuda_tests" \
    --test-case='*attention*'
else
  echo "compute-sanitizer not found: skipped"
fi

step "attention: tensor-core kernels (bf16) against the f32 kernels"
for model in gpt2 tinyllama-1.1b llama-7b; do
  check "$build/bench/bench_attention" --device cuda --model $model --lengths 512,2048 \
    --dtypes f32,bf16,fp16
done

step "benchmarks"
peer=()
if python3 -c "import torch, transformers" 2> /dev/null; then
  peer=(--python python3 --peer-script "$root/bench/torch_gpu_step.py")
else
  echo "python3 has no torch and transformers: no PyTorch comparison"
fi
bench() { check "$build/bench/bench_gpu_step" --peak-tflops "$peak" "$@"; }
for ckpt in 0 1; do
  bench --model gpt2 --batch 16 --seq 1024 --checkpointing $ckpt "${peer[@]}"
  bench --model gpt2-xl --batch 4 --seq 1024 --checkpointing $ckpt --steps 3 "${peer[@]}"
  bench --model tinyllama-1.1b --batch 8 --seq 2048 --checkpointing $ckpt --steps 3 "${peer[@]}"
done

step "predicted vs measured peaks"
for optimizer in adamw lomo adalomo; do
  bench --model tinyllama-1.1b --batch 4 --seq 2048 --optimizer $optimizer --steps 2 --warmup 1
done
bench --model llama-7b --batch 1 --seq 2048 --optimizer lomo --checkpointing 1 --steps 2 \
  --warmup 1

step "done: $failures failure(s)"
exit $((failures > 0))
