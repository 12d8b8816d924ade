// Which GPU a rank runs on, and the clear errors when there is none to run on. One GPU
// per rank: `--device cuda` takes the node-local rank's GPU (ranks are counted per node
// by the launcher), `--device cuda:N` GPU N. Two ranks on one GPU are refused unless the
// user lets ranks share GPUs (each then gets its share of the memory).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/node_placement.h"

namespace llmft {

// "" when this process sees a CUDA device; else why not (no driver, no device).
std::string cuda_unavailable_reason();

// "" when this build's kernels run on GPU `device`, the current one, whose properties
// are given; else a line naming the GPU, why not (a compute capability under 8.0, or no
// code for it among the architectures the build has) and what to do.
std::string cuda_device_unsupported_reason(int device, const cudaDeviceProp& properties);

// The CUDA side of this build and machine in one line, for llmft --version: the runtime,
// cuBLASLt and the architectures built for; then the driver and each visible GPU, or why
// there are none. Loads no kernels.
std::string cuda_build_description();

// The GPUs this process sees. Throws llmft::Error with the reason and what to do when
// there is no driver (cudaErrorInsufficientDriver, 35) or no device (100).
int cuda_device_count();

struct CudaPlacement {
  int device = 0;         // the index among the GPUs this process sees
  int ranks_sharing = 1;  // the node's ranks on that GPU (this one included)
};

// The GPU for `spec` ("cuda" or "cuda:N") on this rank. With the node's ranks to compare
// with (placement.node_gather; collective over the node) the physical GPUs they chose are
// compared (PCI bus ids), so ranks that a launcher bound to a GPU each pass; otherwise the
// node's ranks are counted against the GPUs. Two ranks on one GPU are refused unless
// placement.share_devices. Throws llmft::Error saying how to launch.
CudaPlacement place_on_cuda_device(const std::string& spec, const NodePlacement& placement);

}  // namespace llmft
