#!/usr/bin/env bash
# Prepares what scripts/gpu_check.sh needs on a GPU machine that cannot reach a package
# registry: downloads (here, where apt works) the Debian packages of llmft's build
# dependencies that such a machine's image may lack — Open MPI, OpenBLAS (OpenMP build),
# Boost.Program_options, doctest and the libraries they load — into .gpu-deps/ (about
# 35 MB), which git ignores and the device run carries. gpu_check.sh unpacks them into a
# prefix of its own there, never into /.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/.gpu-deps
grep -qx '/.gpu-deps/' "$root/.git/info/exclude" 2>/dev/null ||
  echo '/.gpu-deps/' >> "$root/.git/info/exclude"
mkdir -p "$dir"
packages=(
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 libhwloc-plugins
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 ibverbs-providers
  librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1
  libpciaccess0 libxnvctrl0 libopenblas0-openmp libopenblas-openmp-dev libopenblas-dev
  libgfortran5 libboost-program-options1.74.0 libboost-program-options1.74-dev
  libboost1.74-dev libboost-program-options-dev doctest-dev
)
[[ $(id -u) -eq 0 ]] && sudo_cmd=() || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
(cd "$dir" && apt-get download -qq "${packages[@]}")
du -sh "$dir"
