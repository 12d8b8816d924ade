#include "optim/grad_clip.h"

namespace llmft {

float clip_factor(double norm, float max_norm) {
  if (max_norm <= 0.0f || norm <= max_norm) return 1.0f;
  return static_cast<float>(max_norm / (norm + 1e-6));
}

}  // namespace llmft
