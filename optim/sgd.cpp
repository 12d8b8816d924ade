#include "optim/sgd.h"

namespace llmft {

Sgd::Sgd(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
         const std::vector<UnitLayout>& units)
    : config_(config), be_(backend) {
  if (config_.momentum == 0.0f) return;
  for (const UnitLayout& u : units) {
    momentum_.push_back(allocator.allocate(static_cast<size_t>(u.numel) * sizeof(float),
                                           MemoryCategory::optimizer_state,
                                           "sgd momentum " + u.name));
    be_.fill(momentum_.back().as(DType::f32, {u.numel}), 0.0f);
  }
}

void Sgd::update_unit(int unit, const UnitLayout& layout, Tensor params, Tensor grads, float lr,
                      float grad_scale) {
  Tensor momentum;
  if (!momentum_.empty()) momentum = momentum_[unit].as(DType::f32, {layout.numel});
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.sgd_update(layout.slice(params, i), layout.slice(grads, i),
                   momentum.defined() ? layout.slice(momentum, i) : Tensor(), lr, config_.momentum,
                   wd, grad_scale);
  }
}

}  // namespace llmft
