#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmft {

LrShape parse_lr_shape(const std::string& name) {
  if (name == "constant") return LrShape::constant;
  if (name == "cosine") return LrShape::cosine;
  if (name == "linear") return LrShape::linear;
  LLMFT_FAIL("--lr-schedule " << name << ": unknown schedule; use constant, cosine or linear");
}

const char* lr_shape_name(LrShape shape) {
  switch (shape) {
    case LrShape::constant:
      return "constant";
    case LrShape::cosine:
      return "cosine";
    case LrShape::linear:
      return "linear";
  }
  return "?";
}

float LrSchedule::at(int step) const {
  if (warmup_steps > 0 && step <= warmup_steps) {
    return peak_lr * static_cast<float>(step) / static_cast<float>(warmup_steps);
  }
  if (shape == LrShape::constant) return peak_lr;
  // The first step after warmup runs at the peak; progress reaches 1 only after the last.
  const int decay_steps = std::max(1, total_steps - warmup_steps);
  const float progress = std::clamp(
      static_cast<float>(step - warmup_steps - 1) / static_cast<float>(decay_steps), 0.0f, 1.0f);
  float factor = shape == LrShape::cosine ? 0.5f * (1.0f + std::cos(3.14159265358979f * progress))
                                          : 1.0f - progress;
  return min_lr + (peak_lr - min_lr) * factor;
}

}  // namespace llmft
