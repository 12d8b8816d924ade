// DivergenceGuard: the divergence policy of a training run. A non-finite loss or gradient
// norm is never trained through: in fp32 and bf16 the first one ends the run; in fp16 an
// overflow skips the step (that is loss scaling) but more than --max-skipped-steps skipped
// steps in a row end it. A finite loss above --max-loss ends it too: by default 20 x
// ln(vocabulary), twenty times the loss of a uniform guess, which only weights that have
// blown up reach (the target's probability below V^-20). Ending is a DivergedError naming
// the step and what went wrong (exit code kDivergedExitCode), thrown before anything is
// saved; unhealthy_from() says which states the failing step's figures condemn, so that
// their checkpoints are set aside (launch/train_checkpoints.h).
#pragma once

#include <string>

#include "core/dtype.h"
#include "parallel/engine.h"

namespace llmft {

class DivergenceGuard {
 public:
  // `max_loss` 0: no bound on finite losses.
  DivergenceGuard(DType dtype, int max_skipped_steps, double max_loss)
      : loss_scaling_(dtype == DType::f16),
        max_skipped_steps_(max_skipped_steps),
        max_loss_(max_loss) {}

  // What --max-loss means for a model of `vocab_size` tokens: auto (20 x ln(vocab_size)),
  // none (0) or a positive number. Throws llmft::Error naming the option otherwise.
  static double max_loss(const std::string& option_value, int vocab_size);

  // Every rank sees the same (global) loss and norm, so every rank decides the same way.
  void after_step(int step, const StepStats& stats);

  // After after_step(step) passed: the last step up to `step` whose update was applied with
  // a healthy loss and norm (fp16 steps skipped on overflow verify nothing), so that the
  // checkpoints of the steps before it are verified.
  int healthy_through(int step) const { return step - skipped_in_a_row_; }

  // After after_step threw: the first step whose resulting state was unhealthy. A step's
  // loss and gradient norm come from the state after the step before it (after too many
  // fp16 overflows in a row, the state after the step before the first of them: skipped
  // steps leave the weights as they were).
  int unhealthy_from() const { return unhealthy_from_; }

 private:
  bool loss_scaling_;
  int max_skipped_steps_;
  double max_loss_;
  int skipped_in_a_row_ = 0;
  int unhealthy_from_ = 0;
};

}  // namespace llmft
