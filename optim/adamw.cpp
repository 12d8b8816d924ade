#include "optim/adamw.h"

#include <cmath>

namespace llmft {

AdamW::AdamW(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
             const std::vector<UnitSpan>& spans)
    : config_(config), be_(backend) {
  for (const UnitSpan& span : spans) {
    const size_t bytes = static_cast<size_t>(span.size()) * sizeof(float);
    m_.push_back(allocator.allocate(bytes, MemoryCategory::optimizer_state, "adamw m"));
    v_.push_back(allocator.allocate(bytes, MemoryCategory::optimizer_state, "adamw v"));
    be_.fill(m_.back().as(DType::f32, {span.size()}), 0.0f);
    be_.fill(v_.back().as(DType::f32, {span.size()}), 0.0f);
  }
}

std::vector<OptimizerState> AdamW::state(int unit) const {
  const int64_t n = static_cast<int64_t>(m_[unit].bytes() / sizeof(float));
  return {{"adamw_m", m_[unit].as(DType::f32, {n})}, {"adamw_v", v_[unit].as(DType::f32, {n})}};
}

void AdamW::update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params,
                        Tensor grads, float lr, float grad_scale) {
  const float bc1 = 1.0f - std::pow(config_.beta1, static_cast<float>(step_));
  const float bc2 = 1.0f - std::pow(config_.beta2, static_cast<float>(step_));
  Tensor m = m_[unit].as(DType::f32, {span.size()});
  Tensor v = v_[unit].as(DType::f32, {span.size()});
  for_each_param_piece(layout, span, [&](int i, int64_t offset, int64_t count) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.adamw_update(params.view(offset, {count}), grads.view(offset, {count}),
                     m.view(offset, {count}), v.view(offset, {count}), lr, config_.beta1,
                     config_.beta2, config_.eps, wd, grad_scale, bc1, bc2);
  });
}

}  // namespace llmft
