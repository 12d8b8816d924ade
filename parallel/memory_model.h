// The memory model: predicts a rank's peak device memory per allocator category, before
// anything is allocated, by running the real thing on nothing: one training step of the
// real Model and Engine for the run's shape and this rank's place in the layout, on a
// counting device (core/counting/counting_backend.h: kernels that do nothing, addresses
// without memory) with counting communicators for its groups (comm/counting_communicator.h),
// through a tracking Allocator that records every allocation, its category and the phase
// of the step (docs/ARCHITECTURE.md). So the prediction follows from the code that
// allocates, and there is no second account of it to keep in step. Tests hold it equal to
// the allocator's measured peak of a real run, per category and in total, on every rank.
#pragma once

#include <string>

#include "core/attention_workspace.h"
#include "core/compute_dtype.h"
#include "core/dtype.h"
#include "core/memory_category.h"
#include "core/model_config.h"
#include "optim/optimizer.h"

namespace llmft {

struct RunShape {
  int micro_batch = 1;
  int seq_len = 1;
  DType dtype = DType::f32;     // stored dtype of weights and gradients
  int checkpointed_blocks = 0;  // the first ones (core/model.h ModelOptions; n_layer: all)
  OptimizerConfig optimizer;
  bool clip_grad = false;          // gradient clipping on (fused optimizers then run a norm pass)
  bool offload_optimizer = false;  // the optimizer in host memory (parallel/optimizer_offload.h)
  bool sequence_parallel = false;  // with tp > 1 (core/model.h ModelOptions)
  int zero_stage = 0;
  int ranks = 1;    // data-parallel group size
  int rank = 0;     // this rank in the group (the last ranks may own fewer elements)
  int tp = 1;       // tensor-parallel group size
  int tp_rank = 0;  // this rank in its tensor-parallel group
  ComputeRule compute = ComputeRule::f32;  // the rule of the backend predicted
  // Its attention backward's workspace (core/attention_workspace.h): cuDNN's on GPUs.
  AttentionWorkspaceRule attention = AttentionWorkspaceRule::none;
  // The data-parallel communicator overlaps compute (Communicator::overlaps_compute): then
  // ZeRO-2/3 keep a unit's reduce-scatter, and its whole gradient, in flight.
  bool overlapped_comm = false;
};

struct MemoryPrediction {
  CategoryBytes peak_by_category{};  // each category's own peak over the step
  CategoryBytes at_peak{};           // the breakdown at the moment of the total peak
  size_t peak_total = 0;
  std::string peak_phase;  // where the total peaks, e.g. "backward of the head"
  // The host pool of an offloaded optimizer (zero without offload), like the device's.
  CategoryBytes host_peak_by_category{};
  size_t host_peak_total = 0;
  // Host memory a checkpoint write or read holds at once (parallel/state_transfers.h); it
  // allocates no device memory, so a run that fits still fits while it saves.
  size_t checkpoint_staging = 0;
};

MemoryPrediction predict_memory(const ModelConfig& config, const RunShape& shape);

}  // namespace llmft
