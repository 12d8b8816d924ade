// DivergenceGuard: the divergence policy of a training run. A non-finite loss or gradient
// norm is never trained through: in fp32 and bf16 the first one ends the run; in fp16 an
// overflow skips the step (that is loss scaling) but more than --max-skipped-steps skipped
// steps in a row end it. Ending is a DivergedError naming the step and what went
// non-finite (exit code kDivergedExitCode), thrown before anything is saved.
#pragma once

#include "core/dtype.h"
#include "parallel/engine.h"

namespace llmft {

class DivergenceGuard {
 public:
  DivergenceGuard(DType dtype, int max_skipped_steps)
      : loss_scaling_(dtype == DType::f16), max_skipped_steps_(max_skipped_steps) {}

  // Every rank sees the same (global) loss and norm, so every rank decides the same way.
  void after_step(int step, const StepStats& stats);

 private:
  bool loss_scaling_;
  int max_skipped_steps_;
  int skipped_in_a_row_ = 0;
};

}  // namespace llmft
