#include "parallel/memory_model.h"

#include <algorithm>
#include <vector>

#include "core/allocator.h"
#include "core/model_factory.h"
#include "optim/adalomo.h"
#include "parallel/memory_timeline.h"
#include "parallel/shard.h"

namespace llmft {

namespace {

size_t f32_bytes(int64_t elements) {
  return rounded_allocation(static_cast<size_t>(elements) * 4);
}

// Bytes of the per-micro-batch buffers, each rounded as allocated.
struct ActivationBytes {
  size_t ids = 0;              // one (B, T) i32 tensor: the inputs or the targets
  size_t hidden = 0;           // one (N, C) f32 tensor: embedding output, block output,
                               // the residual gradient, the head's d final norm
  size_t block_internals = 0;  // what a block keeps for backward besides its output
  size_t final_norm = 0;       // the head's norm output and statistics
  size_t logits = 0;           // this rank's vocabulary columns
  size_t loss_stats = 0;       // the cross-entropy's per-row statistics
  size_t forward_temp = 0;     // a block's forward temporary (GELU / SwiGLU output)
  size_t backward_temp = 0;    // a block's backward temporaries
};

ActivationBytes activation_bytes(const ModelConfig& c, int64_t B, int64_t T, int tp) {
  // This tensor-parallel rank's widths: its heads, MLP columns and vocabulary rows.
  const int64_t N = B * T, C = c.hidden, I = c.intermediate / tp, V = tp_rows(c.vocab_size, tp);
  const int64_t H = c.n_head / tp, A = H * c.head_dim();
  const int64_t W = (H + 2 * static_cast<int64_t>(c.n_kv_head / tp)) * c.head_dim();
  const bool gpt2 = c.family == ModelFamily::gpt2;
  // A norm keeps its output and rstd (and LayerNorm its mean).
  const size_t norm = f32_bytes(N * C) + (gpt2 ? 2 : 1) * f32_bytes(N);
  ActivationBytes a;
  a.ids = rounded_allocation(static_cast<size_t>(N) * 4);
  a.hidden = f32_bytes(N * C);
  // Both: 2 norms, qkv, attention output and lse, attention residual; then the MLP input
  // (GPT-2: c_fc output (N, I); LLaMA: gate/up (N, 2I)).
  a.block_internals = 2 * norm + f32_bytes(N * W) + f32_bytes(N * A) + f32_bytes(B * H * T) +
                      f32_bytes(N * C) + f32_bytes(N * (gpt2 ? I : 2 * I));
  a.final_norm = norm;
  a.logits = f32_bytes(N * V);
  a.loss_stats = f32_bytes(3 * N);
  a.forward_temp = f32_bytes(N * I);
  a.backward_temp = gpt2 ? f32_bytes(N * std::max(I, W)) + f32_bytes(N * C)
                         : f32_bytes(N * I) + f32_bytes(N * std::max(2 * I, W)) + f32_bytes(N * C);
  return a;
}

constexpr auto kParams = MemoryCategory::params;
constexpr auto kMaster = MemoryCategory::master_params;
constexpr auto kGrads = MemoryCategory::grads;
constexpr auto kState = MemoryCategory::optimizer_state;
constexpr auto kActs = MemoryCategory::activations;
constexpr auto kWork = MemoryCategory::workspace;
constexpr auto kComm = MemoryCategory::comm_buffers;

// One rank's step, replayed allocation by allocation in the Engine's and the model's order.
class StepReplay {
 public:
  StepReplay(const ModelConfig& c, const RunShape& shape)
      : c_(c),
        shape_(shape),
        units_(unit_layouts(c, TpSlice{shape.tp_rank, shape.tp})),
        a_(activation_bytes(c, shape.micro_batch, shape.seq_len, shape.tp)),
        width_(dtype_size(shape.dtype)),
        copies_(shape.dtype != DType::f32),
        fused_(is_fused(shape.optimizer.kind)),
        lomo_scatter_(fused_reduce_scatters(shape.optimizer.kind, shape.zero_stage)),
        transient_(fused_ || shape.zero_stage >= 2),
        held_(units_.size(), false),
        gathering_(units_.size(), false),
        acquired_(units_.size(), false) {
    for (const UnitLayout& u : units_)
      shards_.push_back(shard_layout(u.numel, shape.ranks, shape.rank));
  }

