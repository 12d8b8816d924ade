#!/usr/bin/env bash
# Prepares what scripts/gpu_check.sh needs on a GPU machine that cannot reach a package
# registry and lacks llmft's build dependencies: downloads (here, where apt works) into
# .gpu-deps/, which git ignores and the device run carries,
#  - the packages that hold the headers, CMake and pkg-config files and wrappers the build
#    needs (Open MPI, parallel HDF5, OpenBLAS built for OpenMP, Boost.Program_options,
#    doctest, PMIx and hwloc's plugins), and
#  - the packages of every shared library that llmft's built programs load here (the
#    build in LLMFT_BUILD_DIR, default build/, made first by scripts/build.sh), except the
#    C and C++ runtimes and CUDA's libraries, which every such machine has, and
#  - cudnn-frontend's headers (cudnn-frontend/include), where scripts/install_deps.sh
#    fetched them, for the cuDNN attention build.
# gpu_check.sh unpacks them into a prefix of its own there, never into /.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LLMFT_BUILD_DIR:-$root/build}
dir=$root/.gpu-deps
[[ -x $build/llmft ]] || { echo "gpu_deps.sh: build llmft first (scripts/build.sh)" >&2; exit 1; }
for ignored in '/.gpu-deps/' '/.gpu-deps.*/'; do
  grep -qxF "$ignored" "$root/.git/info/exclude" 2> /dev/null ||
    echo "$ignored" >> "$root/.git/info/exclude"
done
build_packages=(
  libopenmpi-dev openmpi-bin openmpi-common libpmix2 libhwloc-plugins
  libhdf5-openmpi-dev libhdf5-openmpi-103-1 libopenblas-openmp-dev libopenblas-dev
  libboost-program-options1.74-dev libboost1.74-dev libboost-program-options-dev doctest-dev
  libgomp1
  # What Open MPI's transport plugins load (each one missing is a warning at every start).
  libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200
  libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1 libpciaccess0 libxnvctrl0
)
# The package of each library the programs load, as ldd resolves it here (a library under
# /usr/lib may be registered under /lib, which merged /usr links to it).
package_of() {
  [[ $1 == /usr/local/cuda* ]] && return  # the toolkit's, on the GPU machine too
  dpkg -S "$1" 2> /dev/null || dpkg -S "${1#/usr}" 2> /dev/null || echo "unowned: $1" >&2
}
programs=("$build/llmft" "$build/tests/cuda_tests" "$build/bench/bench_gpu_step")
[[ -x $build/tests/nccl_tests ]] && programs+=("$build/tests/nccl_tests")
runtime_packages=$(ldd "${programs[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
  sort -u | xargs -r realpath | while read -r lib; do package_of "$lib"; done |
  cut -d: -f1 | sort -u | { grep -vxE 'libc6|libgcc-s1|libstdc\+\+6' || true; })
[[ $(id -u) -eq 0 ]] && sudo_cmd=() || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
# Into a fresh folder that replaces the old one only once every package has come.
fresh=$(mktemp -d "$root/.gpu-deps.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
# shellcheck disable=SC2086  # one package per word
(cd "$fresh" && apt-get download -qq "${build_packages[@]}" $runtime_packages)
frontend=${LLMFT_CUDNN_FRONTEND:-$HOME/.cache/llmft/cudnn-frontend}
if [[ -f $frontend/include/cudnn_frontend.h ]]; then
  mkdir "$fresh/cudnn-frontend"
  cp -r "$frontend/include" "$fresh/cudnn-frontend/include"
else
  echo "gpu_deps.sh: no cudnn-frontend headers in $frontend (scripts/install_deps.sh fetches them): the GPU build will run attention on llmft's own kernels" >&2
fi
rm -rf "$dir"
mv "$fresh" "$dir"
chmod 755 "$dir"
echo "$(ls "$dir"/*.deb | wc -l) packages, $(du -sh "$dir" | cut -f1), in $dir"
