// A step whose gradient is not finite (fp32, no loss scaling) reports what happened to the
// weights: `skipped` when the optimizer held back, not when an offloaded optimizer had
// already updated each unit during the backward (no clipping: nothing waited for the norm).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;

namespace {

struct NonFiniteStep {
  StepStats stats;
  bool weights_changed = false;
};

// One AdamW step on a tiny GPT-2 whose first weight is NaN, so every gradient is NaN.
NonFiniteStep nan_step(bool offload, float clip_grad) {
  const ModelConfig c = testing::family_config(ModelFamily::gpt2, {67, 16, 32, 2, 4, 0, 64});
  EngineOptions o;
  o.clip_grad = clip_grad;
  o.schedule = LrSchedule{LrShape::constant, 1e-3f, 0.0f, 0, 2};
  testing::TestTrainer t(c, o, 0, 1, {}, nullptr, 0, offload);
  std::vector<float> embedding = t.engine->read_params(0);
  embedding[0] = std::numeric_limits<float>::quiet_NaN();
  t.engine->write_params(0, embedding);
  const int last = static_cast<int>(t.model->units().size()) - 1;
  const std::vector<float> before = t.engine->read_params(last);
  std::vector<int32_t> inputs(2 * 8, 0), targets(2 * 8, 1);  // token 0 reads the NaN row
  NonFiniteStep result;
  result.stats = t.engine->train_step({MicroBatch{2, 8, inputs.data(), targets.data()}}, 1);
  const std::vector<float> after = t.engine->read_params(last);
  for (size_t i = 0; i < before.size(); ++i) {
    // NaN != NaN: a weight counts as changed only when its bits would differ.
    const bool same = before[i] == after[i] || (std::isnan(before[i]) && std::isnan(after[i]));
    result.weights_changed = result.weights_changed || !same;
  }
  return result;
}

}  // namespace

TEST_CASE("a step with a non-finite gradient says whether its update was applied") {
  SUBCASE("the optimizer on the device waits for the norm and skips the step") {
    const NonFiniteStep step = nan_step(false, 0.0f);
    CHECK_FALSE(std::isfinite(step.stats.grad_norm));
    CHECK(step.stats.skipped);
    CHECK_FALSE(step.weights_changed);
  }
  SUBCASE("an offloaded optimizer with clipping waits for the norm too") {
    const NonFiniteStep step = nan_step(true, 1.0f);
    CHECK_FALSE(std::isfinite(step.stats.grad_norm));
    CHECK(step.stats.skipped);
    CHECK_FALSE(step.weights_changed);
  }
  SUBCASE("an offloaded optimizer without clipping updated during the backward") {
    const NonFiniteStep step = nan_step(true, 0.0f);
    CHECK_FALSE(std::isfinite(step.stats.grad_norm));
    CHECK_FALSE(step.stats.skipped);
    CHECK(step.weights_changed);
  }
}
