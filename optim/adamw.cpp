#include "optim/adamw.h"

#include <cmath>

namespace llmft {

AdamW::AdamW(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
             const std::vector<UnitLayout>& units)
    : config_(config), be_(backend) {
  for (const UnitLayout& u : units) {
    const size_t bytes = static_cast<size_t>(u.numel) * sizeof(float);
    m_.push_back(allocator.allocate(bytes, MemoryCategory::optimizer_state, "adamw m " + u.name));
    v_.push_back(allocator.allocate(bytes, MemoryCategory::optimizer_state, "adamw v " + u.name));
    be_.fill(m_.back().as(DType::f32, {u.numel}), 0.0f);
    be_.fill(v_.back().as(DType::f32, {u.numel}), 0.0f);
  }
}

void AdamW::update_unit(int unit, const UnitLayout& layout, Tensor params, Tensor grads, float lr,
                        float grad_scale) {
  const float bc1 = 1.0f - std::pow(config_.beta1, static_cast<float>(step_));
  const float bc2 = 1.0f - std::pow(config_.beta2, static_cast<float>(step_));
  Tensor m = m_[unit].as(DType::f32, {layout.numel});
  Tensor v = v_[unit].as(DType::f32, {layout.numel});
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.adamw_update(layout.slice(params, i), layout.slice(grads, i), layout.slice(m, i),
                     layout.slice(v, i), lr, config_.beta1, config_.beta2, config_.eps, wd,
                     grad_scale, bc1, bc2);
  }
}

}  // namespace llmft
