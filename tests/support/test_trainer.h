// TestTrainer: a CPU backend, allocator, model and Engine for tests, and the whole
// model's weights as one host vector (this rank's slice under tensor parallelism).
#pragma once

#include <memory>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "parallel/engine.h"

namespace llmft::testing {

struct TestTrainer {
  CpuBackend be;
  Allocator alloc;
  std::unique_ptr<Model> model;
  std::unique_ptr<Engine> engine;

  TestTrainer(const ModelConfig& config, const EngineOptions& options, bool checkpointing = false,
              int threads = 0, TpSlice tp = {}, ReduceGroup* tp_group = nullptr, size_t budget = 0)
      : alloc(be.memory(), budget) {
    if (threads > 0) be.set_threads(threads);
    model = make_model(config, be, alloc, ModelOptions{checkpointing, tp, tp_group});
    engine = std::make_unique<Engine>(*model, be, alloc, options);
  }

  std::vector<float> params() const {
    std::vector<float> all;
    for (size_t u = 0; u < model->units().size(); ++u) {
      const std::vector<float> p = engine->read_params(static_cast<int>(u));
      all.insert(all.end(), p.begin(), p.end());
    }
    return all;
  }
};

}  // namespace llmft::testing
