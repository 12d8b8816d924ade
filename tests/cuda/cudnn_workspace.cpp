// cuDNN attention's backward workspace against its stated bound
// (core/attention_workspace.h, which the memory model charges and the backend hands
// cuDNN): at the attention shapes of the models gpu_check runs, what cuDNN's chosen plans
// ask for, forward and backward (deterministic and not), beside the bound; and the
// deterministic backward taken in chunks of rows against our own kernels, row by row.
// Printed for scripts/gpu_check.sh's log. Built only with cuDNN; skipped (77) without a
// GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/backend_registry.h"
#include "core/cuda/cudnn_attention.h"
#include "core/host_convert.h"
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

// bf16 values of N(0, 1) as the device stores them, and the same rounded values in f32.
struct Values {
  std::vector<uint8_t> stored;
  std::vector<float> rounded;
};

Values random_bf16(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = normal(rng);
  Values out{to_dtype_bytes(values.data(), n, DType::bf16), {}};
  out.rounded = from_dtype_bytes(out.stored, DType::bf16);
  return out;
}

// One backend's attention over given inputs: forward, then backward with the workspace
// it asks for; returns dqkv.
std::vector<float> attention_gradient(const AttentionShape& s, const Values& qkv,
                                      const Values& dout, const std::vector<int32_t>& positions) {
  auto backend = make_backend("cuda", NodePlacement{}, size_t{4} << 30);
  Allocator alloc(backend->memory(), 0);
  const int64_t W = (s.H + 2 * s.KVH) * s.D;
  std::vector<Buffer> buffers;
  auto take = [&](DType dtype, Shape shape) {
    buffers.push_back(alloc.allocate(shape_numel(shape) * dtype_size(dtype), MemoryCategory::other,
                                     "attention test tensor"));
    return buffers.back().as(dtype, std::move(shape));
  };
  const Tensor q = take(DType::bf16, {s.B, s.T, W}), dq = take(DType::bf16, {s.B, s.T, W});
  const Tensor out = take(DType::bf16, {s.B, s.T, s.H * s.D});
  const Tensor d_out = take(DType::bf16, {s.B, s.T, s.H * s.D});
  const Tensor lse = take(DType::f32, {s.B, s.H, s.T}), pos = take(DType::i32, {s.B, s.T});
  backend->copy_to_device(q, qkv.stored.data());
  backend->copy_to_device(d_out, dout.stored.data());
  backend->copy_to_device(pos, positions.data());
  const int H = static_cast<int>(s.H), KVH = static_cast<int>(s.KVH);
  const size_t bytes = backend->attention_backward_workspace(q, pos, H, KVH);
  const Tensor workspace =
      bytes == 0 ? Tensor() : take(DType::f32, {static_cast<int64_t>(bytes / sizeof(float))});
  backend->attention_forward(out, lse, q, pos, H, KVH, 0);
  backend->attention_backward(dq, d_out, q, out, lse, pos, H, KVH, workspace);
  std::vector<uint8_t> result(dq.bytes());
  backend->copy_to_host(result.data(), dq);
  return from_dtype_bytes(result, DType::bf16);
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
    cudnn_grad = attention_gradient(s, qkv, dout, positions);
  }
  {
    ScopedEnvironment off{"LLMFT_CUDNN_ATTENTION", "off"};
    own_grad = attention_gradient(s, qkv, dout, positions);
  }
  const auto row = static_cast<size_t>(s.T * W);
  for (int64_t b = 0; b < s.B; ++b) {
    double gap = 0, scale = 0;
    for (size_t i = static_cast<size_t>(b) * row; i < static_cast<size_t>(b + 1) * row; ++i) {
      gap += (double(cudnn_grad[i]) - own_grad[i]) * (double(cudnn_grad[i]) - own_grad[i]);
      scale += double(own_grad[i]) * own_grad[i];
    }
    CAPTURE(b);
    const double error = std::sqrt(gap / scale);
    MESSAGE("row " << b << ": relative L2 between cuDNN and our kernels " << error);
    CHECK(error <= 4e-2);
  }
}

}  // namespace
}  // namespace llmft::cuda
