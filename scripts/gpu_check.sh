#!/usr/bin/env bash
# The GPU checks of the CUDA backend on a machine with an NVIDIA GPU (sized for one H200
# with 16 cores, in two parts of under 10 minutes each). It builds llmft with CUDA for the
# GPU it finds, runs the GPU tests (every Backend hook against the CPU backend in
# f32/bf16/fp16, training steps CPU vs GPU with the memory model exact on the GPU
# allocator), 1, 2 and 4 ranks sharing the GPU through the staged MPI communicator
# (tests/launch/layout_invariance.sh), the NCCL communicator's test with one rank,
# optimizer offload and sequence parallelism (two ranks sharing the GPU); then attention's
# tensor-core kernels against its f32 ones, benchmarks: tokens/s and MFU (against
# --peak-tflops, default the H200's 989 dense bf16 TFLOP/s) for gpt2 (124M), gpt2-xl and
# TinyLlama-1.1B, with and without activation checkpointing, the same steps in PyTorch
# where python3 has torch and transformers, predicted vs measured peaks for adamw, lomo
# and adalomo and LLaMA-7B with LOMO on the one GPU, and last the conformance tests under
# compute-sanitizer. Everything goes to stdout and, when $OUT is set, to
# $OUT/gpu_check.log ($OUT/gpu_check1.log, gpu_check2.log for the parts). Every command
# it runs is bounded to 5 minutes.
#
# On a machine without llmft's build dependencies and without a package registry, run
# scripts/gpu_deps.sh first where apt works (after scripts/build.sh) and carry .gpu-deps:
# this script unpacks the packages into a prefix of its own (never into /) and points the
# build and Open MPI at it.
#
# A device command may run 10 minutes at most: `--part 1` (build, GPU tests, several
# ranks, offload and sequence parallelism) and `--part 2` (sanitizers, attention, the
# benchmarks and peaks; the build again, a no-op on a machine still warm) split the run in
# two; the default runs both.
#
# usage: scripts/gpu_check.sh [--part 1|2] [--peak-tflops 989]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peak=989 part=all
while (($#)); do
  case $1 in
    --peak-tflops) peak=${2:?--peak-tflops needs a value}; shift 2 ;;
    --part) part=${2:?--part needs 1 or 2}; shift 2 ;;
    *) echo "usage: scripts/gpu_check.sh [--part 1|2] [--peak-tflops 989]" >&2; exit 2 ;;
  esac
done
[[ $part == all || $part == 1 || $part == 2 ]] || { echo "--part must be 1 or 2" >&2; exit 2; }
log=${OUT:-/tmp}/gpu_check${part/all/}.log
exec 3>&1 4>&2 > >(tee "$log") 2>&1
tee_pid=$!
# However the script ends, the pipe into tee is closed and tee writes the log out.
finish() { exec 1>&3 2>&4 3>&- 4>&-; wait "$tee_pid"; }
trap finish EXIT
failures=0
step() { echo; echo "=== $* ($(date +%T))"; }
# Every check is bounded, so that a hang costs minutes, not the whole run.
check() {
  local rc=0
  if declare -F "$1" > /dev/null; then "$@" || rc=$?; else timeout 300 "$@" || rc=$?; fi
  ((rc == 0)) || { echo "FAILED ($rc): $*"; failures=$((failures + 1)); }
}

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
nproc
[[ -d /usr/local/cuda/bin ]] && export PATH=$PATH:/usr/local/cuda/bin
command -v nvcc || { echo "no nvcc: cannot build the CUDA backend"; exit 1; }
command -v compute-sanitizer || echo "no compute-sanitizer: the sanitizer step will be skipped"

prefix=/tmp/llmft-deps
cmake_extra=()
if compgen -G "$root/.gpu-deps/*.deb" > /dev/null; then
  step "unpacking the carried build dependencies into $prefix"
  for deb in "$root"/.gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
  usr=$prefix/usr lib=$prefix/usr/lib/x86_64-linux-gnu
  # Debian's wrappers and plugins name /usr: Open MPI relocates with OPAL_PREFIX, PMIx and
  # hwloc find their plugins through these, HDF5's wrapper gets this prefix written in.
  export OPAL_PREFIX=$usr PMIX_INSTALL_PREFIX=$lib/pmix2 HWLOC_PLUGINS_PATH=$lib/hwloc
  export PATH=$usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openblas-openmp:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  sed -i "s|^prefix=\"/usr\"|prefix=\"$usr\"|" "$usr/bin/h5pcc.openmpi"
  # Runtime packages carry only versioned names: give the linker the plain ones.
  for so in "$lib"/lib*.so.[0-9]*; do
    plain=${so%%.so.*}.so
    [[ -e $plain ]] || ln -s "$(basename "$so")" "$plain"
  done
  export LDFLAGS="-L$lib -Wl,-rpath-link,$lib -Wl,-rpath-link,$lib/openmpi/lib"
  cmake_extra=(-DCMAKE_PREFIX_PATH="$usr" -DMPI_CXX_COMPILER="$usr/bin/mpicxx.openmpi"
               -DMPI_C_COMPILER="$usr/bin/mpicc.openmpi"
               -DHDF5_C_COMPILER_EXECUTABLE="$usr/bin/h5pcc.openmpi"
               -DHDF5_C_INCLUDE_DIR="$usr/include/hdf5/openmpi"
               -DHDF5_C_LIBRARY_hdf5="$lib/libhdf5_openmpi.so")
