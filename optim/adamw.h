// AdamW (Loshchilov & Hutter) with bias correction and decoupled weight decay, matching
// torch.optim.AdamW. State: first and second moments, f32, over each unit's span.
#pragma once

#include "optim/optimizer.h"

namespace llmft {

class AdamW : public Optimizer {
 public:
  AdamW(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
        const std::vector<UnitSpan>& spans);
  void begin_step(int step) override { step_ = step; }
  void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                   float lr, float grad_scale) override;
  std::vector<OptimizerState> state(int unit) const override;

 private:
  OptimizerConfig config_;
  Backend& be_;
  std::vector<Buffer> m_, v_;
  int step_ = 0;
};

}  // namespace llmft
