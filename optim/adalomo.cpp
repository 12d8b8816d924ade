#include "optim/adalomo.h"

#include <cmath>

#include "core/error.h"

namespace llmft {

int64_t adalomo_state_floats(const UnitLayout& layout) {
  int64_t floats = 0;
  for (const ParamInfo& p : layout.params) {
    floats += p.shape.size() == 2 ? p.shape[0] + p.shape[1] : p.numel();
  }
  return floats;
}

AdaLomo::AdaLomo(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
                 const std::vector<UnitLayout>& units, const std::vector<UnitSpan>& spans)
    : config_(config), be_(backend) {
  for (size_t i = 0; i < units.size(); ++i) {
    const UnitLayout& u = units[i];
    LLMFT_REQUIRE(spans[i].begin == 0 && spans[i].end == u.numel,
                  "internal: AdaLomo updates whole units");
    const int64_t floats = adalomo_state_floats(u);
    state_.push_back(allocator.allocate(static_cast<size_t>(floats) * sizeof(float),
                                        MemoryCategory::optimizer_state, "adalomo " + u.name));
    be_.fill(state_.back().as(DType::f32, {floats}), 0.0f);
  }
}

void AdaLomo::update_unit(int unit, const UnitLayout& layout, UnitSpan, Tensor params, Tensor grads,
                          float lr, float grad_scale) {
  const float beta2 = 1.0f - std::pow(static_cast<float>(step_), -0.8f);
  Tensor state = state_[unit].as(DType::f32, {adalomo_state_floats(layout)});
  int64_t offset = 0;
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const ParamInfo& p = layout.params[i];
    const bool matrix = p.shape.size() == 2;
    Tensor rows = state.view(offset, {matrix ? p.shape[0] : p.numel()});
    Tensor cols = matrix ? state.view(offset + p.shape[0], {p.shape[1]}) : Tensor();
    offset += matrix ? p.shape[0] + p.shape[1] : p.numel();
    const float wd = p.weight_decay ? config_.weight_decay : 0.0f;
    be_.adalomo_update(layout.slice(params, i), layout.slice(grads, i), rows, cols, lr, beta2, wd,
                       grad_scale);
  }
}

}  // namespace llmft
