// The memory model's prediction against the allocator's measured peaks: per category
// and in total, to the byte, across families x dtypes x optimizers x checkpointing x
// shapes and micro-batches.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "core/model.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"

#include "tests/support/test_models.h"

using namespace llmft;
using testing::random_tokens;
using testing::test_config;

namespace {

ModelConfig shape(int vocab, int positions, int hidden, int layers, int heads, int inner,
                  ModelFamily family = ModelFamily::gpt2, int kv_heads = 0, bool tied = true) {
  return test_config(
      family, {vocab, positions, hidden, layers, heads, kv_heads > 0 ? kv_heads : heads, inner},
      tied);
}

struct Case {
  ModelConfig config;
  int micro_batch, seq_len, grad_accum;
  OptimizerConfig optimizer;
  DType dtype = DType::f32;
  bool checkpointing = false;
  float clip_grad = 0.0f;
  int zero_stage = 0;  // on one rank ZeRO has nothing to shard: it must cost nothing
};

void run_and_compare(const Case& k) {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model = make_model(k.config, be, alloc, ModelOptions{k.checkpointing});
  EngineOptions options;
  options.optimizer = k.optimizer;
  options.dtype = k.dtype;
  options.clip_grad = k.clip_grad;
  options.zero_stage = k.zero_stage;
  options.loss_scale = LossScaleConfig{k.dtype == DType::f16, 1024.0f, 1000};
  Engine engine(*model, be, alloc, options);
  std::mt19937_64 rng(3);
  const int n = k.micro_batch * k.seq_len;
  std::vector<std::vector<int32_t>> tokens;
  for (int i = 0; i < 2 * k.grad_accum; ++i) {
    tokens.push_back(random_tokens(n, k.config.vocab_size, rng));
  }
  for (int step = 1; step <= 2; ++step) {
    std::vector<MicroBatch> mbs;
    for (int m = 0; m < k.grad_accum; ++m) {
      mbs.push_back(
          MicroBatch{k.micro_batch, k.seq_len, tokens[2 * m].data(), tokens[2 * m + 1].data()});
    }
    engine.train_step(mbs, step);
  }
  RunShape shape{k.micro_batch, k.seq_len,
                 k.dtype,       k.checkpointing ? ModelOptions::kAllBlocks : 0,
                 k.optimizer,   k.clip_grad > 0};
  shape.zero_stage = k.zero_stage;
  const MemoryPrediction p = predict_memory(k.config, shape);
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    const double measured = static_cast<double>(alloc.peak_by_category()[i]);
    const double predicted = static_cast<double>(p.peak_by_category[i]);
    INFO("category " << std::string(memory_category_name(static_cast<MemoryCategory>(i)))
                     << ": measured " << measured << " predicted " << predicted);
    CHECK(predicted == measured);
  }
  const double measured = static_cast<double>(alloc.total_peak());
  INFO("total: measured " << measured << " predicted " << p.peak_total << " at " << p.peak_phase);
  CHECK(static_cast<double>(p.peak_total) == measured);
}

}  // namespace

TEST_CASE("memory model predicts the measured peak to the byte: shapes and optimizers") {
  OptimizerConfig adamw;
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::sgd;
  OptimizerConfig momentum = sgd;
  momentum.momentum = 0.9f;
  const std::vector<Case> cases = {
      {shape(257, 64, 32, 2, 4, 128), 4, 32, 1, adamw},
      {shape(257, 64, 32, 2, 4, 128), 1, 64, 3, sgd},
      {shape(1000, 40, 24, 3, 3, 56), 3, 37, 2, momentum},  // logits dominate
      {shape(50, 128, 48, 1, 6, 200), 2, 128, 1, adamw},    // activations dominate
      {shape(64, 16, 64, 4, 2, 256), 2, 16, 1, sgd},        // weights dominate
  };
  for (const Case& k : cases) {
    CAPTURE(k.config.hidden);
    CAPTURE(k.micro_batch);
    CAPTURE(k.seq_len);
    run_and_compare(k);
  }
}

TEST_CASE(
    "memory model predicts the measured peak to the byte: families x dtypes x checkpointing") {
  OptimizerConfig adamw;
  OptimizerConfig sgd;
  sgd.kind = OptimizerKind::sgd;
  const std::vector<ModelConfig> models = {
      shape(300, 48, 32, 3, 4, 96),                                // gpt2
      shape(300, 48, 32, 3, 4, 88, ModelFamily::llama, 2, false),  // llama, GQA, untied
      shape(120, 48, 48, 2, 6, 100, ModelFamily::llama, 1, true),  // llama, one kv head, tied
  };
  for (const ModelConfig& model : models) {
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      for (bool checkpointing : {false, true}) {
        for (int micro_batch : {1, 3}) {
          CAPTURE(std::string(family_name(model.family)));
          CAPTURE(std::string(dtype_name(dtype)));

          CAPTURE(checkpointing);
          CAPTURE(micro_batch);
          Case k{model, micro_batch, 40, 1, micro_batch == 1 ? adamw : sgd, dtype, checkpointing};
          run_and_compare(k);
        }
      }
    }
  }
}

