#!/usr/bin/env bash
# Installs what llmft needs on a Debian machine, skipping what is already there:
# compilers and CMake, Open MPI, OpenBLAS (OpenMP build), parallel HDF5, Boost.Program_options,
# doctest, nlohmann-json (the JSON parser), gnuplot (examples/ablate.sh's chart), Python's
# Jinja2 (`llmft prepare` renders chat templates with it), and for the cluster tests SLURM
# (slurmctld, slurmd, munge) and iproute2 (network namespaces). With --python, also the Python
# environment the oracle tests and benchmarks use (torch, transformers, safetensors,
# tokenizers, h5py), kept outside the clone in LLMFT_VENV (default ~/.cache/llmft/venv)
# so repeated runs reuse it. With --fuzz, also clang and libFuzzer (scripts/fuzz.sh).
# Where a CUDA toolkit is (nvcc on PATH, under CUDA_HOME or the toolkit's default place),
# also the header-only cudnn-frontend (cuDNN attention, core/cuda/cudnn_attention.h): the
# include/ of the nvidia-cudnn-frontend wheel, unpacked into LLMFT_CUDNN_FRONTEND (default
# ~/.cache/llmft/cudnn-frontend), where CMake looks for it.
set -euo pipefail

packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libopenblas-openmp-dev
          libhdf5-openmpi-dev libboost-program-options-dev doctest-dev python3 python3-venv
          nlohmann-json3-dev python3-jinja2 gnuplot-nox slurmctld slurmd slurm-client munge
          iproute2)
for arg in "$@"; do
  [[ $arg == --fuzz ]] && packages+=(clang libclang-rt-dev)
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if [[ " $* " == *" --python "* ]]; then
  venv=${LLMFT_VENV:-$HOME/.cache/llmft/venv}
  python_packages=(torch transformers safetensors tokenizers h5py numpy)
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c "import torch, transformers, safetensors, tokenizers, h5py" 2>/dev/null; then
    echo "install_deps: creating the Python environment in $venv (torch, transformers, ...)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q "${python_packages[@]}"
  fi
fi

nvcc_found() {
  command -v nvcc >/dev/null || [[ -x ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc ]]
}
frontend=${LLMFT_CUDNN_FRONTEND:-$HOME/.cache/llmft/cudnn-frontend}
if nvcc_found && [[ ! -f $frontend/include/cudnn_frontend.h ]]; then
  echo "install_deps: fetching cudnn-frontend's headers into $frontend"
  # Downloaded and unpacked beside the destination, which receives include/ whole or not
  # at all; what is left on the way out is removed however the script ends.
  mkdir -p "$(dirname "$frontend")"
  staged=$(mktemp -d "$frontend.XXXXXX")
  trap 'rm -rf "$staged"' EXIT
  # Optional: without it (no package index reachable) the build runs attention on our own
  # kernels, so a failed fetch is reported, not fatal.
  if python3 -m venv "$staged/venv" &&
    "$staged/venv/bin/pip" download -q --no-deps --only-binary=:all: -d "$staged" \
      nvidia-cudnn-frontend &&
    python3 -m zipfile -e "$staged"/nvidia_cudnn_frontend-*.whl "$staged/wheel"; then
    mkdir -p "$frontend"
    rm -rf "$frontend/include"
    mv "$staged/wheel/include" "$frontend/include"
  else
    echo "install_deps: could not fetch cudnn-frontend: attention will run on llmft's own kernels"
  fi
fi
