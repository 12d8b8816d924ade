// Engine: runs training steps of a Model on one rank. It owns every unit's parameter
// buffer (params, in the stored dtype), the optimizer, the learning-rate schedule,
// gradient clipping and loss scaling, and sequences units so that a parallel strategy
// can act between them (DESIGN.md, "One step, as data flowing").
//
// Two kinds of step:
//  - accumulate (sgd, adamw): every unit has a stored gradient (grads) summed over the
//    micro-batches; bf16/fp16 weights have f32 master copies (master_params) that the
//    optimizer updates after backward.
//  - fused (lomo, adalomo): no stored gradients and no master copies; each unit's
//    gradient exists only from its backward to its update, which happens at once in the
//    stored dtype. Clipping needs the global norm before the first update, and fp16 must
//    see an overflow before any weight changes, so then backward runs twice over the
//    same activations: a norm pass, then the update pass. One micro-batch per step.
//
// Data parallelism (a data-parallel Communicator): every rank holds the whole model and
// runs its own part of the global batch; the loss is the mean over the global batch's
// targets. Accumulating optimizers all-reduce each unit's gradient as soon as the last
// micro-batch's backward completes it, overlapped with the backward of earlier units,
// and every rank applies the same update; fused ones all-reduce each unit's gradient
// before using it (in the norm pass too), so replicas never drift.
//
// Thread-safety: one Engine per rank, used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/micro_batch.h"
#include "core/model.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "parallel/working_copies.h"

namespace llmft {

struct EngineOptions {
  DType dtype = DType::f32;  // stored dtype of weights and gradients
  OptimizerConfig optimizer;
  LrSchedule schedule;
  float clip_grad = 0.0f;      // global-norm clipping; <= 0 disables
  LossScaleConfig loss_scale;  // enabled only makes sense with fp16
  uint64_t seed = 1234;        // initial weights
  bool trainable = true;       // false: parameters only (no gradients, no optimizer state)
  Communicator* data_parallel = nullptr;  // the data-parallel group; null: one rank
};

struct StepStats {
  double loss = 0.0;       // mean over the step's target tokens
  double grad_norm = 0.0;  // global L2 norm before clipping (inf/NaN on overflow)
  float lr = 0.0f;
  float loss_scale = 1.0f;  // the scale this step's gradients carried
  bool skipped = false;     // the gradients overflowed and no weight changed
  int64_t target_tokens = 0;
};

class Engine {
 public:
  // Allocates and initialises the parameters (seeded), gradients and optimizer state.
  Engine(Model& model, Backend& backend, Allocator& allocator, const EngineOptions& options);

  // One optimizer step over the micro-batches (gradient accumulation).
  // `step` is 1-based and drives the learning-rate schedule.
  StepStats train_step(const std::vector<MicroBatch>& micro_batches, int step);
  // Mean loss over the batches' target tokens, without touching gradients.
  double evaluate(const std::vector<MicroBatch>& batches);
  // (batch, seq, vocab) logits of one batch, on the host.
  std::vector<float> logits(const MicroBatch& batch);

  Model& model() { return model_; }
  float loss_scale() const { return scaler_.scale(); }
  // Host f32 copies of one unit's flat parameters (the master copy when there is one) /
  // gradients, and upload of parameters (master and stored).
  std::vector<float> read_params(int unit) const;
  std::vector<float> read_grads(int unit) const;
  void write_params(int unit, const std::vector<float>& values);

 private:
  std::vector<int> units_read_by(int unit) const;
  void forward();
  // `reduce`: start each unit's gradient all-reduce once its gradient is final.
  void backward(bool reduce);
  // Sums a host value over the data-parallel group (identity with one rank).
  double sum_over_ranks(double value);
  // Sums a unit's gradient over the data-parallel group, in place (blocking).
  void all_reduce_grad(const Tensor& grad);
  // Sum of squares of every stored gradient.
  double stored_grads_square_sum();
  StepStats accumulate_step(const std::vector<MicroBatch>& micro_batches, int step,
                            StepStats stats);
  StepStats fused_step(const MicroBatch& batch, int step, StepStats stats);
  // One fused backward pass; updates the units when `update`, else only measures.
  // Returns the sum of squares of all gradients.
  double fused_backward(bool update, float lr, float grad_scale, bool keep_activations);
  std::vector<float> read_f32(const Tensor& t) const;

  Model& model_;
  Backend& be_;
  Allocator& alloc_;
  EngineOptions options_;
  std::vector<Buffer> param_buffers_, grad_buffers_, master_buffers_;
  UnitTensors stored_;
  std::vector<Tensor> masters_;  // f32 tensors the optimizer updates (params when f32)
  std::unique_ptr<WorkingCopies> work_;
  Buffer scalars_;  // device scalars: the gradient norm, and values summed over ranks
  std::unique_ptr<Optimizer> optimizer_;
  LossScaler scaler_;
};

// Number of target tokens (targets >= 0) in a micro-batch.
int64_t count_targets(const MicroBatch& batch);

}  // namespace llmft
