#!/usr/bin/env bash
# The GPU checks of the CUDA backend on a machine with an NVIDIA GPU (sized for one H200
# with 16 cores), as named steps in the order of what matters most, within a time budget:
#   tests       every Backend hook against the CPU backend in f32/bf16/fp16 (the fused
#               residual + norm against add then norm, weight gradients into f32 sums),
#               training steps CPU vs GPU with the memory model exact on the GPU
#               allocator, and a short bf16 run of the llmft binary
#   nccl        the NCCL communicator's test with one rank (collectives against the MPI
#               communicator's, waits on the device, its measured buffers, timeouts and
#               the aborts they spread), which three H200 runs never reached at the end of
#               `ranks`
#   cudnn       cuDNN attention's backward workspace at the benchmarked models' shapes
#               against its stated bound (core/attention_workspace.h), the calls cuDNN
#               declines, and its chunked deterministic backward and its packed
#               documents (ragged, padding mask) against our kernels
#   bench-llama tokens/s and MFU (against --peak-tflops, default the H200's 989 dense bf16
#               TFLOP/s) of TinyLlama-1.1B, and the same step in PyTorch where python3 has
#               torch and transformers
#   attention   our attention kernels (tensor cores against f32) and cuDNN's at the
#               benchmarked step's shape, each against the GEMM rate
#   sanitizers  the conformance tests under compute-sanitizer (memcheck, then racecheck
#               on attention: our kernels as the check, the libraries' for the record),
#               every tensor in its own allocation (LLMFT_CUDA_ALLOCATIONS=per-tensor) so
#               that memcheck sees its bounds; a sanitizer that refuses the machine is
#               reported as skipped; each report comes back beside the log
#   profile     where the GPU time of one training step of gpt2 (16 x 1024) and of
#               TinyLlama (8 x 2048) goes, kernel by kernel (Nsight Compute's durations,
#               summed per kernel by bench/ncu_summary.py), beside the time model's classes
#   bench-gpt2  the same benchmark for gpt2 (124M)
#   peaks       predicted vs measured peaks: LLaMA-7B with LOMO on the one GPU, and
#               TinyLlama with adamw, lomo and adalomo
#   ranks       1, 2 and 4 ranks sharing the GPU through the staged MPI communicator
#               (tests/launch/layout_invariance.sh, about 4 minutes on an H200)
#   offload     optimizer offload through the pinned host pool (losses as without it),
#               and a 1B-parameter model's offloaded AdamW
#   sp          sequence parallelism, two ranks sharing the GPU
#   resume      checkpoints: resuming repeats the uninterrupted run bit for bit
#               (tests/launch/checkpoint_resume.sh's same-layout cases)
#   bench-more  gpt2-xl against PyTorch, and gpt2 and TinyLlama with checkpointing
# It first builds llmft with CUDA for the GPU it finds (a no-op on a machine still warm).
# Each step starts only with 20 seconds of the budget left, and every command it runs is
# bounded by what is left (and 5 minutes); the log ends with the steps not reached, to
# pass to a second call. Everything goes to stdout and, when $OUT is set, to
# $OUT/gpu_check.log.
#
# On a machine without llmft's build dependencies and without a package registry, run
# scripts/gpu_deps.sh first where apt works (after scripts/build.sh) and carry .gpu-deps:
# this script unpacks the packages into a prefix of its own (never into /) and points the
# build and Open MPI at it.
#
# usage: scripts/gpu_check.sh [--budget SECONDS] [--steps STEP,STEP...] [--peak-tflops 989]
#   --budget   seconds for the whole run, the build included (default 420: a device
#              session of 15 minutes then has room to start the machine and to rerun
#              what a first call did not reach)
#   --steps    which steps to run (default all), in the order above
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
all_steps=(tests nccl cudnn bench-llama attention sanitizers profile bench-gpt2 peaks ranks offload
  sp resume bench-more)
