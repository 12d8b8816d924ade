#include "parallel/memory_model.h"

#include <algorithm>
#include <vector>

#include "core/allocator.h"
#include "core/model_factory.h"
#include "optim/adalomo.h"

namespace llmft {

namespace {

size_t f32_bytes(int64_t elements) {
  return rounded_allocation(static_cast<size_t>(elements) * 4);
}

// Bytes of the per-micro-batch buffers, each rounded as allocated.
struct ActivationBytes {
  size_t tokens = 0;           // input and target ids
  size_t hidden = 0;           // one (N, C) f32 tensor: embedding output, block output
  size_t block_internals = 0;  // what a block keeps for backward besides its output
  size_t head = 0;             // final norm output and statistics, logits
  size_t forward_temp = 0;     // a block's forward temporary (GELU / SwiGLU output)
  size_t backward_temp = 0;    // a block's backward temporaries
  size_t head_backward = 0;    // the head's backward temporary (d final norm)
};

ActivationBytes activation_bytes(const ModelConfig& c, int64_t B, int64_t T) {
  const int64_t N = B * T, C = c.hidden, I = c.intermediate, V = c.vocab_size;
  const int64_t W = C + 2 * static_cast<int64_t>(c.n_kv_head) * c.head_dim();
  const bool gpt2 = c.family == ModelFamily::gpt2;
  // A norm keeps its output and rstd (and LayerNorm its mean).
  const size_t norm = f32_bytes(N * C) + (gpt2 ? 2 : 1) * f32_bytes(N);
  ActivationBytes a;
  a.tokens = 2 * rounded_allocation(static_cast<size_t>(N) * 4);
  a.hidden = f32_bytes(N * C);
  // Both: 2 norms, qkv, attention output and lse, attention residual; then the MLP input
  // (GPT-2: c_fc output (N, I); LLaMA: gate/up (N, 2I)).
  a.block_internals = 2 * norm + f32_bytes(N * W) + f32_bytes(N * C) + f32_bytes(B * c.n_head * T) +
                      f32_bytes(N * C) + f32_bytes(N * (gpt2 ? I : 2 * I));
  a.head = norm + f32_bytes(N * V);
  a.forward_temp = f32_bytes(N * I);
  a.backward_temp = gpt2 ? f32_bytes(N * std::max(I, W)) + f32_bytes(N * C)
                         : f32_bytes(N * I) + f32_bytes(N * std::max(2 * I, W)) + f32_bytes(N * C);
  a.head_backward = f32_bytes(N * C);
  return a;
}

struct Phase {
  std::string name;
  CategoryBytes bytes{};
};

}  // namespace

MemoryPrediction predict_memory(const ModelConfig& c, const RunShape& shape) {
  const std::vector<UnitLayout> units = unit_layouts(c);
  const int U = static_cast<int>(units.size()), L = c.n_layer, head_unit = L + 1;
  const size_t width = dtype_size(shape.dtype);
  const bool copies = shape.dtype != DType::f32;  // f32 working weights per unit
  const OptimizerKind kind = shape.optimizer.kind;
  const bool fused = kind == OptimizerKind::lomo || kind == OptimizerKind::adalomo;
  auto add = [](CategoryBytes& b, MemoryCategory cat, size_t bytes) { b[index_of(cat)] += bytes; };

  CategoryBytes persistent{};
  std::vector<size_t> f32_unit(U);  // an f32 copy of a unit (working weights or gradients)
  for (int u = 0; u < U; ++u) {
    const size_t n = static_cast<size_t>(units[u].numel);
    f32_unit[u] = rounded_allocation(n * 4);
    add(persistent, MemoryCategory::params, rounded_allocation(n * width));
    if (!fused) {
      add(persistent, MemoryCategory::grads, rounded_allocation(n * width));
      if (copies) add(persistent, MemoryCategory::master_params, f32_unit[u]);
    }
    size_t state = 0;
    if (kind == OptimizerKind::adamw) state = 2 * f32_unit[u];
    if (kind == OptimizerKind::sgd && shape.optimizer.momentum != 0.0f) state = f32_unit[u];
    if (kind == OptimizerKind::adalomo) state = f32_bytes(adalomo_state_floats(units[u]));
    add(persistent, MemoryCategory::optimizer_state, state);
  }
  add(persistent, MemoryCategory::other, 2 * f32_bytes(1));  // loss and norm scalars

  const ActivationBytes a = activation_bytes(c, shape.micro_batch, shape.seq_len);
  const size_t full_block = a.block_internals + a.hidden;
  // What a finished block keeps until its backward.
  const size_t kept_block = shape.activation_checkpointing ? a.hidden : full_block;
  // The units a unit reads: itself, and unit 0 for a tied head.
  auto read_by = [&](int u) {
    return f32_unit[u] + (u == head_unit && c.tie_embeddings ? f32_unit[0] : 0);
  };
  // The tied embedding's gradient lives from the head's backward to unit 0's.
  const size_t tied = c.tie_embeddings ? f32_unit[0] : 0;
  // Backward of unit u: working weights (16-bit storage), and f32 gradients: working
  // ones summed into the stored gradient (workspace), or a fused optimizer's transient
  // ones (grads). `extra` is a gradient still held for a later unit.
  auto weights = [&](int u) { return copies ? read_by(u) : size_t{0}; };
  auto working_grads = [&](int u, size_t extra) {
    return !fused && copies ? read_by(u) + extra : size_t{0};
  };
  auto transient_grads = [&](int u, size_t extra) {
    return fused ? read_by(u) + extra : size_t{0};
  };

  std::vector<Phase> phases;
  auto phase = [&](const std::string& name, size_t activations, size_t workspace, size_t grads) {
    Phase p{name, persistent};
    add(p.bytes, MemoryCategory::activations, activations);
    add(p.bytes, MemoryCategory::workspace, workspace);
    add(p.bytes, MemoryCategory::grads, grads);
    phases.push_back(p);
  };
  const size_t base = a.tokens + a.hidden;  // ids and the embedding output
  phase("forward of the embedding", base, weights(0), 0);
  // A block's forward peaks at its temporary, before its output is taken.
  phase("forward of the last block", base + (L - 1) * kept_block + a.block_internals,
        weights(1) + a.forward_temp, 0);
  const size_t end_of_forward = base + L * kept_block + a.head;
  phase("forward of the head", end_of_forward, weights(head_unit), 0);
  // Backward, as the last (or only) pass: activations fall unit by unit.
  auto backward_phases = [&](const std::string& pass, size_t held_for_block) {
    phase(pass + "backward of the head", end_of_forward,
          weights(head_unit) + working_grads(head_unit, 0) + a.hidden + a.head_backward,
          transient_grads(head_unit, 0));
    const size_t block_tied = c.tie_embeddings ? tied : 0;
    phase(pass + "backward of the last block", held_for_block,
          weights(1) + working_grads(1, block_tied) + a.hidden + a.backward_temp,
          transient_grads(1, block_tied));
  };
  // Fused optimizers with clipping or fp16 first run a norm pass that keeps every
  // activation (checkpointed blocks recompute their internals).
  if (fused && (shape.clip_grad || shape.dtype == DType::f16)) {
    const size_t recomputed = shape.activation_checkpointing ? a.block_internals : 0;
    backward_phases("norm pass: ", end_of_forward + recomputed);
    phase("norm pass: backward of the embedding", end_of_forward, weights(0) + a.hidden,
          transient_grads(0, 0));
  }
  // The last block's backward holds every earlier block, its own activations
  // (recomputed under checkpointing), the residual gradient and its temporaries.
  backward_phases("", base + (L - 1) * kept_block + full_block);
  phase("backward of the embedding", base, weights(0) + working_grads(0, 0) + a.hidden,
        transient_grads(0, 0));

  MemoryPrediction out;
  for (const Phase& p : phases) {
    for (int i = 0; i < kMemoryCategoryCount; ++i) {
      out.peak_by_category[i] = std::max(out.peak_by_category[i], p.bytes[i]);
    }
    const size_t total = total_bytes(p.bytes);
    if (total > out.peak_total) {
      out.peak_total = total;
      out.at_peak = p.bytes;
      out.peak_phase = p.name;
    }
  }
  return out;
}

}  // namespace llmft
