// What the gradient-accumulation tests share: micro-batches of one random window each,
// bf16 SGD options with a chosen --grad-accum-dtype, a whole model's values as one vector,
// and the fp64 reference gradient (the mean over micro-batches of each one's f32 gradient,
// computed alone from the same weights).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

namespace llmft::testing {

// `count` micro-batches of one window of `seq` tokens each (seeded), every position a
// target; the micro-batches point into the token vectors.
struct WindowBatches {
  std::vector<std::vector<int32_t>> inputs, targets;
  std::vector<MicroBatch> micro_batches;
};

inline WindowBatches random_windows(int vocab, int count, int64_t seq) {
  std::mt19937_64 rng(35);
  WindowBatches b;
  for (int m = 0; m < count; ++m) {
    b.inputs.push_back(random_tokens(static_cast<size_t>(seq), vocab, rng));
    b.targets.push_back(random_tokens(static_cast<size_t>(seq), vocab, rng));
  }
  for (int m = 0; m < count; ++m) {
    b.micro_batches.push_back(
        MicroBatch{1, static_cast<int>(seq), b.inputs[m].data(), b.targets[m].data()});
  }
  return b;
}

// bf16 weights, SGD without momentum at a constant learning rate, the gradient summed in
// `accum`.
inline EngineOptions bf16_sgd(GradAccumDtype accum, float lr) {
  EngineOptions o;
  o.dtype = DType::bf16;
  o.optimizer.kind = OptimizerKind::sgd;
  o.optimizer.grad_accum_dtype = accum;
  o.schedule = LrSchedule{LrShape::constant, lr, lr, 0, 1};
  return o;
}

// Every unit's values as read(unit) gives them, unit after unit.
template <typename Read>
std::vector<float> every_unit(const Engine& engine, Read read) {
  std::vector<float> all;
  for (size_t u = 0; u < engine.model().units().size(); ++u) {
    const std::vector<float> part = read(static_cast<int>(u));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

inline std::vector<float> all_grads(const Engine& engine) {
  return every_unit(engine, [&](int u) { return engine.read_grads(u); });
}
inline std::vector<float> all_params(const Engine& engine) {
  return every_unit(engine, [&](int u) { return engine.read_params(u); });
}

// The fp64 mean over `micro_batches` of each one's f32 gradient, each computed alone (a
// step of one micro-batch) from the same seeded bf16 weights, restored after every step.
inline std::vector<double> reference_gradient(const ModelConfig& c,
                                              const std::vector<MicroBatch>& micro_batches) {
  TestTrainer t(c, bf16_sgd(GradAccumDtype::fp32, 1e-3f));
  const size_t units = t.model->units().size();
  std::vector<std::vector<float>> initial;
  for (size_t u = 0; u < units; ++u) initial.push_back(t.engine->read_params(static_cast<int>(u)));
  std::vector<double> sum;
  const double count = static_cast<double>(micro_batches.size());
  for (const MicroBatch& mb : micro_batches) {
    for (size_t u = 0; u < units; ++u) t.engine->write_params(static_cast<int>(u), initial[u]);
    t.engine->train_step({mb}, 1);
    const std::vector<float> g = all_grads(*t.engine);
    sum.resize(g.size(), 0.0);
    for (size_t i = 0; i < g.size(); ++i) sum[i] += static_cast<double>(g[i]) / count;
  }
  return sum;
}

}  // namespace llmft::testing