fi
mpiexec=$(command -v mpiexec || command -v mpiexec.openmpi) ||
  { echo "no mpiexec: carry .gpu-deps (scripts/gpu_deps.sh)"; exit 1; }
# NCCL beside the toolkit, or the one PyTorch's wheels bring.
if [[ -z ${NCCL_HOME:-} ]]; then
  nccl_home=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2> /dev/null) &&
    export NCCL_HOME=$nccl_home
fi

step "build (CUDA, for this GPU's architecture)"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
build=$root/build-gpu
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLLMFT_CUDA=ON \
  -DLLMFT_CUDA_ARCHITECTURES="${arch:-90}" "${cmake_extra[@]}" > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
targets=(llmft cuda_tests bench_gpu_step bench_attention)
have_nccl=0
if grep "llmft: NCCL" "$build.configure.log"; then  # CMake found its header and library
  targets+=(nccl_tests)
  have_nccl=1
else
  echo "NCCL not found: no NCCL communicator, and its test is skipped"
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" || exit 1
mpi_flags=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then mpi_flags+=(--allow-run-as-root); fi
"$mpiexec" -n 2 "${mpi_flags[@]}" "$build/llmft" --help > /dev/null ||
  { echo "mpiexec cannot start two ranks of llmft here"; exit 1; }

if [[ $part != 2 ]]; then
step "GPU tests"
check "$build/tests/cuda_tests"
"$build/llmft" prepare --input "$root/examples/data/val.txt" --output /tmp/val.tok > /dev/null
check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok --val-data /tmp/val.tok \
  --steps 3 --log-every 1 --dtype bf16

step "several ranks on the one GPU (MPI through host copies), and NCCL with one rank"
# 1, 2 and 4 ranks: accumulation, DDP, tp 2, ZeRO-1/2/3, dp 2 x tp 2, LOMO: the same loss
# curves, every run's allocator peak equal to the prediction and its device peak within 2%.
check env LLMFT_TEST_DEVICE=cuda bash "$root/tests/launch/layout_invariance.sh" "$build/llmft" \
  "$root" /tmp/layout_invariance_cuda "$mpiexec" "${mpi_flags[@]}"
if ((have_nccl)); then check "$mpiexec" -n 1 "${mpi_flags[@]}" "$build/tests/nccl_tests"; fi

step "optimizer offload (pinned host pool) and sequence parallelism on the GPU"
# The memory tables print the GPU allocator's and the host pool's measured peaks beside
# the predictions; the first two runs' fp32 losses agree within the fp32 parity bound
# (1e-5 relative, tests/support/parity.h: the host's update rounds as the CPU's does).
rm -f /tmp/offload_off.jsonl /tmp/offload_on.jsonl  # a warm machine keeps an earlier run's
for offload in off on; do
  check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok --steps 3 \
    --log-every 1 --micro-batch 2 --grad-accum 2 --offload-optimizer=$offload \
    --metrics /tmp/offload_$offload.jsonl
done
offload_gap() {
  paste <(sed -E 's/.*"loss":([^,]*),.*/\1/' /tmp/offload_off.jsonl) \
    <(sed -E 's/.*"loss":([^,]*),.*/\1/' /tmp/offload_on.jsonl) |
    awk '{ d = ($2 - $1) / $1; if (d < 0) d = -d; if (d > w) w = d } END { print w + 0;
           exit !(NR == 3 && w <= 1e-5) }'
}
check offload_gap
check "$build/llmft" --device cuda --model tinyllama-1.1b --data /tmp/val.tok --steps 2 \
  --log-every 1 --dtype bf16 --seq-len 256 --micro-batch 2 --offload-optimizer --clip-grad 0
check env LLMFT_EXTRA_OPTIONS="--device cuda --share-devices" bash \
  "$root/tests/launch/sequence_parallel.sh" "$build/llmft" /tmp/val.tok /tmp/sequence_parallel_cuda \
  "$mpiexec" "${mpi_flags[@]}"

fi

if [[ $part != 1 ]]; then
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
# PyTorch beside the runs without checkpointing (each peer costs its import and start-up).
bench --model gpt2 --batch 16 --seq 1024 "${peer[@]}"
bench --model gpt2-xl --batch 4 --seq 1024 --steps 3 "${peer[@]}"
bench --model tinyllama-1.1b --batch 8 --seq 2048 --steps 3 "${peer[@]}"
bench --model gpt2 --batch 16 --seq 1024 --checkpointing 1
bench --model tinyllama-1.1b --batch 8 --seq 2048 --checkpointing 1 --steps 3

step "predicted vs measured peaks"
for optimizer in adamw lomo adalomo; do
  bench --model tinyllama-1.1b --batch 4 --seq 2048 --optimizer $optimizer --steps 2 --warmup 1
done
bench --model llama-7b --batch 1 --seq 2048 --optimizer lomo --checkpointing 1 --steps 2 \
  --warmup 1

# Last: the slowest checks, so that a run cut short still has the numbers above.
step "conformance under compute-sanitizer (memcheck, then racecheck on attention)"
if command -v compute-sanitizer > /dev/null; then
  check compute-sanitizer --error-exitcode 1 --tool memcheck "$build/tests/cuda_tests" \
    --source-file='*backend_conformance*'
  check compute-sanitizer --error-exitcode 1 --tool racecheck "$build/tests/cuda_tests" \
    --source-file='*backend_conformance*' --test-case='*attention*'
else
  echo "compute-sanitizer not found: skipped"
fi

fi

step "done: $failures failure(s)"
exit $((failures > 0))
