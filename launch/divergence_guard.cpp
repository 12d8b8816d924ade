#include "launch/divergence_guard.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace llmft {
namespace {

[[noreturn]] void fail(int step, const std::string& what, const std::string& more_advice) {
  throw DivergedError("training diverged at step " + std::to_string(step) + ": " + what +
                      "; nothing was saved from this state; lower --lr or enable --clip-grad" +
                      more_advice + ", and resume from the last checkpoint");
}

}  // namespace

void DivergenceGuard::after_step(int step, const StepStats& stats) {
  std::ostringstream what;
  if (!loss_scaling_) {
    if (std::isfinite(stats.loss) && std::isfinite(stats.grad_norm)) return;
    if (std::isfinite(stats.loss)) {
      what << "the gradient norm became " << stats.grad_norm;
    } else {
      what << "the loss became " << stats.loss;
    }
    fail(step, what.str(), "");
  }
  skipped_in_a_row_ = stats.skipped ? skipped_in_a_row_ + 1 : 0;
  if (skipped_in_a_row_ > max_skipped_steps_) {
    what << "fp16 overflowed " << skipped_in_a_row_ << " steps in a row (more than "
         << "--max-skipped-steps " << max_skipped_steps_ << "; the loss scale is now "
         << stats.loss_scale << ")";
    fail(step, what.str(), ", or use bf16");
  }
}

}  // namespace llmft
