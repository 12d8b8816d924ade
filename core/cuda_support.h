// What llmft's CUDA backend needs of a GPU, known to the backend (which refuses others)
// and to the planner (which says when a preset's GPUs could not run it).
#pragma once

#include <string>

namespace llmft {

// 10 x major + minor: Ampere (8.0) or later, for the bf16 tensor-core kernels.
constexpr int kMinimumCudaComputeCapability = 80;

// "M.m" for 10 x M + m.
inline std::string compute_capability_text(int capability) {
  return std::to_string(capability / 10) + "." + std::to_string(capability % 10);
}

}  // namespace llmft
