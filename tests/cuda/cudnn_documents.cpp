// cuDNN's attention over packed documents (ragged offsets and a padding mask,
// core/cuda/cudnn_attention.h) against our kernels on the same GPU and inputs: out, the
// softmax statistics and dqkv, document by document. Built only with cuDNN; skipped (77)
// without a GPU.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "core/attention_documents.h"
#include "tests/cuda/attention_runs.h"
#include "tests/support/scoped_environment.h"

namespace llmft::cuda {
namespace {

// The major compute capability the CUDA backend describes ("..., compute capability M.m").
int compute_capability_major() {
  const std::string described = make_backend("cuda:0")->describe();
  const size_t at = described.find("compute capability ");
  REQUIRE(at != std::string::npos);
  return std::stoi(described.substr(at + 19));
}

// Our kernels' lse(B, H, T) in cuDNN's packed token-major order, lse[(b T + t) H + h].
std::vector<float> token_major(const std::vector<float>& lse, const AttentionShape& s) {
  std::vector<float> out(lse.size());
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < s.H; ++h) {
      for (int64_t t = 0; t < s.T; ++t) out[(b * s.T + t) * s.H + h] = lse[(b * s.H + h) * s.T + t];
    }
  }
  return out;
}

// TinyLlama's heads (32 query heads over 4 kv heads of 64), two rows of 1024 packed with
// samples of 300, 1, 500 and 223 tokens, and 700 and 324 (the padding after a window's
// last sample is a document like the others). The deterministic backward's bound for the
// two rows does not hold the six documents padded to 8 x 512, so it takes them in more
// than one call, and the calls' padding documents are empty.
//
// Bounds: out and dqkv within 4e-2 relative L2 per document, as for rows
// (cudnn_workspace.cpp: both round the probabilities and dS to bf16 before their
// products); the statistics are f32 log-sum-exps of the same bf16 products, apart only by
// f32 rounding in a different order, so within 1e-4 (a document read at a wrong offset
// would be off by its whole size).
TEST_CASE("cuDNN attention over packed documents agrees with our kernels per document") {
  const AttentionShape s{DType::bf16, 2, 1024, 32, 4, 64};
  const std::vector<std::vector<int>> rows{{300, 1, 500, 223}, {700, 324}};
  std::vector<int32_t> positions;
  for (const auto& lengths : rows) {
    for (const int length : lengths) {
      for (int p = 0; p < length; ++p) positions.push_back(p);
    }
  }
  const auto documents = attention_documents(positions.data(), s.B, s.T);
  REQUIRE(documents.has_value());
  REQUIRE(documents->size() == 6);
  constexpr auto kDeterministic = AttentionWorkspaceRule::cudnn_deterministic;
  const size_t budget = attention_backward_workspace_bytes(kDeterministic, s);
  CHECK(document_chunks(*documents, kDeterministic, s, budget).size() > 1);

  std::mt19937_64 rng(11);
  const int64_t W = (s.H + 2 * s.KVH) * s.D;
  const Values qkv = random_bf16(s.B * s.T * W, rng);
  const Values dout = random_bf16(s.B * s.T * s.H * s.D, rng);
  AttentionRun cudnn, own;
  {
    ScopedEnvironment on{"LLMFT_CUDNN_ATTENTION", "on"};
    cudnn = run_attention(s, qkv, dout, positions);
  }
  {
    ScopedEnvironment off{"LLMFT_CUDNN_ATTENTION", "off"};
    own = run_attention(s, qkv, dout, positions);
  }
  // Where cuDNN ran the documents its statistics are token-major; where it declined (before
  // Hopper), our kernels ran both and wrote the same lse.
  const double packed_gap = relative_l2(cudnn.lse, token_major(own.lse, s));
  const bool cudnn_ran = packed_gap <= 1e-4;
  MESSAGE("cuDNN " << std::string(cudnn_ran ? "ran" : "declined") << " the packed documents; lse "
                   << packed_gap << " from ours in its order");
  if (compute_capability_major() >= 9) CHECK(cudnn_ran);
  if (!cudnn_ran) CHECK(relative_l2(cudnn.lse, own.lse) <= 1e-4);
  for (const AttentionDocument& d : *documents) {
    CAPTURE(d.first_token);
    CAPTURE(d.length);
    const int64_t out_width = s.H * s.D;
    const double out_error =
        relative_l2(slice(cudnn.out, d.first_token * out_width, d.length * out_width),
                    slice(own.out, d.first_token * out_width, d.length * out_width));
    const double grad_error = relative_l2(slice(cudnn.dqkv, d.first_token * W, d.length * W),
                                          slice(own.dqkv, d.first_token * W, d.length * W));
    MESSAGE("document at " << d.first_token << " of " << d.length << ": out " << out_error
                           << ", dqkv " << grad_error);
    CHECK(out_error <= 4e-2);
    CHECK(grad_error <= 4e-2);
  }
}

}  // namespace
}  // namespace llmft::cuda
