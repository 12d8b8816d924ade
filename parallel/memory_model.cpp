#include "parallel/memory_model.h"

#include <algorithm>
#include <vector>

#include "core/allocator.h"
#include "core/error.h"

namespace llmft {

namespace {

size_t f32_bytes(int64_t elements) {
  return rounded_allocation(static_cast<size_t>(elements) * 4);
}

// Unit sizes (elements) of the GPT-2 family, in unit order.
std::vector<int64_t> gpt2_unit_sizes(const ModelConfig& c) {
  const int64_t C = c.hidden, I = c.intermediate;
  const int64_t qkv = C + 2 * static_cast<int64_t>(c.n_kv_head) * c.head_dim();
  std::vector<int64_t> sizes;
  sizes.push_back(static_cast<int64_t>(c.vocab_size) * C + static_cast<int64_t>(c.max_seq_len) * C);
  const int64_t block = 4 * C + qkv * C + qkv + C * C + C + I * C + I + C * I + C;
  for (int l = 0; l < c.n_layer; ++l) sizes.push_back(block);
  sizes.push_back(2 * C);
  return sizes;
}

// One phase of the step: the bytes live in each category at its highest point.
struct Phase {
  std::string name;
  CategoryBytes bytes{};
};

}  // namespace

MemoryPrediction predict_memory(const ModelConfig& c, const RunShape& shape) {
  LLMFT_REQUIRE(c.family == ModelFamily::gpt2,
                "the memory model does not cover the " << family_name(c.family) << " family yet");
  const int64_t B = shape.micro_batch, T = shape.seq_len, N = B * T;
  const int64_t C = c.hidden, I = c.intermediate, V = c.vocab_size;
  const int64_t qkv = C + 2 * static_cast<int64_t>(c.n_kv_head) * c.head_dim();

  CategoryBytes persistent{};
  auto add = [](CategoryBytes& b, MemoryCategory cat, size_t bytes) { b[index_of(cat)] += bytes; };
  for (int64_t size : gpt2_unit_sizes(c)) {
    add(persistent, MemoryCategory::params, f32_bytes(size));
    add(persistent, MemoryCategory::grads, f32_bytes(size));
    const OptimizerConfig& o = shape.optimizer;
    int states = o.kind == OptimizerKind::adamw ? 2 : (o.momentum != 0.0f ? 1 : 0);
    add(persistent, MemoryCategory::optimizer_state, states * f32_bytes(size));
  }
  add(persistent, MemoryCategory::other, 2 * f32_bytes(1));  // loss and norm scalars

  // Activations kept for backward.
  const size_t tokens = 2 * f32_bytes(N);  // inputs and targets (i32)
  const size_t embedding = f32_bytes(N * C);
  const size_t block = 5 * f32_bytes(N * C) + 4 * f32_bytes(N) + f32_bytes(N * qkv) +
                       f32_bytes(B * c.n_head * T) + f32_bytes(N * I);
  const size_t head = f32_bytes(N * C) + 2 * f32_bytes(N) + f32_bytes(N * V);
  const size_t blocks = block * c.n_layer;

  // Workspace of each phase.
  const size_t gelu = f32_bytes(N * I);
  const size_t stream = f32_bytes(N * C);
  const size_t block_backward = f32_bytes(N * std::max(I, qkv)) + f32_bytes(N * C);

  std::vector<Phase> phases;
  auto phase = [&](const std::string& name, size_t activations, size_t workspace) {
    Phase p{name, persistent};
    add(p.bytes, MemoryCategory::activations, activations);
    add(p.bytes, MemoryCategory::workspace, workspace);
    phases.push_back(p);
  };
  // Last block's forward, just before its output is taken (the GELU temporary is live).
  phase("forward of the last block", tokens + embedding + blocks - f32_bytes(N * C), gelu);
  phase("end of forward", tokens + embedding + blocks + head, 0);
  phase("backward of the head", tokens + embedding + blocks + head, 2 * stream);
  phase("backward of the last block", tokens + embedding + blocks, stream + block_backward);

  MemoryPrediction out;
  for (const Phase& p : phases) {
    for (int i = 0; i < kMemoryCategoryCount; ++i) {
      out.peak_by_category[i] = std::max(out.peak_by_category[i], p.bytes[i]);
    }
    size_t total = total_bytes(p.bytes);
    if (total > out.peak_total) {
      out.peak_total = total;
      out.at_peak = p.bytes;
      out.peak_phase = p.name;
    }
  }
  return out;
}

}  // namespace llmft
