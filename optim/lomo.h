// LOMO (Lv et al. 2023): plain SGD fused into backward. As soon as a unit's gradient is
// complete the Engine calls update_unit, which applies p -= lr * (clip * g) (and optional
// decoupled weight decay) in one pass over the stored-dtype weights, and the gradient is
// released. No optimizer state.
#pragma once

#include "optim/optimizer.h"

namespace llmft {

class Lomo : public Optimizer {
 public:
  Lomo(const OptimizerConfig& config, Backend& backend) : config_(config), be_(backend) {}
  bool fused() const override { return true; }
  void begin_step(int) override {}
  void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                   float lr, float grad_scale) override;

 private:
  OptimizerConfig config_;
  Backend& be_;
};

}  // namespace llmft
