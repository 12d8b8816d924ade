// Engine: runs training steps of a Model on one rank. It owns every unit's parameter
// and gradient buffer (params / grads categories), the optimizer, the learning-rate
// schedule and gradient clipping, and sequences units so that a parallel strategy can
// act between them (DESIGN.md, "One step, as data flowing").
//
// Thread-safety: one Engine per rank, used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/micro_batch.h"
#include "core/model.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"

namespace llmft {

struct EngineOptions {
  OptimizerConfig optimizer;
  LrSchedule schedule;
  float clip_grad = 0.0f;  // global-norm clipping; <= 0 disables
  uint64_t seed = 1234;    // initial weights
  bool trainable = true;   // false: parameters only (no gradients, no optimizer state)
};

struct StepStats {
  double loss = 0.0;       // mean over the step's target tokens
  double grad_norm = 0.0;  // global L2 norm before clipping
  float lr = 0.0f;
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
  // Logits at the last position of each row: (batch, vocab) on the host.
  std::vector<float> last_logits(const MicroBatch& batch);

  Model& model() { return model_; }
  const UnitTensors& tensors() const { return tensors_; }
  // Host copies of one unit's flat parameters / gradients, and upload of parameters.
  std::vector<float> read_params(int unit) const;
  std::vector<float> read_grads(int unit) const;
  void write_params(int unit, const std::vector<float>& values);

 private:
  void forward(const UnitTensors& tensors);
  void backward(const UnitTensors& tensors);
  double global_grad_norm();

  Model& model_;
  Backend& be_;
  Allocator& alloc_;
  EngineOptions options_;
  std::vector<Buffer> param_buffers_, grad_buffers_;
  UnitTensors tensors_;
  Buffer norm_scalar_;
  std::unique_ptr<Optimizer> optimizer_;
};

// Number of target tokens (targets >= 0) in a micro-batch.
int64_t count_targets(const MicroBatch& batch);

}  // namespace llmft
