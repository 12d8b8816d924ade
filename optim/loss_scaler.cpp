#include "optim/loss_scaler.h"

#include <algorithm>

namespace llmft {

LossScaler::LossScaler(const LossScaleConfig& config)
    : config_(config), scale_(config.enabled ? config.initial_scale : 1.0f) {}

bool LossScaler::update(bool overflow) {
  if (!config_.enabled) return !overflow;
  if (overflow) {
    scale_ = std::max(scale_ * 0.5f, 1.0f);
    clean_steps_ = 0;
    return false;
  }
  if (++clean_steps_ >= config_.window) {
    scale_ *= 2.0f;
    clean_steps_ = 0;
  }
  return true;
}

}  // namespace llmft
