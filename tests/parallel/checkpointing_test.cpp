// Activation checkpointing: gradients bitwise equal to the run without it, and the
// measured activation peak falls to what the memory model predicts.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"

using namespace llmft;

namespace {

struct Outcome {
  std::vector<std::vector<float>> grads;
  size_t activation_peak;
  size_t total_peak;
};

Outcome one_step(const ModelConfig& c, bool checkpointing) {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model = make_model(c, be, alloc, ModelOptions{checkpointing});
  EngineOptions o;
  Engine engine(*model, be, alloc, o);
  std::mt19937_64 rng(11);
  const int B = 3, T = 24;
  std::vector<int32_t> inputs(B * T), targets(B * T);
  for (int i = 0; i < B * T; ++i) {
    inputs[i] = static_cast<int32_t>(rng() % c.vocab_size);
    targets[i] = static_cast<int32_t>(rng() % c.vocab_size);
  }
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
    ModelConfig c;
    c.name = "checkpointing";
    c.family = family;
    c.vocab_size = 50;
    c.max_seq_len = 32;
    c.hidden = 32;
    c.n_layer = 4;
    c.n_head = 4;
    c.n_kv_head = family == ModelFamily::llama ? 2 : 4;
    c.intermediate = 96;
    c.tie_embeddings = family == ModelFamily::gpt2;
    CAPTURE(std::string(family_name(family)));
    const Outcome plain = one_step(c, false), checkpointed = one_step(c, true);
    REQUIRE(plain.grads.size() == checkpointed.grads.size());
    for (size_t u = 0; u < plain.grads.size(); ++u) {
      CAPTURE(u);
      CHECK(std::memcmp(plain.grads[u].data(), checkpointed.grads[u].data(),
                        plain.grads[u].size() * sizeof(float)) == 0);
    }
    CHECK(checkpointed.activation_peak < plain.activation_peak / 2);
    const MemoryPrediction predicted =
        predict_memory(c, RunShape{3, 24, DType::f32, true, OptimizerConfig{}});
    CHECK(checkpointed.activation_peak ==
          predicted.peak_by_category[index_of(MemoryCategory::activations)]);
    CHECK(checkpointed.total_peak == predicted.peak_total);
  }
}