usage="usage: scripts/gpu_check.sh [--budget SECONDS] [--steps STEP,STEP...] [--peak-tflops 989]"
peak=989 budget=420 chosen=$(IFS=,; echo "${all_steps[*]}")
while (($#)); do
  case $1 in
    --peak-tflops) peak=${2:?--peak-tflops needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --steps) chosen=${2:?--steps needs a list}; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[[ $budget =~ ^[0-9]+$ ]] || { echo "--budget must be a whole number of seconds" >&2; exit 2; }
IFS=, read -r -a selected <<<"$chosen"
for s in "${selected[@]}"; do
  [[ " ${all_steps[*]} " == *" $s "* ]] ||
    { echo "--steps: no step '$s' (steps: ${all_steps[*]})" >&2; exit 2; }
done
log=${OUT:-/tmp}/gpu_check.log
exec 3>&1 4>&2 > >(tee "$log") 2>&1
tee_pid=$!
# However the script ends, the pipe into tee is closed and tee writes the log out.
finish() { exec 1>&3 2>&4 3>&- 4>&-; wait "$tee_pid"; }
trap finish EXIT
failures=0 cut_short=0
left() { echo $((budget - SECONDS)); }
# Seconds one command may run: what the budget has left, and 5 minutes at most.
command_bound() { local b; b=$(left); echo $((b > 300 ? 300 : b)); }
header() { echo; echo "=== $* ($(date +%T), $(left) s of the budget left)"; }
# Every check is bounded by the budget, so that a hang costs minutes, not the whole run.
# A command the budget cut short (or left unrun) is no failure: its step goes on the list
# of steps not reached.
check() {
  local rc=0 bound
  bound=$(command_bound)
  if ((bound < 5)); then
    echo "NOT RUN (budget spent): $*"; cut_short=1; return
  fi
  if declare -F "$1" > /dev/null; then "$@" || rc=$?; else timeout "$bound" "$@" || rc=$?; fi
  if ((rc == 0)); then return; fi
  if ((bound < 300 && (rc == 124 || rc == 137))); then
    echo "CUT SHORT by the budget ($bound s): $*"; cut_short=1
  else
    echo "FAILED ($rc): $*"; failures=$((failures + 1))
  fi
}

header "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
nproc
[[ -d /usr/local/cuda/bin ]] && export PATH=$PATH:/usr/local/cuda/bin
command -v nvcc || { echo "no nvcc: cannot build the CUDA backend"; exit 1; }
command -v compute-sanitizer || echo "no compute-sanitizer: the sanitizer step will be skipped"

prefix=/tmp/llmft-deps
cmake_extra=()
if compgen -G "$root/.gpu-deps/*.deb" > /dev/null; then
  header "the carried build dependencies in $prefix"
  if [[ ! -x $prefix/usr/bin/mpiexec.openmpi ]]; then  # a warm machine has them already
    for deb in "$root"/.gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
  fi
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
# Open MPI's own launcher first: another MPI's mpiexec would start one-rank jobs.
mpiexec=$(command -v mpiexec.openmpi || command -v mpiexec) ||
  { echo "no mpiexec: carry .gpu-deps (scripts/gpu_deps.sh)"; exit 1; }
# Open MPI's shared-memory transport without the single-copy mechanism containers refuse;
# NCCL says why when it fails.
export OMPI_MCA_btl_vader_single_copy_mechanism=none NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# NCCL beside the toolkit, or the one PyTorch's wheels bring.
if [[ -z ${NCCL_HOME:-} ]]; then
  nccl_home=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2> /dev/null) &&
    export NCCL_HOME=$nccl_home
fi

header "build (CUDA, for this GPU's architecture)"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
build=$root/build-gpu
# cudnn-frontend's headers, where carried (scripts/gpu_deps.sh copies them from where
# scripts/install_deps.sh fetched them); else CMake looks in the cache.
frontend=$root/.gpu-deps/cudnn-frontend
[[ -f $frontend/include/cudnn_frontend.h ]] && cmake_extra+=(-DLLMFT_CUDNN_FRONTEND_DIR="$frontend")
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
# The runtime, cuBLASLt, driver, GPU, MPI and NCCL versions, for the log.
timeout 60 "$build/llmft" --version || { echo "llmft --version failed"; exit 1; }
mpi_flags=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then mpi_flags+=(--allow-run-as-root); fi
# Two ranks of one job print the parameter count once (rank 0); two one-rank jobs, twice.
lines=$(timeout 60 "$mpiexec" -n 2 "${mpi_flags[@]}" "$build/llmft" --model gpt2-tiny \
  --print-params | wc -l)