  MemoryPrediction run() {
    persistent();
    t_.set_phase("forward");
    t_.take(kActs, a_.ids);
    t_.take(kActs, a_.ids);
    for (int u = 0; u < head() + 1; ++u) forward_unit(u);
    if (fused_ && (shape_.clip_grad || shape_.dtype == DType::f16))
      backward("norm pass: ", true, false);
    backward("", false, true);
    t_.clear(kActs);
    if (!fused_) update();
    MemoryPrediction out;
    out.peak_by_category = t_.usage().peak_by_category();
    out.at_peak = t_.usage().at_total_peak();
    out.peak_total = t_.usage().total_peak();
    out.peak_phase = t_.peak_phase();
    return out;
  }

 private:
  int head() const { return c_.n_layer + 1; }
  std::vector<int> read_by(int u) const {
    if (u == head() && c_.tie_embeddings) return {u, 0};
    return {u};
  }
  size_t numel(int u) const { return static_cast<size_t>(units_[u].numel); }
  size_t padded(int u) const { return static_cast<size_t>(shards_[u].padded); }
  size_t shard(int u) const { return static_cast<size_t>(shards_[u].shard); }
  // The part of unit u this rank's optimizer updates.
  size_t span(int u) const {
    return static_cast<size_t>(
        update_span(shape_.optimizer.kind, shape_.zero_stage, shards_[u]).size());
  }

  void persistent() {
    t_.set_phase("weights and optimizer state");
    const int z = shape_.zero_stage;
    for (int u = 0; u <= head(); ++u) {
      switch (shape_.optimizer.kind) {
        case OptimizerKind::adamw:
          t_.take(kState, span(u) * 4);
          t_.take(kState, span(u) * 4);
          break;
        case OptimizerKind::sgd:
          if (shape_.optimizer.momentum != 0.0f) t_.take(kState, span(u) * 4);
          break;
        case OptimizerKind::adalomo:
          t_.take(kState, f32_bytes(adalomo_state_floats(units_[u])));
          break;
        case OptimizerKind::lomo:
          break;
      }
    }
    if (shape_.optimizer.kind == OptimizerKind::adalomo) {
      t_.take(kState, f32_bytes(adalomo_scratch_floats(units_)));
    }
    for (int u = 0; u <= head(); ++u) {
      t_.take(kParams, (z == 3 ? shard(u) : padded(u)) * width_);
      if (!fused_) {
        t_.take(kGrads, (z >= 2 ? shard(u) : (z == 1 ? padded(u) : numel(u))) * width_);
        if (copies_) t_.take(kMaster, span(u) * 4);
      }
    }
    t_.take(MemoryCategory::other, 4);  // the loss accumulator
    t_.take(MemoryCategory::other, 8);  // the engine's scalars
  }

  // ZeRO-3: the gathers of a unit's weights start one unit ahead (prefetch).
  void prefetch_params(int u) {
    if (shape_.zero_stage != 3 || u < 0 || u > head()) return;
    for (int x : read_by(u)) {
      if (gathering_[x] || acquired_[x]) continue;
      gathering_[x] = true;
      t_.take(kComm, padded(x) * width_);
    }
  }
  void acquire_params(int u) {
    prefetch_params(u);
    for (int x : read_by(u)) {
      gathering_[x] = false;
      acquired_[x] = true;
      if (copies_) {
        t_.take(kWork, numel(x) * 4);
        if (shape_.zero_stage == 3) t_.give_back(kComm, padded(x) * width_);
      }
    }
  }
  void release_params(int u) {
    for (int x : read_by(u)) {
      acquired_[x] = false;
      if (copies_) {
        t_.give_back(kWork, numel(x) * 4);
      } else if (shape_.zero_stage == 3) {
        t_.give_back(kComm, padded(x) * width_);
      }
    }
  }
  void acquire_grads(int u) {
    if (!transient_ && !copies_) return;
    for (int x : read_by(u)) {
      if (held_[x]) continue;
      held_[x] = true;
      if (transient_) {
        t_.take(kGrads, padded(x) * 4);
      } else {
        t_.take(kWork, numel(x) * 4);
      }
    }
  }
  void release_grad(int x) {
    if (!held_[x]) return;
    held_[x] = false;
    if (transient_) {
      t_.give_back(kGrads, padded(x) * 4);
    } else {
      t_.give_back(kWork, numel(x) * 4);
    }
  }
  // After unit x's gradient is complete: its reduction (and a fused update).
  void gradient_done(int x, bool update) {
    const int z = shape_.zero_stage;
    if (!fused_ ? z >= 2 : lomo_scatter_) {
      t_.take(kComm, shard(x) * 4);  // this rank's reduce-scattered shard
      if (fused_ && update && z == 2) {
        t_.take(kComm, shard(x) * width_);  // the weight shard sent to the all-gather
        t_.give_back(kComm, shard(x) * width_);
      }
      t_.give_back(kComm, shard(x) * 4);
    } else if (fused_ && update && z == 3) {
      t_.take(kComm, padded(x) * width_);  // AdaLomo gathers the whole unit to update it
      t_.give_back(kComm, padded(x) * width_);
    }
    release_grad(x);
  }

