// AdaLomo (Lv et al. 2023b): LOMO's fused, stateless-gradient update with an
// Adafactor-style factored second moment (a row and a column vector per matrix, the full
// vector for 1-D tensors, all f32 in optimizer_state), grouped update normalisation and
// a learning rate scaled by max(1e-3, RMS(param)); see Backend::adalomo_update.
// The second moment decays with 1 - step^-0.8, as in the reference implementation.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace llmft {

// Floats of AdaLomo state for one unit: rows + cols per matrix, numel per vector.
int64_t adalomo_state_floats(const UnitLayout& layout);

class AdaLomo : public Optimizer {
 public:
  // AdaLomo's statistics need whole rows and columns: every span must be its whole unit.
  AdaLomo(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
          const std::vector<UnitLayout>& units, const std::vector<UnitSpan>& spans);
  bool fused() const override { return true; }
  void begin_step(int step) override { step_ = step; }
  void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                   float lr, float grad_scale) override;

 private:
  OptimizerConfig config_;
  Backend& be_;
  std::vector<Buffer> state_;  // per unit: each tensor's row (and column) statistics
  int step_ = 0;
};

}  // namespace llmft
