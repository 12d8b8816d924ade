// --grad-accum-dtype: with bf16 weights and 32 micro-batches, the gradient an accumulating
// optimizer sees against an fp64 sum of the same micro-batches' f32 gradients. fp32
// accumulation holds it to f32 rounding; stored (bf16) accumulation is far off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/support/gradient_reference.h"

using namespace llmft;
using testing::family_config;

namespace {

constexpr int kMicroBatches = 32;
// One window of 16 tokens per micro-batch, every position a target: each micro-batch's loss
// is divided by 16 and the step's by 32 x 16, both powers of two, so a micro-batch's share
// of the step's gradient is its own gradient / 32 exactly (no rounding in the scaling).
constexpr int kSeq = 16;

// The step's gradient: one step over all micro-batches with the seeded initial weights.
std::vector<float> step_gradient(const ModelConfig& c, const std::vector<MicroBatch>& batches,
                                 GradAccumDtype accum) {
  testing::TestTrainer t(c, testing::bf16_sgd(accum, 1e-3f));
  t.engine->train_step(batches, 1);
  return testing::all_grads(*t.engine);
}

// ||got - want|| / ||want|| over every element of the model.
double norm_relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

// The largest |got - want| over the largest |want|: the error in units of the gradient's
// scale (an elementwise relative error is unbounded where micro-batches cancel).
double max_scaled_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return diff / scale;
}

}  // namespace

TEST_CASE("fp32 gradient accumulation of bf16 weights over 32 micro-batches meets fp64") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    // GPT-2 ties its embeddings (two uses per micro-batch add into one gradient).
    const ModelConfig c = family_config(family, {97, kSeq, 32, 2, 4, 0, 64});
    const testing::WindowBatches b = testing::random_windows(c.vocab_size, kMicroBatches, kSeq);
    const std::vector<double> reference = testing::reference_gradient(c, b.micro_batches);
    const std::vector<float> fp32 = step_gradient(c, b.micro_batches, GradAccumDtype::fp32);
    const std::vector<float> stored = step_gradient(c, b.micro_batches, GradAccumDtype::stored);
    REQUIRE(fp32.size() == reference.size());
    REQUIRE(stored.size() == reference.size());
    const double fp32_norm = norm_relative_error(fp32, reference);
    const double stored_norm = norm_relative_error(stored, reference);
    const double fp32_max = max_scaled_error(fp32, reference);
    const double stored_max = max_scaled_error(stored, reference);
    MESSAGE(std::string(family_name(family))
            << " bf16, 32 micro-batches, error against fp64: fp32 " << fp32_norm
            << " (norm-relative), " << fp32_max << " (max, of the largest); stored " << stored_norm
            << ", " << stored_max);
    // f32 keeps 24 significant bits (unit roundoff u = 2^-24 = 6e-8). The sum of 32
    // micro-batches rounds at most 31 times, and each micro-batch's own gradient may be
    // formed in another order when the weight-gradient GEMM adds into the running sum
    // (up to its 16 tokens' products, 16 more roundings): at most 47u = 2.8e-6 of the
    // summed magnitudes per element. Micro-batches' gradients partly cancel, so those
    // magnitudes exceed the sum's; 2e-5 allows them 7x the sum.
    CHECK(fp32_norm < 2e-5);
    CHECK(fp32_max < 2e-5);
    // bf16 keeps 8 bits (u = 2^-9 = 2e-3) and rounds each of the 32 additions: the stored
    // sum is off by about sqrt(32) u; at least 100x fp32's error shows the difference.
    CHECK(stored_norm > 100 * fp32_norm);
    CHECK(stored_norm > 1e-3);
  }
}