  void block_forward() {
    t_.take(kActs, a_.block_internals);
    t_.take(kWork, a_.forward_temp);
    t_.take(kActs, a_.hidden);
    t_.give_back(kWork, a_.forward_temp);
  }

  void forward_unit(int u) {
    acquire_params(u);
    prefetch_params(u + 1);
    if (u == 0) {
      t_.take(kActs, a_.hidden);
    } else if (u == head()) {
      t_.take(kActs, a_.final_norm);
      t_.take(kActs, a_.logits);
      t_.take(kWork, a_.loss_stats);
      t_.give_back(kWork, a_.loss_stats);
    } else {
      block_forward();
      if (shape_.activation_checkpointing) t_.give_back(kActs, a_.block_internals);
    }
    release_params(u);
  }

  void backward(const std::string& pass, bool keep, bool update) {
    internals_present_ = !shape_.activation_checkpointing;
    for (int u = head(); u >= 0; --u) {
      acquire_params(u);
      prefetch_params(u - 1);
      acquire_grads(u);
      if (u == head()) {
        t_.set_phase(pass + "backward of the head");
        t_.take(kWork, a_.hidden);  // the residual gradient
        t_.take(kWork, a_.hidden);  // d final norm
        if (!keep) {
          t_.give_back(kActs, a_.logits);
          t_.give_back(kActs, a_.final_norm);
        }
        t_.give_back(kWork, a_.hidden);
      } else if (u == 0) {
        t_.set_phase(pass + "backward of the embedding");
        t_.give_back(kWork, a_.hidden);
        if (!keep) t_.give_back(kActs, a_.hidden);
      } else {
        t_.set_phase(pass + "backward of block " + std::to_string(u - 1));
        if (!internals_present_) {
          t_.give_back(kActs, a_.hidden);  // the output goes, then the block is recomputed
          block_forward();
        }
        t_.take(kWork, a_.backward_temp);
        t_.give_back(kWork, a_.backward_temp);
        if (!keep) {
          t_.give_back(kActs, a_.block_internals + a_.hidden);
        } else if (shape_.activation_checkpointing) {
          t_.give_back(kActs, a_.block_internals);
        }
      }
      release_params(u);
      for (int x : read_by(u)) {
        if (x == u) gradient_done(x, update);
      }
    }
  }

  void update() {
    t_.set_phase("optimizer update");
    const int z = shape_.zero_stage;
    if (z == 1) {
      for (int u = 0; u <= head(); ++u) t_.take(kComm, shard(u) * width_);  // gradient shards
    }
    if (z == 1 || z == 2) {
      for (int u = 0; u <= head(); ++u) {
        t_.take(kComm, shard(u) * width_);  // the weight shard sent to the all-gather
        t_.give_back(kComm, shard(u) * width_);
      }
    }
    t_.clear(kComm);
  }

  const ModelConfig& c_;
  RunShape shape_;
  std::vector<UnitLayout> units_;
  std::vector<ShardLayout> shards_;
  ActivationBytes a_;
  size_t width_;
  bool copies_, fused_, lomo_scatter_, transient_;
  std::vector<bool> held_, gathering_, acquired_;
  bool internals_present_ = true;
  MemoryTimeline t_;
};

}  // namespace

MemoryPrediction predict_memory(const ModelConfig& c, const RunShape& shape) {
  RunShape effective = shape;
  if (shape.ranks == 1) effective.zero_stage = 0;  // as the Engine: nothing to shard across
  return StepReplay(c, effective).run();
}

}  // namespace llmft
