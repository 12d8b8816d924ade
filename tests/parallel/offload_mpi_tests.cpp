// Optimizer offload under mpiexec (-n 2 and -n 4): with SGD and AdamW in the host pool,
// every ZeRO stage, with and without clipping (the update during the last backward, or
// after it), and in a dp x tp mesh with and without sequence parallelism, trains to the
// losses and weights of the same layout with the optimizer on the device; the memory model predicts
// both pools to the byte on every rank; LOMO and AdaLomo are refused with the reason. Checks are
// CHECKs so that every rank enters every collective (see tests/support/mpi_doctest_main.cpp).
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <random>

#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"
#include "tests/support/memory_checks.h"
#include "tests/support/parity.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::family_config;
using testing::random_tokens;

namespace {

testing::TestTrainer trainer(const ModelConfig& c, EngineOptions o, Communicator* dp, int zero,
                             bool offload) {
  o.data_parallel = dp;
  o.zero_stage = zero;
  return testing::TestTrainer(c, o, 0, 1, {}, nullptr, 0, offload);
}

EngineOptions options(OptimizerKind kind, float clip, DType dtype) {
  EngineOptions o = testing::parity_options(kind, 6);
  o.clip_grad = clip;
  o.dtype = dtype;
  return o;
}

// Two micro-batches of B rows of T random tokens for this rank.
std::vector<std::vector<int32_t>> step_tokens(const ModelConfig& c, int B, int T,
                                              std::mt19937_64& rng) {
  std::vector<std::vector<int32_t>> tokens;
  for (int i = 0; i < 4; ++i) tokens.push_back(random_tokens(B * T, c.vocab_size, rng));
  return tokens;
}

std::vector<MicroBatch> micro_batches(const std::vector<std::vector<int32_t>>& t, int B, int T) {
  return {MicroBatch{B, T, t[0].data(), t[1].data()}, MicroBatch{B, T, t[2].data(), t[3].data()}};
}

// Worst relative gaps of the losses and gradient norms over 6 steps of the two trainers on
// the same micro-batches (2 of B x T from `rng`).
struct StepGaps {
  double loss = 0, norm = 0;
};
StepGaps train_side_by_side(testing::TestTrainer& offloaded, testing::TestTrainer& device,
                            const ModelConfig& c, int B, int T, std::mt19937_64& rng) {
  StepGaps worst;
  for (int step = 1; step <= 6; ++step) {
    const auto tokens = step_tokens(c, B, T, rng);
    const StepStats a = offloaded.engine->train_step(micro_batches(tokens, B, T), step);
    const StepStats b = device.engine->train_step(micro_batches(tokens, B, T), step);
    worst.loss = std::max(worst.loss, testing::relative_difference(a.loss, b.loss));
    worst.norm = std::max(worst.norm, testing::relative_difference(a.grad_norm, b.grad_norm));
  }
  return worst;
}

}  // namespace

TEST_CASE("an offloaded optimizer trains to the losses and weights of the device one") {
  // f32: the host adds each micro-batch's reduced gradient into its sum, where the device
  // accumulates the micro-batches' contributions in its gradient buffer before reducing:
  // the same terms in another order (kFp32Parity). The update itself is the same kernel.
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int B = 2, T = 16;
  testing::WorstGaps gaps;
  for (int zero : {0, 1, 2, 3}) {
    for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adamw}) {
      for (float clip : {0.0f, 1.0f}) {
        for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
          CAPTURE(zero);
          CAPTURE(std::string(optimizer_kind_name(kind)));
          CAPTURE(clip);
          CAPTURE(static_cast<int>(family));
          const ModelConfig c = family_config(family, {61, 16, 30, 2, 3, 0, 50});
          const EngineOptions o = options(kind, clip, DType::f32);
          auto offloaded = trainer(c, o, &world, zero, true);
          auto device = trainer(c, o, &world, zero, false);
          std::mt19937_64 rng(11 + world.rank());
          const StepGaps worst = train_side_by_side(offloaded, device, c, B, T, rng);
          const double weight_gap = testing::weight_gap(c, offloaded.params(), device.params());
          gaps.add(worst.loss, worst.norm);
          gaps.add_weights(weight_gap);
          CHECK(worst.loss < testing::kFp32Parity);
          CHECK(worst.norm < testing::kFp32Parity);
          CHECK(weight_gap < testing::kFp32Parity);
        }
      }
    }
  }
  MESSAGE("offloaded vs on the device, " << world.size() << " ranks: " << gaps.summary());
}

