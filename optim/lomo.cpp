#include "optim/lomo.h"

namespace llmft {

void Lomo::update_unit(int, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                       float lr, float grad_scale) {
  for_each_param_piece(layout, span, [&](int i, int64_t offset, int64_t count) {
    const float wd = layout.params[i].weight_decay ? config_.weight_decay : 0.0f;
    be_.sgd_update(params.view(offset, {count}), grads.view(offset, {count}), Tensor(), lr, 0.0f,
                   wd, grad_scale);
  });
}

}  // namespace llmft
