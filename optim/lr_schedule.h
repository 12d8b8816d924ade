// Learning-rate schedules: linear warmup to the peak over `warmup_steps` (step k of them
// at k / warmup x peak), then constant, or cosine or linear decay from the peak (the first
// step after warmup) towards min_lr, which the step after the last would reach (the
// Hugging Face convention: the last step still trains).
#pragma once

#include <string>

namespace llmft {

enum class LrShape { constant, cosine, linear };

LrShape parse_lr_shape(const std::string& name);
const char* lr_shape_name(LrShape shape);

struct LrSchedule {
  LrShape shape = LrShape::cosine;
  float peak_lr = 3e-4f;
  float min_lr = 0.0f;
  int warmup_steps = 0;
  int total_steps = 1;

  // Learning rate of optimizer step `step` (1-based).
  float at(int step) const;
};

}  // namespace llmft
