// TestTrainer: a CPU backend, allocator, model and Engine for tests, and the whole
// model's weights as one host vector (this rank's slice under tensor parallelism).
#pragma once

#include <memory>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "core/tp_slice.h"
#include "parallel/engine.h"

namespace llmft::testing {

// Options the parity tests train with: each optimizer at a learning rate that suits it
// (SGD-style ones far larger than AdamW; AdaLomo's is relative to each tensor's RMS), a
// cosine schedule over `steps` with 2 warmup steps, weight decay 0.01, SGD with momentum
// 0.9, clipping at 1.
inline EngineOptions parity_options(OptimizerKind kind, int steps) {
  EngineOptions o;
  o.optimizer.kind = kind;
  o.optimizer.momentum = kind == OptimizerKind::sgd ? 0.9f : 0.0f;
  o.optimizer.weight_decay = 0.01f;
  const bool sgd_like = kind == OptimizerKind::sgd || kind == OptimizerKind::lomo;
  const float lr = sgd_like ? 0.1f : (kind == OptimizerKind::adalomo ? 0.02f : 3e-3f);
  o.schedule = LrSchedule{LrShape::cosine, lr, lr / 10, 2, steps};
  o.clip_grad = 1.0f;
  return o;
}

struct TestTrainer {
  CpuBackend be;
  Allocator alloc;
  CpuBackend host_be;  // the host pool's kernels and allocator, used with `offload`
  Allocator host_alloc;
  std::unique_ptr<Model> model;
  std::unique_ptr<Engine> engine;
  int tp_size;

  // checkpointed_blocks: the first ones (ModelOptions; kAllBlocks: all). `offload`: the
  // optimizer in the host pool (parallel/optimizer_offload.h); `sequence_parallel`: with
  // tp_group (ModelOptions).
  TestTrainer(const ModelConfig& config, EngineOptions options, int checkpointed_blocks = 0,
              int threads = 0, TpSlice tp = {}, ReduceGroup* tp_group = nullptr, size_t budget = 0,
              bool offload = false, bool sequence_parallel = false)
      : alloc(be.memory(), budget), host_alloc(be.host_pool_memory(), 0), tp_size(tp.size) {
    if (threads > 0) be.set_threads(threads);
    if (threads > 0) host_be.set_threads(threads);
    if (offload) options.offload = HostPool{&host_be, &host_alloc};
    ModelOptions model_options(false, tp, tp_group);
    model_options.checkpointed_blocks = checkpointed_blocks;
    model_options.sequence_parallel = sequence_parallel;
    model = make_model(config, be, alloc, model_options);
    engine = std::make_unique<Engine>(*model, be, alloc, options);
  }

  // The weights unit after unit: the whole model's in Hugging Face shapes on one rank,
  // this rank's slice (its vocabulary rows padded) under tensor parallelism.
  std::vector<float> params() const {
    const std::vector<UnitLayout> whole = unit_layouts(model->config());
    std::vector<float> all;
    for (size_t u = 0; u < model->units().size(); ++u) {
      std::vector<float> p = engine->read_params(static_cast<int>(u));
      if (tp_size == 1) p = whole_from_slice(whole[u], model->units()[u], p);
      all.insert(all.end(), p.begin(), p.end());
    }
    return all;
  }
};

}  // namespace llmft::testing