((lines == 1)) || { echo "$mpiexec did not start one job of two ranks within a minute"; exit 1; }
"$build/llmft" prepare --input "$root/examples/data/val.txt" --output /tmp/val.tok > /dev/null

step_tests() {
  check "$build/tests/cuda_tests"
  check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok \
    --val-data /tmp/val.tok --steps 3 --log-every 1 --dtype bf16
}

step_cudnn() {
  if ! grep -q "llmft: attention from cuDNN" "$build.configure.log"; then
    echo "skipped: this build has no cuDNN attention (no cuDNN or no cudnn-frontend)"
    return
  fi
  check "$build/tests/cuda_tests" --test-case="*cuDNN*"
}

peer=()
if python3 -c "import torch, transformers" 2> /dev/null; then
  peer=(--python python3 --peer-script "$root/bench/torch_gpu_step.py")
else
  echo "python3 has no torch and transformers: no PyTorch comparison"
fi
bench() { check "$build/bench/bench_gpu_step" --peak-tflops "$peak" "$@"; }

# The GPU time model's MFU and its classes for one bf16 step of `model` (micro-batch
# `batch` x `seq`, docs/GPU_TIME_MODEL.md), on GPUs whose preset has published kernel rates.
predicted_step() {
  local model=$1 batch=$2 seq=$3 preset
  case $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) in
    *H200*) preset=h200 ;;
    *H100*SXM* | *H100*HBM3*) preset=h100-80g ;;
    *) echo "no per-kernel time model for this GPU: no predicted MFU"; return ;;
  esac
  "$build/llmft" plan --gpu "$preset" --gpus 1 --model "$model" --dtype bf16 \
    --seq-len "$seq" --global-batch "$batch" --micro-batch "$batch" \
    --activation-checkpointing 0 | sed -n '/^predicted MFU/,/^$/p'
}

step_bench-llama() {
  bench --model tinyllama-1.1b --batch 8 --seq 2048 --steps 3 "${peer[@]}"
  predicted_step tinyllama-1.1b 8 2048  # beside the measured MFU above
}

step_ranks() {
  # 1, 2 and 4 ranks: accumulation, DDP, tp 2, ZeRO-1/2/3, dp 2 x tp 2, LOMO: the same
  # loss curves, every run's allocator peak equal to the prediction and its device peak
  # within 2%.
  check env LLMFT_TEST_DEVICE=cuda bash "$root/tests/launch/layout_invariance.sh" \
    "$build/llmft" "$root" /tmp/layout_invariance_cuda "$mpiexec" "${mpi_flags[@]}"
}

step_nccl() {
  # Its timeout cases wait 2 s each: a minute is plenty.
  if ((have_nccl)); then
    check timeout 60 "$mpiexec" -n 1 "${mpi_flags[@]}" "$build/tests/nccl_tests"
  else
    echo "NCCL not found: skipped"
  fi
}

# One bench_gpu_step run of `name` under Nsight Compute, every kernel's duration summed per
# kernel name. No warm-up step: the backend's start-up warm-up and the model's
# initialisation are in the profile too, under kernel names of their own, small beside the
# step's. ncu replays each kernel alone, so the durations add up to more than the step's
# time with kernels overlapping; they say which kernels hold the step back.
profile_step() {
  local name=$1 rc=0 bound; shift
  bound=$(command_bound)
  timeout "$bound" "$ncu" --clock-control none --csv --print-units base \
    --metrics gpu__time_duration.sum --log-file "/tmp/ncu_$name.csv" \
    "$build/bench/bench_gpu_step" --peak-tflops "$peak" --steps 1 --warmup 0 "$@" \
    > "/tmp/ncu_$name.out" 2>&1 || rc=$?
  grep -E "^llmft step|^memory" "/tmp/ncu_$name.out"
  if ((rc != 0)) && grep -sqE "$profiler_refusal" "/tmp/ncu_$name.out" "/tmp/ncu_$name.csv"; then
    echo "SKIPPED: ncu refused this machine:"
    grep -shE "$profiler_refusal" "/tmp/ncu_$name.out" "/tmp/ncu_$name.csv" | head -3
    return 0
  fi
  ((rc == 0)) || { tail -n 20 "/tmp/ncu_$name.out"; return $rc; }
  python3 "$root/bench/ncu_summary.py" "/tmp/ncu_$name.csv" --top 25
}
profiler_refusal="ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize|not supported"

