// Samples packed into one window (positions restarting at each sample, io/window_layout.h)
// train exactly as the same samples run alone: the loss and every gradient of a packed
// window equal those of one step over the samples as separate micro-batches, each its own
// sequence from position 0, for both families (learned positions: GPT-2; rotary: LLaMA)
// and with samples crossing the CPU attention's 128-row tiles.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "parallel/engine.h"
#include "tests/support/parity.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::family_config;
using testing::random_tokens;
using testing::TestTrainer;

namespace {

// One row holding the samples one after another, then padding to `window` positions.
struct PackedRow {
  std::vector<int32_t> inputs, targets, positions;
};

PackedRow pack(const std::vector<std::vector<int32_t>>& inputs,
               const std::vector<std::vector<int32_t>>& targets, int window) {
  PackedRow row;
  for (size_t s = 0; s < inputs.size(); ++s) {
    row.inputs.insert(row.inputs.end(), inputs[s].begin(), inputs[s].end());
    row.targets.insert(row.targets.end(), targets[s].begin(), targets[s].end());
    for (size_t t = 0; t < inputs[s].size(); ++t) row.positions.push_back(static_cast<int32_t>(t));
  }
  for (int t = 0; static_cast<int>(row.inputs.size()) < window; ++t) {
    row.inputs.push_back(0);
    row.targets.push_back(-1);
    row.positions.push_back(t);
  }
  return row;
}

void check_packed_equals_alone(ModelFamily family, const std::vector<int>& lengths, int window) {
  const ModelConfig c = family_config(family, {61, 320, 32, 2, 4, 0, 64});
  EngineOptions o;
  o.optimizer.kind = OptimizerKind::sgd;
  o.schedule = LrSchedule{LrShape::constant, 0.1f, 0.0f, 0, 1};
  std::mt19937_64 rng(11);
  std::vector<std::vector<int32_t>> inputs, targets;
  for (int length : lengths) {
    inputs.push_back(random_tokens(length, c.vocab_size, rng));
    targets.push_back(random_tokens(length, c.vocab_size, rng));
    targets.back().back() = -1;   // as packing masks a sample's last target
    targets.back().front() = -1;  // and a prompt token
  }
  const PackedRow row = pack(inputs, targets, window);
  TestTrainer packed(c, o), alone(c, o);
  const StepStats a = packed.engine->train_step(
      {MicroBatch{1, window, row.inputs.data(), row.targets.data(), 0, row.positions.data()}}, 1);
  std::vector<MicroBatch> separate;
  for (size_t s = 0; s < inputs.size(); ++s) {
    separate.push_back(
        MicroBatch{1, static_cast<int>(inputs[s].size()), inputs[s].data(), targets[s].data()});
  }
  const StepStats b = alone.engine->train_step(separate, 1);
  CHECK(a.target_tokens == b.target_tokens);
  // The same sums, cut into other GEMM shapes and attention tiles: only the order of
  // additions differs (tests/support/parity.h says why kFp32Parity has its size).
  CHECK(testing::relative_difference(a.loss, b.loss) < testing::kFp32Parity);
  for (int u = 0; u < static_cast<int>(packed.model->units().size()); ++u) {
    CAPTURE(u);
    CHECK(testing::relative_gap(packed.engine->read_grads(u), alone.engine->read_grads(u)) <
          testing::kFp32Parity);
  }
}

}  // namespace

TEST_CASE("a packed window's loss and gradients equal its samples run alone") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    CAPTURE(std::string(family_name(family)));
    check_packed_equals_alone(family, {5, 9, 2, 7}, 24);        // one tile, padding
    check_packed_equals_alone(family, {100, 60, 3, 140}, 310);  // across 128-row tiles
  }
}
