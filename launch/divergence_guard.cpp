#include "launch/divergence_guard.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/error.h"

namespace llmft {
namespace {

[[noreturn]] void fail(int step, const std::string& what, const std::string& more_advice) {
  throw DivergedError("training diverged at step " + std::to_string(step) + ": " + what +
                      "; lower --lr or enable --clip-grad" + more_advice);
}

}  // namespace

double DivergenceGuard::max_loss(const std::string& option_value, int vocab_size) {
  if (option_value == "auto") return 20.0 * std::log(static_cast<double>(vocab_size));
  if (option_value == "none") return 0.0;
  size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(option_value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LLMFT_REQUIRE(used == option_value.size() && std::isfinite(value) && value > 0,
                "--max-loss " << option_value
                              << ": give auto (20 x ln(vocabulary)), none, or a positive number");
  return value;
}

void DivergenceGuard::after_step(int step, const StepStats& stats) {
  std::ostringstream what;
  if (max_loss_ > 0 && !stats.skipped && std::isfinite(stats.loss) && stats.loss > max_loss_) {
    what << "the loss " << stats.loss << " is above --max-loss " << max_loss_
         << " (the weights have blown up)";
    unhealthy_from_ = step - 1;
    fail(step, what.str(), "");
  }
  if (!loss_scaling_) {
    if (std::isfinite(stats.loss) && std::isfinite(stats.grad_norm)) return;
    if (std::isfinite(stats.loss)) {
      what << "the gradient norm became " << stats.grad_norm;
    } else {
      what << "the loss became " << stats.loss;
    }
    unhealthy_from_ = step - 1;
    fail(step, what.str(), "");
  }
  skipped_in_a_row_ = stats.skipped ? skipped_in_a_row_ + 1 : 0;
  if (skipped_in_a_row_ > max_skipped_steps_) {
    what << "fp16 overflowed " << skipped_in_a_row_ << " steps in a row (more than "
         << "--max-skipped-steps " << max_skipped_steps_ << "; the loss scale is now "
         << stats.loss_scale << ")";
    unhealthy_from_ = step - skipped_in_a_row_;
    fail(step, what.str(), ", or use bf16");
  }
}

}  // namespace llmft