TEST_CASE("memory model predicts the measured peak to the byte: lomo and adalomo") {
  OptimizerConfig lomo;
  lomo.kind = OptimizerKind::lomo;
  OptimizerConfig adalomo;
  adalomo.kind = OptimizerKind::adalomo;
  const std::vector<ModelConfig> models = {
      shape(300, 48, 32, 3, 4, 96),                                // gpt2, tied embedding
      shape(300, 48, 32, 3, 4, 88, ModelFamily::llama, 2, false),  // llama, untied
  };
  for (const ModelConfig& model : models) {
    for (const OptimizerConfig& optimizer : {lomo, adalomo}) {
      for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
        for (bool checkpointing : {false, true}) {
          for (float clip : {0.0f, 1.0f}) {
            CAPTURE(std::string(family_name(model.family)));
            CAPTURE(std::string(optimizer_kind_name(optimizer.kind)));
            CAPTURE(std::string(dtype_name(dtype)));
            CAPTURE(checkpointing);
            CAPTURE(clip);
            run_and_compare(Case{model, 2, 40, 1, optimizer, dtype, checkpointing, clip});
          }
        }
      }
    }
  }
}

TEST_CASE("memory model: ZeRO stages on a single rank cost what stage 0 costs") {
  OptimizerConfig adamw;
  for (int zero : {1, 2, 3}) {
    CAPTURE(zero);
    run_and_compare(
        Case{shape(300, 48, 32, 3, 4, 96), 2, 40, 1, adamw, DType::bf16, false, 1.0f, zero});
  }
}

TEST_CASE("under the stored compute rule (GPUs) nothing is converted to f32") {
  const ModelConfig model = shape(300, 48, 32, 3, 4, 88, ModelFamily::llama, 2, false);
  for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::lomo}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      CAPTURE(std::string(optimizer_kind_name(kind)));
      CAPTURE(std::string(dtype_name(dtype)));
      RunShape shape{2, 40, dtype, 0, OptimizerConfig{}, true};
      shape.optimizer.kind = kind;
      const MemoryPrediction cpu = predict_memory(model, shape);
      shape.compute = ComputeRule::stored;
      const MemoryPrediction gpu = predict_memory(model, shape);
      auto bytes = [](const MemoryPrediction& p, MemoryCategory c) {
        return p.peak_by_category[static_cast<int>(c)];
      };
      if (dtype == DType::f32) {
        // f32 is the compute dtype under both rules: the same step.
        CHECK(gpu.peak_by_category == cpu.peak_by_category);
        CHECK(gpu.peak_total == cpu.peak_total);
        continue;
      }
      // Weights, masters and optimizer state are stored alike.
      for (MemoryCategory c : {MemoryCategory::params, MemoryCategory::master_params,
                               MemoryCategory::optimizer_state}) {
        CHECK(bytes(gpu, c) == bytes(cpu, c));
      }
      // No f32 working copies of weights or gradients, and activations (but their f32
      // statistics) in two bytes: the workspace and activations shrink.
      CHECK(bytes(gpu, MemoryCategory::workspace) < bytes(cpu, MemoryCategory::workspace));
      CHECK(bytes(gpu, MemoryCategory::activations) < bytes(cpu, MemoryCategory::activations));
      CHECK(bytes(gpu, MemoryCategory::activations) * 2 > bytes(cpu, MemoryCategory::activations));
      // LOMO's transient gradient of one unit is in the stored dtype: half the f32 one.
      if (kind == OptimizerKind::lomo) {
        CHECK(bytes(gpu, MemoryCategory::grads) * 2 <= bytes(cpu, MemoryCategory::grads) + 512);
      }
    }
  }
}

TEST_CASE("a checkpoint stages its largest tensor part in host memory, no device memory") {
  // gpt2-tiny: the largest tensors are the MLP's two 512 x 128 matrices (65536 elements).
  const ModelConfig config = preset_config("gpt2-tiny");
  RunShape run;
  run.micro_batch = 1;
  run.seq_len = 8;
  CHECK(predict_memory(config, run).checkpoint_staging == 65536 * sizeof(float));
  // bf16 weights beside f32 masters: the masters are the larger part.
  run.dtype = DType::bf16;
  CHECK(predict_memory(config, run).checkpoint_staging == 65536 * sizeof(float));
  // Tensor-parallel halves: the MLP matrices' halves and the replicated 256 x 128 position
  // table, 32768 elements each.
  run.dtype = DType::f32;
  run.tp = 2;
  CHECK(predict_memory(config, run).checkpoint_staging == 32768 * sizeof(float));
}
