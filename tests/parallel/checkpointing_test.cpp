// Activation checkpointing: gradients bitwise equal to the run without it, and the
// measured activation peak falls to what the memory model predicts.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "core/model.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"

#include "tests/support/test_models.h"

using namespace llmft;
using testing::family_config;
using testing::random_tokens;

namespace {

struct Outcome {
  std::vector<std::vector<float>> grads;
  size_t activation_peak;
  size_t total_peak;
};

// One step with the first `checkpointed_blocks` blocks checkpointed.
Outcome one_step(const ModelConfig& c, int checkpointed_blocks) {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  ModelOptions options;
  options.checkpointed_blocks = checkpointed_blocks;
  auto model = make_model(c, be, alloc, options);
  EngineOptions o;
  Engine engine(*model, be, alloc, o);
  std::mt19937_64 rng(11);
  const int B = 3, T = 24;
  const std::vector<int32_t> inputs = random_tokens(B * T, c.vocab_size, rng);
  const std::vector<int32_t> targets = random_tokens(B * T, c.vocab_size, rng);
  engine.train_step({MicroBatch{B, T, inputs.data(), targets.data()}}, 1);
  Outcome out{{}, alloc.peak(MemoryCategory::activations), alloc.total_peak()};
  for (size_t u = 0; u < model->units().size(); ++u) {
    out.grads.push_back(engine.read_grads(static_cast<int>(u)));
  }
  return out;
}

}  // namespace

TEST_CASE("activation checkpointing gives bitwise the same gradients and less activation memory") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    const ModelConfig c = family_config(family, {50, 32, 32, 4, 4, 0, 96});
    CAPTURE(std::string(family_name(family)));
    const Outcome plain = one_step(c, 0), checkpointed = one_step(c, ModelOptions::kAllBlocks);
    REQUIRE(plain.grads.size() == checkpointed.grads.size());
    for (size_t u = 0; u < plain.grads.size(); ++u) {
      CAPTURE(u);
      CHECK(std::memcmp(plain.grads[u].data(), checkpointed.grads[u].data(),
                        plain.grads[u].size() * sizeof(float)) == 0);
    }
    CHECK(checkpointed.activation_peak < plain.activation_peak / 2);
    const MemoryPrediction predicted =
        predict_memory(c, RunShape{3, 24, DType::f32, ModelOptions::kAllBlocks, OptimizerConfig{}});
    CHECK(checkpointed.activation_peak ==
          predicted.peak_by_category[index_of(MemoryCategory::activations)]);
    CHECK(checkpointed.total_peak == predicted.peak_total);
  }
}

TEST_CASE("checkpointing some of the blocks: the same gradients, a peak between none and all") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    const ModelConfig c = family_config(family, {50, 32, 32, 4, 4, 0, 96});
    CAPTURE(std::string(family_name(family)));
    const Outcome plain = one_step(c, 0);
    size_t previous_peak = plain.activation_peak;
    for (int blocks = 1; blocks <= c.n_layer; ++blocks) {
      CAPTURE(blocks);
      const Outcome some = one_step(c, blocks);
      for (size_t u = 0; u < plain.grads.size(); ++u) {
        CAPTURE(u);
        CHECK(std::memcmp(plain.grads[u].data(), some.grads[u].data(),
                          plain.grads[u].size() * sizeof(float)) == 0);
      }
      // Each further block kept as its input alone never raises the peak (the last one
      // may not lower it: its recomputation happens while the others' inputs are held).
      CHECK(some.activation_peak <= previous_peak);
      if (blocks == 1) CHECK(some.activation_peak < plain.activation_peak);
      previous_peak = some.activation_peak;
    }
    CHECK(previous_peak == one_step(c, ModelOptions::kAllBlocks).activation_peak);
  }
}
