// cuDNN attention's backward workspace against its stated bound
// (core/attention_workspace.h, which the memory model charges and the backend hands
// cuDNN): at the attention shapes of the models gpu_check runs, what cuDNN's chosen plans
// ask for, forward and backward (deterministic and not), beside the bound; and the
// deterministic backward taken in chunks of rows against our own kernels, row by row.
// Printed for scripts/gpu_check.sh's log. Built only with cuDNN; skipped (77) without a
// GPU.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "core/cuda/cudnn_attention.h"
#include "tests/cuda/attention_runs.h"
#include "tests/support/scoped_environment.h"

namespace llmft::cuda {
namespace {

// "N bytes", or why cuDNN declines the call (our kernels then run it).
std::string needed_text(CudnnAttention& cudnn, const AttentionShape& d, bool backward) {
  const int64_t bytes = cudnn.workspace_needed(d, backward);
  return bytes < 0 ? "declined (" + cudnn.why_declined(d, backward) + ")"
                   : std::to_string(bytes) + " bytes";
}

TEST_CASE("cuDNN attention's workspace at the benchmarked models' shapes fits the bound") {
  struct Shape {
    const char* model;
    AttentionShape dims;
  };
  const Shape shapes[] = {
      {"tinyllama-1.1b", {DType::bf16, 1, 2048, 32, 4, 64}},
      {"tinyllama-1.1b", {DType::bf16, 4, 2048, 32, 4, 64}},
      {"tinyllama-1.1b", {DType::bf16, 8, 2048, 32, 4, 64}},
      {"llama-7b", {DType::bf16, 1, 2048, 32, 32, 128}},
      {"llama-7b", {DType::bf16, 1, 4096, 32, 32, 128}},
      {"gpt2", {DType::bf16, 4, 1024, 12, 12, 64}},
      {"gpt2-xl", {DType::bf16, 4, 1024, 25, 25, 64}},
  };
  // Deterministic (the default) and not (LLMFT_CUDNN_ATTENTION=nondeterministic).
  for (const bool deterministic : {true, false}) {
    CAPTURE(deterministic);
    CudnnAttention cudnn(deterministic);
    for (const Shape& s : shapes) {
      const AttentionShape& d = s.dims;
      CAPTURE(s.model);
      const size_t bound = attention_backward_workspace_bytes(cudnn.rule(), d);
      // Strings, not char pointers: doctest prints a const char* as its address.
      MESSAGE(std::string(s.model)
              << " B " << d.B << " T " << d.T << " H " << d.H << " KVH " << d.KVH << " D " << d.D
              << ": forward " << needed_text(cudnn, d, false)
              << std::string(deterministic ? ", backward (deterministic) " : ", backward ")
              << needed_text(cudnn, d, true) << " for "
              << attention_backward_chunk_rows(cudnn.rule(), d) << " rows a call; bound " << bound
              << " bytes");
      // cuDNN takes both directions of these standard shapes within the bounds: a plan
      // that needed more would be declined, and its call run on our slower kernels.
      const int64_t forward = cudnn.workspace_needed(d, false);
      const int64_t backward = cudnn.workspace_needed(d, true);
      CHECK(forward >= 0);
      CHECK(forward <= static_cast<int64_t>(CudnnAttention::kForwardWorkspaceBytes));
      CHECK(backward >= 0);
      CHECK(backward <= static_cast<int64_t>(bound));
    }
  }
}

// TinyLlama's heads at 8 x 2048: the deterministic backward's bound at one row is 286 MB,
// so it takes the batch in calls of 3, 3 and 2 rows (kDeterministicChunkBytes 1 GiB). Each
// row's gradient is held against our own kernels on the same inputs: both round the
// probabilities and dS to bf16 before their products (2e-2 relative L2 each against the
// CPU, backend_conformance.cpp), so they agree within twice that; a row read or written at
// the wrong offset would be off by its whole size.
TEST_CASE("cuDNN's deterministic backward in chunks of rows agrees with our kernels per row") {
  const AttentionShape s{DType::bf16, 8, 2048, 32, 4, 64};
  REQUIRE(attention_backward_chunk_rows(AttentionWorkspaceRule::cudnn_deterministic, s) == 3);
  std::mt19937_64 rng(5);
  const int64_t W = (s.H + 2 * s.KVH) * s.D;
  const Values qkv = random_bf16(s.B * s.T * W, rng);
  const Values dout = random_bf16(s.B * s.T * s.H * s.D, rng);
  std::vector<int32_t> positions(static_cast<size_t>(s.B * s.T));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i % s.T);
  std::vector<float> cudnn_grad, own_grad;
  {
    ScopedEnvironment on{"LLMFT_CUDNN_ATTENTION", "on"};
    cudnn_grad = run_attention(s, qkv, dout, positions).dqkv;
  }
  {
    ScopedEnvironment off{"LLMFT_CUDNN_ATTENTION", "off"};
    own_grad = run_attention(s, qkv, dout, positions).dqkv;
  }
  const auto row = static_cast<size_t>(s.T * W);
  for (int64_t b = 0; b < s.B; ++b) {
    CAPTURE(b);
    const double error =
        relative_l2(slice(cudnn_grad, b * row, row), slice(own_grad, b * row, row));
    MESSAGE("row " << b << ": relative L2 between cuDNN and our kernels " << error);
    CHECK(error <= 4e-2);
  }
}

}  // namespace
}  // namespace llmft::cuda
