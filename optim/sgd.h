// SGD with optional momentum (torch.optim.SGD semantics, dampening 0) and decoupled
// weight decay. State: one momentum buffer per unit span, only when momentum > 0.
#pragma once

#include "optim/optimizer.h"

namespace llmft {

class Sgd : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
      const std::vector<UnitSpan>& spans);
  void begin_step(int) override {}
  void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                   float lr, float grad_scale) override;
  std::vector<OptimizerState> state(int unit) const override;

 private:
  OptimizerConfig config_;
  Backend& be_;
  std::vector<Buffer> momentum_;
};

}  // namespace llmft