step_profile() {
  ncu=$(command -v ncu || compgen -G "/opt/nvidia/nsight-compute/*/ncu" | tail -1)
  if [[ -z $ncu ]]; then
    echo "ncu not found: skipped"
    return
  fi
  check profile_step gpt2 --model gpt2 --batch 16 --seq 1024
  predicted_step gpt2 16 1024
  check profile_step tinyllama --model tinyllama-1.1b --batch 8 --seq 2048
}

step_bench-gpt2() {
  bench --model gpt2 --batch 16 --seq 1024 "${peer[@]}"
}

step_peaks() {
  bench --model llama-7b --batch 1 --seq 2048 --optimizer lomo --checkpointing 1 --steps 2 \
    --warmup 1
  for optimizer in adamw lomo adalomo; do
    bench --model tinyllama-1.1b --batch 4 --seq 2048 --optimizer $optimizer --steps 2 --warmup 1
  done
}

offload_gap() {
  paste <(sed -nE 's/.*"loss":([^,]*),.*/\1/p' /tmp/offload_off.jsonl) \
    <(sed -nE 's/.*"loss":([^,]*),.*/\1/p' /tmp/offload_on.jsonl) |
    awk '{ d = ($2 - $1) / $1; if (d < 0) d = -d; if (d > w) w = d } END { print w + 0;
           exit !(NR == 3 && w <= 1e-5) }'
}

step_offload() {
  # The memory tables print the GPU allocator's and the host pool's measured peaks beside
  # the predictions; the two runs' fp32 losses agree within the fp32 parity bound (1e-5
  # relative, tests/support/parity.h: the host's update rounds as the CPU's does).
  rm -f /tmp/offload_off.jsonl /tmp/offload_on.jsonl  # a warm machine keeps an earlier run's
  for offload in off on; do
    check "$build/llmft" --device cuda --model llama-tiny --data /tmp/val.tok --steps 3 \
      --log-every 1 --micro-batch 2 --grad-accum 2 --offload-optimizer=$offload \
      --metrics /tmp/offload_$offload.jsonl
  done
  check offload_gap
  # TinyLlama's shape with the byte tokenizer's vocabulary (the data's): its AdamW state
  # (about 12 GB) in the host pool, whatever the machine's memory reports at start-up.
  check "$build/llmft" --device cuda --model "$root/bench/configs/tinyllama_byte_vocab.json" \
    --data /tmp/val.tok --steps 2 --log-every 1 --dtype bf16 --seq-len 256 --micro-batch 2 \
    --offload-optimizer --host-memory 48GiB --clip-grad 0
}

step_sp() {
  # A collective gives up within a minute, naming itself, well inside the check's bound.
  check env LLMFT_EXTRA_OPTIONS="--device cuda --share-devices --comm-timeout 60" bash \
    "$root/tests/launch/sequence_parallel.sh" "$build/llmft" /tmp/val.tok \
    /tmp/sequence_parallel_cuda "$mpiexec" "${mpi_flags[@]}"
}

step_attention() {
  # Our kernels: tensor cores (bf16, fp16) against f32, one sequence a call.
  check env LLMFT_CUDNN_ATTENTION=off "$build/bench/bench_attention" --device cuda \
    --model tinyllama-1.1b --lengths 512,2048 --dtypes f32,bf16,fp16
  # cuDNN at the benchmarked step's shape (8 x 2048), against the rates the GPU time model
  # assumes (docs/GPU_TIME_MODEL.md).
  check "$build/bench/bench_attention" --device cuda --model tinyllama-1.1b --lengths 512,2048 \
    --batch 8 --dtypes bf16
}

step_resume() {
  # Checkpoints on the GPU: resuming at step 5 repeats the uninterrupted run's steps 6-10
  # bit for bit (1 and 2 ranks, every optimizer, fp32/bf16/fp16, offload), the step-10
  # files equal dataset by dataset (h5py, where python3 has it).
  local python=none
  if python3 -c "import h5py" 2> /dev/null; then python=python3; fi
  check env LLMFT_TEST_DEVICE=cuda bash "$root/tests/launch/checkpoint_resume.sh" \
    "$build/llmft" "$root" /tmp/checkpoint_resume_cuda "$python" "$mpiexec" "${mpi_flags[@]}"
}

