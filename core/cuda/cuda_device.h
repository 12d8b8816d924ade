// Which GPU a rank runs on, and the clear errors when there is none to run on. One GPU
// per rank: `--device cuda` takes the node-local rank's GPU (ranks are counted per node
// by the launcher), `--device cuda:N` GPU N. More ranks on a node than GPUs is refused
// unless the user lets ranks share GPUs (each then gets its share of the memory).
#pragma once

#include <string>

#include "core/node_placement.h"

namespace llmft {

// "" when this process sees a CUDA device; else why not (no driver, no device).
std::string cuda_unavailable_reason();

// The GPUs this process sees. Throws llmft::Error with the reason and what to do when
// there is no driver (cudaErrorInsufficientDriver, 35) or no device (100).
int cuda_device_count();

// The GPU index for `spec` ("cuda" or "cuda:N") on this rank; see above.
int select_cuda_device(const std::string& spec, const NodePlacement& placement);

}  // namespace llmft
