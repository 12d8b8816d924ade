#include "optim/sgd.h"

namespace llmft {

Sgd::Sgd(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
         const std::vector<UnitSpan>& spans)
    : config_(config), be_(backend) {
  if (config_.momentum == 0.0f) return;
  for (const UnitSpan& span : spans) {
    momentum_.push_back(allocator.allocate(static_cast<size_t>(span.size()) * sizeof(float),
                                           MemoryCategory::optimizer_state, "sgd momentum"));
    be_.fill(momentum_.back().as(DType::f32, {span.size()}), 0.0f);
  }
}

std::vector<OptimizerState> Sgd::state(int unit) const {
  if (momentum_.empty()) return {};
  const int64_t n = static_cast<int64_t>(momentum_[unit].bytes() / sizeof(float));
  return {{"sgd_momentum", momentum_[unit].as(DType::f32, {n})}};
}

void Sgd::update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params,
                      Tensor grads, float lr, float grad_scale) {
  Tensor momentum;
  if (!momentum_.empty()) momentum = momentum_[unit].as(DType::f32, {span.size()});
  for_each_param_piece(layout, span, [&](int i, int64_t offset, int64_t count) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.sgd_update(params.view(offset, {count}), grads.view(offset, {count}),
                   momentum.defined() ? momentum.view(offset, {count}) : Tensor(), lr,
                   config_.momentum, wd, grad_scale);
  });
}

}  // namespace llmft
