#include "optim/lomo.h"

namespace llmft {

void Lomo::update_unit(int, const UnitLayout& layout, Tensor params, Tensor grads, float lr,
                       float grad_scale) {
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.sgd_update(layout.slice(params, i), layout.slice(grads, i), Tensor(), lr, 0.0f, wd,
                   grad_scale);
  }
}

}  // namespace llmft
