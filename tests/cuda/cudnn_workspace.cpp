// cuDNN attention's workspace against its stated bound (CudnnAttention::kWorkspaceBytes,
// which the backend allocates once and counts in its fixed overhead): at the attention
// shapes of the models gpu_check runs, what cuDNN's chosen plans ask for, forward and
// backward (deterministic and not), or why cuDNN declines the call (then our kernels run
// it). Printed for scripts/gpu_check.sh's log. Built only with cuDNN; skipped (77)
// without a GPU.
#include <doctest/doctest.h>

#include <string>

#include "core/cuda/cudnn_attention.h"

namespace llmft::cuda {
namespace {

// "N bytes", or why cuDNN declines the call (our kernels then run it).
std::string needed_text(CudnnAttention& cudnn, const AttentionDims& d, bool backward) {
  const int64_t bytes = cudnn.workspace_needed(d, backward);
  return bytes < 0 ? "declined (" + cudnn.why_declined(d, backward) + ")"
                   : std::to_string(bytes) + " bytes";
}

TEST_CASE("cuDNN attention's workspace at the benchmarked models' shapes fits the bound") {
  struct Shape {
    const char* model;
    AttentionDims dims;
  };
  const Shape shapes[] = {
      {"tinyllama-1.1b", {DType::bf16, 1, 2048, 32, 4, 64}},
      {"tinyllama-1.1b", {DType::bf16, 4, 2048, 32, 4, 64}},
      {"tinyllama-1.1b", {DType::bf16, 8, 2048, 32, 4, 64}},
      {"llama-7b", {DType::bf16, 1, 2048, 32, 32, 128}},
      {"gpt2", {DType::bf16, 4, 1024, 12, 12, 64}},
      {"gpt2-xl", {DType::bf16, 4, 1024, 25, 25, 64}},
  };
  // Deterministic (the default) and not (LLMFT_CUDNN_ATTENTION=nondeterministic).
  for (const bool deterministic : {true, false}) {
    CAPTURE(deterministic);
    CudnnAttention cudnn(deterministic);
    for (const Shape& s : shapes) {
      const AttentionDims& d = s.dims;
      CAPTURE(s.model);
      const int64_t forward = cudnn.workspace_needed(d, false);
      const int64_t backward = cudnn.workspace_needed(d, true);
      // Strings, not char pointers: doctest prints a const char* as its address.
      MESSAGE(std::string(s.model)
              << " B " << d.B << " T " << d.T << " H " << d.H << " KVH " << d.KVH << " D " << d.D
              << ": forward " << needed_text(cudnn, d, false)
              << std::string(deterministic ? ", backward (deterministic) " : ", backward ")
              << needed_text(cudnn, d, true) << "; bound " << CudnnAttention::kWorkspaceBytes
              << " bytes");
      // Every plan chosen fits the bound (those that do not are never chosen), and cuDNN's
      // forward takes these standard shapes.
      CHECK(forward >= 0);
      CHECK(forward <= static_cast<int64_t>(CudnnAttention::kWorkspaceBytes));
      CHECK(backward <= static_cast<int64_t>(CudnnAttention::kWorkspaceBytes));
    }
  }
}

}  // namespace
}  // namespace llmft::cuda
