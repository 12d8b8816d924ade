#include "parallel/engine.h"

#include <cmath>

#include "core/error.h"
#include "core/param_init.h"
#include "optim/grad_clip.h"
#include "optim/optimizer.h"

namespace llmft {

int64_t count_targets(const MicroBatch& batch) {
  int64_t n = 0;
  const int64_t size = static_cast<int64_t>(batch.batch) * batch.seq_len;
  for (int64_t i = 0; i < size; ++i) n += batch.targets[i] >= 0 ? 1 : 0;
  return n;
}

Engine::Engine(Model& model, Backend& backend, Allocator& allocator, const EngineOptions& options)
    : model_(model),
      be_(backend),
      alloc_(allocator),
      options_(options),
      scaler_(options.loss_scale) {
  LLMFT_REQUIRE(options_.dtype != DType::i32, "internal: weights cannot be stored as i32");
  const std::vector<UnitLayout>& units = model_.units();
  if (options_.trainable) optimizer_ = make_optimizer(options_.optimizer, be_, alloc_, units);
  const bool fused = optimizer_ && optimizer_->fused();
  const bool stored_grads = options_.trainable && !fused;
  const bool has_master = stored_grads && options_.dtype != DType::f32;
  const size_t width = dtype_size(options_.dtype);
  for (const UnitLayout& u : units) {
    const size_t n = static_cast<size_t>(u.numel);
    param_buffers_.push_back(
        alloc_.allocate(n * width, MemoryCategory::params, "params " + u.name));
    stored_.params.push_back(param_buffers_.back().as(options_.dtype, {u.numel}));
    if (stored_grads) {
      grad_buffers_.push_back(alloc_.allocate(n * width, MemoryCategory::grads, "grads " + u.name));
      stored_.grads.push_back(grad_buffers_.back().as(options_.dtype, {u.numel}));
    }
    if (has_master) {
      master_buffers_.push_back(
          alloc_.allocate(n * sizeof(float), MemoryCategory::master_params, "master " + u.name));
      masters_.push_back(master_buffers_.back().as(DType::f32, {u.numel}));
    } else {
      masters_.push_back(stored_.params.back());
    }
    std::vector<float> host(n);
    for (const ParamInfo& p : u.params) {
      initial_values(p, options_.seed, 0, p.numel(), host.data() + p.offset);
    }
    write_params(static_cast<int>(masters_.size()) - 1, host);
  }
  work_ = std::make_unique<WorkingCopies>(be_, alloc_, stored_, fused);
  if (options_.trainable) {
    scalars_ = alloc_.allocate(2 * sizeof(float), MemoryCategory::other, "step scalars");
  }
}

std::vector<int> Engine::units_read_by(int unit) const {
  std::vector<int> units = model_.extra_units_read(unit);
  units.insert(units.begin(), unit);
  return units;
}

void Engine::forward() {
  const int n = static_cast<int>(model_.units().size());
  for (int u = 0; u < n; ++u) {
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    model_.forward_unit(u, work_->view());
    work_->release_params(units);
  }
}

void Engine::backward(bool reduce) {
  const int n = static_cast<int>(model_.units().size());
  std::vector<std::unique_ptr<CommRequest>> pending;
  for (int u = n - 1; u >= 0; --u) {
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    work_->acquire_grads(units);
    model_.backward_unit(u, work_->view(), false);
    work_->release_params(units);
    for (int x : units) {
      if (model_.grads_completed_by(x) != u) continue;
      work_->flush_grads(x);
      if (reduce && options_.data_parallel) {
        pending.push_back(options_.data_parallel->all_reduce(stored_.grads[x], ReduceOp::sum));
      }
    }
  }
  for (auto& request : pending) request->wait();
}

double Engine::sum_over_ranks(double value) {
  if (!options_.data_parallel) return value;
  Tensor scalar = scalars_.as(DType::f32, {2}).view(1, {1});
  const float host = static_cast<float>(value);
  be_.copy_to_device(scalar, &host);
  options_.data_parallel->all_reduce(scalar, ReduceOp::sum)->wait();
  float summed = 0.0f;
  be_.copy_to_host(&summed, scalar);
  return summed;
}

void Engine::all_reduce_grad(const Tensor& grad) {
  if (options_.data_parallel) options_.data_parallel->all_reduce(grad, ReduceOp::sum)->wait();
}

double Engine::stored_grads_square_sum() {
  Tensor sum = scalars_.as(DType::f32, {2}).view(0, {1});
  be_.fill(sum, 0.0f);
  for (const Tensor& g : stored_.grads) be_.sum_squares(sum, g);
  float value = 0.0f;
  be_.copy_to_host(&value, sum);
  return value;
}

StepStats Engine::train_step(const std::vector<MicroBatch>& micro_batches, int step) {
  LLMFT_REQUIRE(options_.trainable, "internal: train_step on an inference-only engine");
  LLMFT_REQUIRE(!micro_batches.empty(), "internal: a step needs at least one micro-batch");
  StepStats stats;
  for (const MicroBatch& mb : micro_batches) stats.target_tokens += count_targets(mb);
  if (options_.data_parallel) {
    options_.data_parallel->set_context("step " + std::to_string(step));
    stats.target_tokens = std::llround(sum_over_ranks(static_cast<double>(stats.target_tokens)));
  }
  LLMFT_REQUIRE(stats.target_tokens > 0,
                "step " << step
                        << " has no target tokens in its batch: every position is masked; "
                           "check the dataset's prompt/response fields");
  stats.loss_scale = scaler_.scale();
  stats.lr = options_.schedule.at(step);
  model_.reset_loss();
  if (optimizer_->fused()) {
    LLMFT_REQUIRE(micro_batches.size() == 1,
                  "--grad-accum " << micro_batches.size() << " with --optimizer "
                                  << optimizer_kind_name(options_.optimizer.kind)
                                  << ": a fused optimizer applies each gradient during "
                                     "backward, so there is nothing to accumulate into; "
                                     "raise --micro-batch instead, or use adamw or sgd");
    return fused_step(micro_batches[0], step, stats);
  }
  return accumulate_step(micro_batches, step, stats);
}

StepStats Engine::accumulate_step(const std::vector<MicroBatch>& micro_batches, int step,
                                  StepStats stats) {
  const float loss_scale = stats.loss_scale / static_cast<float>(stats.target_tokens);
  for (const Tensor& g : stored_.grads) be_.fill(g, 0.0f);
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    model_.begin_micro_batch(micro_batches[m], loss_scale, false);
    forward();
    backward(m + 1 == micro_batches.size());
    model_.end_micro_batch();
  }
  stats.loss = sum_over_ranks(model_.loss_sum()) / static_cast<double>(stats.target_tokens);
  stats.grad_norm = std::sqrt(stored_grads_square_sum()) / stats.loss_scale;
  stats.skipped = !scaler_.update(!std::isfinite(stats.grad_norm));
  if (stats.skipped) return stats;
  const float scale = clip_factor(stats.grad_norm, options_.clip_grad) / stats.loss_scale;
  optimizer_->begin_step(step);
  const std::vector<UnitLayout>& units = model_.units();
  for (size_t u = 0; u < units.size(); ++u) {
    optimizer_->update_unit(static_cast<int>(u), units[u], masters_[u], stored_.grads[u], stats.lr,
                            scale);
    if (masters_[u].data != stored_.params[u].data) be_.convert(stored_.params[u], masters_[u]);
  }
  return stats;
}