TEST_CASE("an offloaded optimizer in a dp x tp mesh trains as the device one does") {
  // Each rank offloads the state of its tensor-parallel slice (its ZeRO shard of it); f32,
  // the same argument and bound as above.
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int B = 2, T = 16, tp = 2, dp = world.size() / tp;
  Mesh mesh(world, MeshShape{dp, tp});
  for (int zero : {0, 3}) {
    for (bool sequence_parallel : {false, true}) {
      CAPTURE(zero);
      CAPTURE(sequence_parallel);
      const ModelConfig c = family_config(ModelFamily::llama, {61, 16, 32, 2, 4, 0, 48});
      EngineOptions o = options(OptimizerKind::adamw, 1.0f, DType::f32);
      o.tensor_parallel = &mesh.tensor_parallel();
      o.data_parallel = dp > 1 ? &mesh.data_parallel() : nullptr;
      o.zero_stage = zero;
      const TpSlice slice{mesh.tp_rank(), tp};
      testing::TestTrainer offloaded(c, o, 0, 1, slice, o.tensor_parallel, 0, true,
                                     sequence_parallel);
      testing::TestTrainer device(c, o, 0, 1, slice, o.tensor_parallel, 0, false,
                                  sequence_parallel);
      std::mt19937_64 rng(17 + mesh.dp_rank());  // the same batches on a replica's tp ranks
      const StepGaps worst = train_side_by_side(offloaded, device, c, B, T, rng);
      CHECK(worst.loss < testing::kFp32Parity);
      CHECK(worst.norm < testing::kFp32Parity);
      // This rank's slices (LLaMA has no undetermined biases to leave out).
      CHECK(testing::relative_distance(offloaded.params(), device.params()) < testing::kFp32Parity);
    }
  }
}

TEST_CASE("bf16 weights with an offloaded optimizer track the device's within bf16 precision") {
  // The device keeps bf16 gradient sums; the host sums in f32. The sums differ at bf16's
  // precision (2^-8 relative), which the bf16 weights mostly absorb, as in the bf16 data-
  // parallel test (measured here: losses within 4e-5 over 6 steps).
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int B = 2, T = 16;
  const ModelConfig c = family_config(ModelFamily::llama, {61, 16, 30, 2, 3, 0, 50});
  for (int zero : {0, 3}) {
    CAPTURE(zero);
    const EngineOptions o = options(OptimizerKind::adamw, 1.0f, DType::bf16);
    auto offloaded = trainer(c, o, &world, zero, true);
    auto device = trainer(c, o, &world, zero, false);
    std::mt19937_64 rng(3 + world.rank());
    const double worst = train_side_by_side(offloaded, device, c, B, T, rng).loss;
    MESSAGE("bf16, ZeRO-" << zero << ": worst relative loss gap " << worst);
    CHECK(worst < 1e-3);
  }
}

TEST_CASE("the memory model holds on both pools with the optimizer offloaded") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  // Odd unit sizes: shards are padded and the last rank owns fewer elements.
  const ModelConfig c = family_config(ModelFamily::gpt2, {61, 16, 30, 2, 3, 0, 50});
  for (int zero : {0, 1, 2, 3}) {
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::sgd}) {
      for (DType dtype : {DType::f32, DType::bf16}) {
        for (float clip : {0.0f, 1.0f}) {
          CAPTURE(zero);
          CAPTURE(std::string(optimizer_kind_name(kind)));
          CAPTURE(std::string(dtype_name(dtype)));
          CAPTURE(clip);
          const EngineOptions o = options(kind, clip, dtype);
          auto t = trainer(c, o, &world, zero, true);
          std::mt19937_64 rng(7 + world.rank());
          for (int step = 1; step <= 2; ++step) {
            t.engine->train_step(micro_batches(step_tokens(c, 3, 16, rng), 3, 16), step);
          }
          RunShape shape{3, 16, dtype, 0, o.optimizer, clip > 0};
          shape.offload_optimizer = true;
          shape.zero_stage = zero;
          shape.ranks = world.size();
          shape.rank = world.rank();
          testing::check_prediction(predict_memory(c, shape), t.alloc, &t.host_alloc);
          // Nothing of the optimizer is left on the device.
          CHECK(t.alloc.peak(MemoryCategory::optimizer_state) == 0);
          CHECK(t.alloc.peak(MemoryCategory::master_params) == 0);
        }
      }
    }
  }
}

TEST_CASE("LOMO and AdaLomo refuse optimizer offload, saying why") {
  const ModelConfig c = family_config(ModelFamily::llama, {61, 16, 30, 2, 3, 0, 50});
  for (OptimizerKind kind : {OptimizerKind::lomo, OptimizerKind::adalomo}) {
    CAPTURE(std::string(optimizer_kind_name(kind)));
    bool refused = false;
    try {
      trainer(c, options(kind, 0.0f, DType::f32), nullptr, 0, true);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("nothing to offload") != std::string::npos;
    }
    CHECK(refused);
  }
}