step_bench-more() {
  bench --model gpt2-xl --batch 4 --seq 1024 --steps 3 "${peer[@]}"
  bench --model gpt2 --batch 16 --seq 1024 --checkpointing 1
  bench --model tinyllama-1.1b --batch 8 --seq 2048 --checkpointing 1 --steps 3
}

# One compute-sanitizer run (through check, which classifies its status), bounded as check
# bounds commands; a sanitizer that refuses the machine (no support for this driver or GPU,
# a debugger interface the container withholds) is reported as skipped, not as a failure
# of llmft.
sanitizer_refusal="Internal Sanitizer Error|not supported|Unable to|Target application terminated before"
sanitizer_runs=0
run_sanitizer() {
  sanitizer_runs=$((sanitizer_runs + 1))
  local tool=$1 name=sanitizer_$1_$sanitizer_runs.log rc=0 bound
  local out=/tmp/$name
  bound=$(command_bound)
  timeout "$bound" env LLMFT_CUDA_ALLOCATIONS=per-tensor compute-sanitizer --error-exitcode 1 \
    --tool "$@" > "$out" 2>&1 || rc=$?
  tail -n 25 "$out"
  # Where each report points (racecheck names both accesses' kernels and lines), counted
  # once per site, so that the log says whose kernel it is; the whole report comes back
  # beside the log.
  grep -E "Race reported|access at|Invalid .* of size|Address .* is out of bounds" "$out" |
    sed -E 's/^=+ +//; s/0x[0-9a-f]+/0x./g' | sort | uniq -c | sort -rn | head -n 20
  [[ -n ${OUT:-} ]] && head -c 8M "$out" > "$OUT/$name"
  if ((rc != 0)) && grep -qE "$sanitizer_refusal" "$out"; then
    echo "SKIPPED: compute-sanitizer --tool $tool refused this machine"
    return 0
  fi
  return $rc
}

step_sanitizers() {
  if ! command -v compute-sanitizer > /dev/null; then
    echo "compute-sanitizer not found: skipped"
    return
  fi
  # Every tensor in its own cudaMalloc (core/cuda/cuda_memory.h), so that memcheck sees
  # each tensor's bounds instead of one slab's.
  # cudnn_documents: cuDNN's ragged calls end at their tensors' ends.
  check run_sanitizer memcheck "$build/tests/cuda_tests" \
    --source-file='*backend_conformance*,*fused_norms*,*f32_gradients*,*cudnn_documents*'
  # racecheck on our kernels (all in namespace llmft, so their names hold "llmft"); the
  # second H200 run's racecheck over every kernel reported 58 hazards that a read of ours
  # did not find, and cuDNN's and cuBLASLt's TMA/mbarrier kernels are reported falsely by
  # some racecheck versions. The libraries' count follows, for the record, not as a check.
  check run_sanitizer racecheck --kernel-name kns=llmft "$build/tests/cuda_tests" \
    --source-file='*backend_conformance*' --test-case='*attention*'
  if (($(left) > 90)); then
    echo "racecheck on the libraries' kernels (cuDNN, cuBLASLt), for the record:"
    run_sanitizer racecheck --kernel-name-exclude kns=llmft "$build/tests/cuda_tests" \
      --source-file='*backend_conformance*' --test-case='*attention*' ||
      echo "(reports in library kernels: not llmft's to fix, and not counted as a failure)"
  fi
}

not_reached=()
for s in "${all_steps[@]}"; do
  [[ " ${selected[*]} " == *" $s "* ]] || continue
  if (($(left) < 20)); then
    not_reached+=("$s")
    continue
  fi
  header "$s"
  cut_short=0
  "step_$s"
  ((cut_short)) && not_reached+=("$s")
done

header "done: $failures failure(s)"
if ((${#not_reached[@]})); then
  echo "not reached, or cut short, within the budget: --steps $(IFS=,; echo "${not_reached[*]}")"
fi
exit $((failures > 0 || ${#not_reached[@]} > 0))