double Engine::fused_backward(bool update, float lr, float grad_scale, bool keep_activations) {
  Tensor sum = scalars_.as(DType::f32, {2}).view(0, {1});
  be_.fill(sum, 0.0f);
  const std::vector<UnitLayout>& layouts = model_.units();
  for (int u = static_cast<int>(layouts.size()) - 1; u >= 0; --u) {
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    work_->acquire_grads(units);
    model_.backward_unit(u, work_->view(), keep_activations);
    work_->release_params(units);
    for (int x : units) {
      if (model_.grads_completed_by(x) != u) continue;
      const Tensor& grad = work_->view().grads[x];
      all_reduce_grad(grad);
      be_.sum_squares(sum, grad);
      if (update) optimizer_->update_unit(x, layouts[x], stored_.params[x], grad, lr, grad_scale);
      work_->release_grads(x);
    }
  }
  float value = 0.0f;
  be_.copy_to_host(&value, sum);
  return value;
}

StepStats Engine::fused_step(const MicroBatch& batch, int step, StepStats stats) {
  const float inv_scale = 1.0f / stats.loss_scale;
  model_.begin_micro_batch(batch, stats.loss_scale / static_cast<float>(stats.target_tokens),
                           false);
  forward();
  stats.loss = sum_over_ranks(model_.loss_sum()) / static_cast<double>(stats.target_tokens);
  optimizer_->begin_step(step);
  if (options_.clip_grad > 0 || options_.loss_scale.enabled) {
    // Norm pass: no weight changes until the global norm (and any overflow) is known.
    stats.grad_norm = std::sqrt(fused_backward(false, 0.0f, 0.0f, true)) * inv_scale;
    stats.skipped = !scaler_.update(!std::isfinite(stats.grad_norm));
    if (!stats.skipped) {
      fused_backward(true, stats.lr, clip_factor(stats.grad_norm, options_.clip_grad) * inv_scale,
                     false);
    }
  } else {
    stats.grad_norm = std::sqrt(fused_backward(true, stats.lr, inv_scale, false)) * inv_scale;
    scaler_.update(!std::isfinite(stats.grad_norm));
  }
  model_.end_micro_batch();
  return stats;
}

