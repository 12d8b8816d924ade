// Global-norm gradient clipping: the factor every gradient is multiplied by so that the
// global L2 norm is at most max_norm (max_norm <= 0 disables clipping).
#pragma once

namespace llmft {

// REQUIRES: norm >= 0
float clip_factor(double norm, float max_norm);

}  // namespace llmft
