// Whole-model gradients (every unit; tied and untied embeddings; grouped-query attention;
// with and without activation checkpointing) against central finite differences of the
// loss, for both families.
#include <doctest/doctest.h>

#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "core/param_init.h"
#include "tests/core/gradcheck.h"

#include "tests/support/test_models.h"

using namespace llmft;
using testing::random_tokens;
using testing::test_config;

namespace {

ModelConfig small_config(ModelFamily family, int kv_heads, bool tied) {
  ModelConfig c = test_config(family, {13, 9, 12, 2, 3, kv_heads, 20}, tied);
  c.rope_theta = 100.0f;
  return c;
}

void check_model_gradients(const ModelConfig& c, bool checkpointing) {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model_ptr = make_model(c, be, alloc, ModelOptions{checkpointing});
  Model& model = *model_ptr;

  // Host-resident parameters and gradients (the CPU backend's device memory is host memory).
  std::vector<std::vector<float>> params, grads;
  UnitTensors tensors;
  for (const UnitLayout& u : model.units()) {
    params.emplace_back(u.numel);
    grads.emplace_back(u.numel, 0.0f);
    for (const ParamInfo& p : u.params) {
      ParamInfo scaled = p;
      scaled.init_std = p.init_std > 0 ? 0.3f : 0.0f;  // large weights exercise every path
      initial_values(scaled, 42, 0, p.numel(), params.back().data() + p.offset);
    }
    tensors.params.emplace_back(params.back().data(), DType::f32, Shape{u.numel});
    tensors.grads.emplace_back(grads.back().data(), DType::f32, Shape{u.numel});
  }
  std::mt19937_64 rng(9);
  const int B = 2, T = 7;
  const std::vector<int32_t> inputs = random_tokens(B * T, c.vocab_size, rng);
  std::vector<int32_t> targets = random_tokens(B * T, c.vocab_size, rng);
  targets[3] = -1;  // masked position
  MicroBatch batch{B, T, inputs.data(), targets.data()};
  const int U = static_cast<int>(model.units().size());

  auto loss = [&](bool backward) {
    model.reset_loss();
    model.begin_micro_batch(batch, 1.0f, LogitRows::none);
    for (int u = 0; u < U; ++u) model.forward_unit(u, tensors);
    if (backward) {
      for (int u = U - 1; u >= 0; --u) model.backward_unit(u, tensors, false);
    }
    model.end_micro_batch();
    return model.loss_sum();
  };
  loss(true);
  CHECK(alloc.current(MemoryCategory::activations) == 0);
  CHECK(alloc.current(MemoryCategory::workspace) == 0);

  for (int u = 0; u < U; ++u) {
    for (int trial = 0; trial < 3; ++trial) {
      auto [numeric, analytic] = testing::directional_check(
          params[u], grads[u], [&] { return loss(false); }, rng);
      INFO("unit " << model.units()[u].name << ": numeric " << numeric << " analytic " << analytic);
      // The loss (about 30) comes from an f32 forward through two blocks: its rounding,
      // a few u x 30 per evaluation, over 2 eps = 0.02 puts ~1e-4 of noise into each
      // difference, beside the O(eps^2) truncation of the kernels' test; 5e-3 leaves
      // room for both whatever order the BLAS kernel adds in.
      CHECK(testing::relative_error(numeric, analytic, grads[u]) < 5e-3);
    }
  }
}

}  // namespace

TEST_CASE("gpt2 model gradients match finite differences") {
  check_model_gradients(small_config(ModelFamily::gpt2, 3, true), false);
}

TEST_CASE("llama model gradients match finite differences (untied, multi-head)") {
  check_model_gradients(small_config(ModelFamily::llama, 3, false), false);
}

TEST_CASE("llama model gradients match finite differences (tied, one kv head, checkpointed)") {
  check_model_gradients(small_config(ModelFamily::llama, 1, true), true);
}