double Engine::evaluate(const std::vector<MicroBatch>& batches) {
  int64_t targets = 0;
  model_.reset_loss();
  for (const MicroBatch& mb : batches) {
    targets += count_targets(mb);
    model_.begin_micro_batch(mb, 0.0f, false);
    forward();
    model_.end_micro_batch();
  }
  LLMFT_REQUIRE(targets > 0, "the evaluation data has no target tokens");
  return model_.loss_sum() / static_cast<double>(targets);
}

std::vector<float> Engine::logits(const MicroBatch& batch) {
  model_.begin_micro_batch(batch, 0.0f, true);
  forward();
  std::vector<float> logits = model_.logits();
  model_.end_micro_batch();
  return logits;
}

std::vector<float> Engine::read_f32(const Tensor& t) const {
  std::vector<float> host(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::f32) {
    be_.copy_to_host(host.data(), t);
    return host;
  }
  Buffer staging =
      alloc_.allocate(host.size() * sizeof(float), MemoryCategory::workspace, "host transfer");
  Tensor f32 = staging.as(DType::f32, {t.numel()});
  be_.convert(f32, t);
  be_.copy_to_host(host.data(), f32);
  return host;
}

std::vector<float> Engine::read_params(int unit) const {
  return read_f32(masters_[unit]);
}

std::vector<float> Engine::read_grads(int unit) const {
  return read_f32(stored_.grads[unit]);
}

void Engine::write_params(int unit, const std::vector<float>& values) {
  const Tensor& master = masters_[unit];
  LLMFT_REQUIRE(static_cast<int64_t>(values.size()) == master.numel(),
                "internal: parameter upload of the wrong size for unit " << unit);
  if (master.dtype == DType::f32) {
    be_.copy_to_device(master, values.data());
    if (master.data != stored_.params[unit].data) be_.convert(stored_.params[unit], master);
    return;
  }
  // Inference with 16-bit weights: no master copy; stage through an f32 buffer.
  Buffer staging =
      alloc_.allocate(values.size() * sizeof(float), MemoryCategory::workspace, "host transfer");
  Tensor f32 = staging.as(DType::f32, {master.numel()});
  be_.copy_to_device(f32, values.data());
  be_.convert(master, f32);
}

}  // namespace llmft
