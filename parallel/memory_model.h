// The memory model: predicts a rank's peak device memory per allocator category from
// the model config and the run's shape alone, before anything is allocated. It replays
// the step's timeline on a MemoryTimeline — weights, gradients and optimizer state as
// the ZeRO stage lays them out on this rank; forward unit by unit (gathering ZeRO-3
// weights, converting 16-bit ones); backward in reverse with each layer's activations
// and temporaries as its header comment states (core/gpt2, core/llama, core/decoder),
// the gradients' reduction buffers, the fused optimizers' norm pass, and the update —
// rounding every allocation as the Allocator does. Under tensor parallelism the units are
// the rank's slices and the activations its heads', MLP columns' and vocabulary rows'. Tests hold
// it equal to the allocator's measured peak, per category and in total, on every rank.
#pragma once

#include <string>

#include "core/dtype.h"
#include "core/memory_category.h"
#include "core/model_config.h"
#include "optim/optimizer.h"

namespace llmft {

struct RunShape {
  int micro_batch = 1;
  int seq_len = 1;
  DType dtype = DType::f32;  // stored dtype of weights and gradients
  bool activation_checkpointing = false;
  OptimizerConfig optimizer;
  bool clip_grad = false;  // gradient clipping on (fused optimizers then run a norm pass)
  int zero_stage = 0;
  int ranks = 1;    // data-parallel group size
  int rank = 0;     // this rank in the group (the last ranks may own fewer elements)
  int tp = 1;       // tensor-parallel group size
  int tp_rank = 0;  // this rank in its tensor-parallel group
};

struct MemoryPrediction {
  CategoryBytes peak_by_category{};  // each category's own peak over the step
  CategoryBytes at_peak{};           // the breakdown at the moment of the total peak
  size_t peak_total = 0;
  std::string peak_phase;  // where the total peaks, e.g. "backward of the head"
};

MemoryPrediction predict_memory(const ModelConfig& config, const RunShape& shape);

}  // namespace llmft
