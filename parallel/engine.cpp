#include "parallel/engine.h"

#include <cmath>

#include "core/error.h"
#include "core/param_init.h"
#include "optim/grad_clip.h"

namespace llmft {

int64_t count_targets(const MicroBatch& batch) {
  int64_t n = 0;
  const int64_t size = static_cast<int64_t>(batch.batch) * batch.seq_len;
  for (int64_t i = 0; i < size; ++i) n += batch.targets[i] >= 0 ? 1 : 0;
  return n;
}

Engine::Engine(Model& model, Backend& backend, Allocator& allocator, const EngineOptions& options)
    : model_(model), be_(backend), alloc_(allocator), options_(options) {
  const std::vector<UnitLayout>& units = model_.units();
  for (const UnitLayout& u : units) {
    const size_t bytes = static_cast<size_t>(u.numel) * sizeof(float);
    param_buffers_.push_back(alloc_.allocate(bytes, MemoryCategory::params, "params " + u.name));
    tensors_.params.push_back(param_buffers_.back().as(DType::f32, {u.numel}));
    if (options_.trainable) {
      grad_buffers_.push_back(alloc_.allocate(bytes, MemoryCategory::grads, "grads " + u.name));
      tensors_.grads.push_back(grad_buffers_.back().as(DType::f32, {u.numel}));
    }
    std::vector<float> host(static_cast<size_t>(u.numel));
    for (const ParamInfo& p : u.params) {
      initial_values(p, options_.seed, 0, p.numel(), host.data() + p.offset);
    }
    be_.copy_to_device(tensors_.params.back(), host.data());
  }
  if (!options_.trainable) return;
  norm_scalar_ = alloc_.allocate(sizeof(float), MemoryCategory::other, "gradient norm");
  optimizer_ = make_optimizer(options_.optimizer, be_, alloc_, units);
}

void Engine::forward(const UnitTensors& tensors) {
  const int n = static_cast<int>(model_.units().size());
  for (int u = 0; u < n; ++u) model_.forward_unit(u, tensors);
}

void Engine::backward(const UnitTensors& tensors) {
  const int n = static_cast<int>(model_.units().size());
  for (int u = n - 1; u >= 0; --u) model_.backward_unit(u, tensors);
}

double Engine::global_grad_norm() {
  Tensor sum = norm_scalar_.as(DType::f32, {1});
  be_.fill(sum, 0.0f);
  for (const Tensor& g : tensors_.grads) be_.sum_squares(sum, g);
  float value = 0.0f;
  be_.copy_to_host(&value, sum);
  return std::sqrt(static_cast<double>(value));
}

StepStats Engine::train_step(const std::vector<MicroBatch>& micro_batches, int step) {
  LLMFT_REQUIRE(options_.trainable, "internal: train_step on an inference-only engine");
  LLMFT_REQUIRE(!micro_batches.empty(), "internal: a step needs at least one micro-batch");
  int64_t targets = 0;
  for (const MicroBatch& mb : micro_batches) targets += count_targets(mb);
  LLMFT_REQUIRE(targets > 0, "step " << step << " has no target tokens in its batch");
  const float loss_scale = 1.0f / static_cast<float>(targets);

  for (const Tensor& g : tensors_.grads) be_.fill(g, 0.0f);
  model_.reset_loss();
  for (const MicroBatch& mb : micro_batches) {
    model_.begin_micro_batch(mb, loss_scale, false);
    forward(tensors_);
    backward(tensors_);
    model_.end_micro_batch();
  }

  StepStats stats;
  stats.target_tokens = targets;
  stats.loss = model_.loss_sum() / static_cast<double>(targets);
  stats.grad_norm = global_grad_norm();
  stats.lr = options_.schedule.at(step);
  const float scale = clip_factor(stats.grad_norm, options_.clip_grad);
  optimizer_->begin_step(step);
  const std::vector<UnitLayout>& units = model_.units();
  for (size_t u = 0; u < units.size(); ++u) {
    optimizer_->update_unit(static_cast<int>(u), units[u], tensors_.params[u], tensors_.grads[u],
                            stats.lr, scale);
  }
  return stats;
}

double Engine::evaluate(const std::vector<MicroBatch>& batches) {
  int64_t targets = 0;
  model_.reset_loss();
  const int n = static_cast<int>(model_.units().size());
  for (const MicroBatch& mb : batches) {
    targets += count_targets(mb);
    model_.begin_micro_batch(mb, 0.0f, false);
    for (int u = 0; u < n; ++u) model_.forward_unit(u, tensors_);
    model_.end_micro_batch();
  }
  LLMFT_REQUIRE(targets > 0, "the evaluation data has no target tokens");
  return model_.loss_sum() / static_cast<double>(targets);
}

std::vector<float> Engine::last_logits(const MicroBatch& batch) {
  model_.begin_micro_batch(batch, 0.0f, true);
  forward(tensors_);
  std::vector<float> logits = model_.last_logits();
  model_.end_micro_batch();
  return logits;
}

std::vector<float> Engine::read_params(int unit) const {
  std::vector<float> host(static_cast<size_t>(tensors_.params[unit].numel()));
  be_.copy_to_host(host.data(), tensors_.params[unit]);
  return host;
}

std::vector<float> Engine::read_grads(int unit) const {
  std::vector<float> host(static_cast<size_t>(tensors_.grads[unit].numel()));
  be_.copy_to_host(host.data(), tensors_.grads[unit]);
  return host;
}

void Engine::write_params(int unit, const std::vector<float>& values) {
  LLMFT_REQUIRE(static_cast<int64_t>(values.size()) == tensors_.params[unit].numel(),
                "internal: parameter upload of the wrong size for unit " << unit);
  be_.copy_to_device(tensors_.params[unit], values.data());
}

}  // namespace llmft
