// Dynamic loss scaling for fp16 gradients: the loss (and so every gradient) is
// multiplied by `scale` so small gradients survive fp16; a step whose gradients overflow
// (inf or NaN) is skipped as a whole and the scale halved; after `window` clean steps in
// a row the scale doubles. Disabled (scale 1, nothing skipped) for f32 and bf16.
#pragma once

namespace llmft {

struct LossScaleConfig {
  bool enabled = false;
  float initial_scale = 65536.0f;
  int window = 1000;  // clean steps before the scale grows
};

class LossScaler {
 public:
  explicit LossScaler(const LossScaleConfig& config);
  float scale() const { return scale_; }
  int clean_steps() const { return clean_steps_; }
  // Continues from a checkpoint's scale and clean-step count.
  void restore(float scale, int clean_steps) {
    scale_ = scale;
    clean_steps_ = clean_steps;
  }
  // Records a step's outcome and returns whether its update may be applied.
  bool update(bool overflow);

 private:
  LossScaleConfig config_;
  float scale_;
  int clean_steps_ = 0;
};

}  // namespace llmft
