// LOMO and AdaLomo in the Engine: LOMO equals plain SGD step for step, with and without
// clipping (its two-pass norm scheme) and checkpointing; gradient memory peaks at the
// largest unit's gradient; fp16 overflow changes no weight; accumulation is refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "tests/support/parity.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::family_config;
using testing::random_tokens;

namespace {

using Run = testing::TestTrainer;

EngineOptions options(OptimizerKind kind, float clip) {
  EngineOptions o;
  o.optimizer.kind = kind;
  o.optimizer.weight_decay = 0.01f;
  o.schedule = LrSchedule{LrShape::cosine, 0.05f, 0.005f, 2, 10};
  o.clip_grad = clip;
  return o;
}

// How two runs that should train alike may differ.
enum class Same {
  bits,       // the same arithmetic in the same order
  reordered,  // the same arithmetic, some sums added in another order (parity.h)
};

// Trains `a` and `b` for `steps` steps on the same random batches and compares their
// losses, gradient norms and weights.
void check_same_training(Run& a, Run& b, const ModelConfig& c, int steps, Same same) {
  std::mt19937_64 rng(21);
  for (int step = 1; step <= steps; ++step) {
    auto inputs = random_tokens(3 * 16, c.vocab_size, rng),
         targets = random_tokens(3 * 16, c.vocab_size, rng);
    const MicroBatch mb{3, 16, inputs.data(), targets.data()};
    StepStats sa = a.engine->train_step({mb}, step), sb = b.engine->train_step({mb}, step);
    if (same == Same::bits) {
      CHECK(sa.loss == sb.loss);
    } else {
      CHECK(testing::relative_difference(sa.loss, sb.loss) < testing::kFp32Parity);
    }
    // The norm adds its squares unit by unit, in backward order for the fused optimizers
    // and in forward order for the others: always a reordered sum.
    CHECK(testing::relative_difference(sa.grad_norm, sb.grad_norm) < testing::kFp32Parity);
  }
  if (same == Same::bits) {
    CHECK(a.params() == b.params());
  } else {
    CHECK(testing::weight_gap(c, a.params(), b.params()) < testing::kFp32Parity);
  }
}

}  // namespace

TEST_CASE("LOMO equals plain SGD step for step, without and with clipping") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    for (float clip : {0.0f, 0.5f}) {
      CAPTURE(std::string(family_name(family)));
      CAPTURE(clip);
      const ModelConfig c = family_config(family, {61, 16, 32, 2, 4, 0, 64});
      Run lomo(c, options(OptimizerKind::lomo, clip)), sgd(c, options(OptimizerKind::sgd, clip));
      // Each unit's update is SGD's on the same gradient, applied once that gradient is
      // complete. With clipping the global norm, summed in another order, scales them.
      check_same_training(lomo, sgd, c, 10, clip > 0 ? Same::reordered : Same::bits);
    }
  }
}

TEST_CASE("LOMO's norm pass under activation checkpointing gives the same training") {
  const ModelConfig c = family_config(ModelFamily::llama, {61, 16, 32, 3, 4, 0, 64});
  Run plain(c, options(OptimizerKind::adalomo, 1.0f)),
      checkpointed(c, options(OptimizerKind::adalomo, 1.0f), true);
  // Recomputing a block's forward repeats its arithmetic exactly.
  check_same_training(plain, checkpointed, c, 5, Same::bits);
}

TEST_CASE("LOMO's gradient memory peaks at the largest unit's gradient") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    CAPTURE(std::string(family_name(family)));
    const ModelConfig c = family_config(family, {500, 16, 32, 2, 4, 0, 64});
    Run run(c, options(OptimizerKind::lomo, 1.0f));
    std::mt19937_64 rng(2);
    auto inputs = random_tokens(32, c.vocab_size, rng),
         targets = random_tokens(32, c.vocab_size, rng);
    run.engine->train_step({MicroBatch{2, 16, inputs.data(), targets.data()}}, 1);
    std::vector<size_t> unit_bytes;
    for (const UnitLayout& u : run.model->units()) {
      unit_bytes.push_back(rounded_allocation(static_cast<size_t>(u.numel) * sizeof(float)));
    }
    // A tied embedding's gradient is held from the head's backward to the embedding's, so
    // it coexists with one block's; otherwise one unit's gradient exists at a time.
    const size_t largest = *std::max_element(unit_bytes.begin(), unit_bytes.end());
    const size_t expected = c.tie_embeddings ? unit_bytes[0] + unit_bytes[1] : largest;
    CHECK(run.alloc.peak(MemoryCategory::grads) == expected);
    CHECK(run.alloc.current(MemoryCategory::grads) == 0);
  }
}

TEST_CASE("fp16 LOMO: an overflow is caught before any weight changes") {
  const ModelConfig c = family_config(ModelFamily::gpt2, {61, 16, 32, 2, 4, 0, 64});
  for (OptimizerKind kind : {OptimizerKind::lomo, OptimizerKind::adalomo}) {
    EngineOptions o = options(kind, 0.0f);  // no clipping: fp16 alone forces the norm pass
    o.dtype = DType::f16;
    o.loss_scale = LossScaleConfig{true, 1e30f, 2};  // overflows fp16 gradients at once
    Run run(c, o);
    std::mt19937_64 rng(3);
    auto inputs = random_tokens(32, c.vocab_size, rng),
         targets = random_tokens(32, c.vocab_size, rng);
    const MicroBatch mb{2, 16, inputs.data(), targets.data()};
    const std::vector<float> before = run.params();
    StepStats s = run.engine->train_step({mb}, 1);
    CHECK(s.skipped);
    CHECK(run.params() == before);
    CHECK(run.engine->loss_scale() == 5e29f);
    int step = 2;
    while (run.engine->train_step({mb}, step++).skipped) REQUIRE(step < 200);
    CHECK(run.params() != before);
    const float fitted = run.engine->loss_scale();
    run.engine->train_step({mb}, step++);
    CHECK(run.engine->loss_scale() == 2 * fitted);
  }
}

TEST_CASE("fused optimizers refuse gradient accumulation with a reason") {
  const ModelConfig c = family_config(ModelFamily::gpt2, {61, 16, 32, 1, 4, 0, 64});
  Run run(c, options(OptimizerKind::lomo, 0.0f));
  std::mt19937_64 rng(4);
  auto tokens = random_tokens(16, c.vocab_size, rng);
  const MicroBatch mb{1, 16, tokens.data(), tokens.data()};
  CHECK_THROWS_WITH_AS(run.engine->train_step({mb, mb}, 1),
                       doctest::Contains("nothing to accumulate into"), Error);
}
