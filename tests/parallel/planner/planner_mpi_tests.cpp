// The memory model and the planner on real runs under mpiexec -n 4 (CPU allocator):
// the prediction equals the measured peak to the byte, in total and per category, on every
// rank across families x dtypes x optimizers x ZeRO stages x tp (with and without
// sequence parallelism) x checkpointing x micro-batch; and the layout the planner chooses for a
// memory budget trains under that budget (the allocator refuses any allocation past it) at the
// predicted peak. And the calibration behind the time model measures every collective a
// step runs, agreed on by every rank, and ranks whose devices differ plan alike.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "comm/mpi_communicator.h"
#include "core/cpu/cpu_backend.h"
#include "launch/plan_agreement.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"
#include "parallel/planner/device_benchmark.h"
#include "parallel/planner/planner.h"
#include "tests/support/memory_checks.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::random_tokens;

namespace {

ModelConfig model(ModelFamily family) {
  return testing::family_config(family, {61, 16, 32, 2, 4, 0, 48});
}

// The matrix's training options: clipping, SGD with momentum, fp16 with loss scaling.
EngineOptions matrix_options(DType dtype, OptimizerKind kind) {
  EngineOptions o;
  o.dtype = dtype;
  o.optimizer.kind = kind;
  o.optimizer.momentum = kind == OptimizerKind::sgd ? 0.9f : 0.0f;
  o.clip_grad = 1.0f;
  o.loss_scale = LossScaleConfig{dtype == DType::f16, 1024.0f, 1000};
  return o;
}

// One layout's trainer on this rank of the world.
struct MeshTrainer {
  Mesh mesh;
  int zero_stage;
  testing::TestTrainer trainer;

  MeshTrainer(Communicator& world, const ModelConfig& c, EngineOptions o, int tp, int zero,
              int checkpointed_blocks, size_t budget = 0, bool offload = false,
              bool sequence_parallel = false)
      : mesh(world, MeshShape{world.size() / tp, tp}),
        zero_stage(zero),
        trainer(c, with_groups(o, mesh, zero), checkpointed_blocks, 1, TpSlice{mesh.tp_rank(), tp},
                tp > 1 ? &mesh.tensor_parallel() : nullptr, budget, offload, sequence_parallel) {}

  static EngineOptions with_groups(EngineOptions o, Mesh& mesh, int zero) {
    o.data_parallel = mesh.shape().dp > 1 ? &mesh.data_parallel() : nullptr;
    o.tensor_parallel = mesh.shape().tp > 1 ? &mesh.tensor_parallel() : nullptr;
    o.zero_stage = zero;
    return o;
  }

  // Two steps of `accum` micro-batches of `micro` windows.
  void train(int micro, int accum, int seq, int vocab) {
    std::mt19937_64 rng(7);
    for (int step = 1; step <= 2; ++step) {
      std::vector<std::vector<int32_t>> tokens;
      std::vector<MicroBatch> batches;
      for (int m = 0; m < accum; ++m) tokens.push_back(random_tokens(micro * seq, vocab, rng));
      for (const auto& t : tokens) batches.push_back(MicroBatch{micro, seq, t.data(), t.data()});
      trainer.engine->train_step(batches, step);
    }
  }

  RunShape shape(const RunShape& base) const {
    RunShape s = base;
    s.zero_stage = zero_stage;
    s.ranks = mesh.shape().dp;
    s.rank = mesh.dp_rank();
    s.tp = mesh.shape().tp;
    s.tp_rank = mesh.tp_rank();
    return s;
  }
};

}  // namespace

TEST_CASE("the memory model equals the measured peak on every rank across the matrix") {
  MpiCommunicator world(MPI_COMM_WORLD, 120);
  const int T = 8;
  int runs = 0;
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    const ModelConfig c = model(family);
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adamw, OptimizerKind::lomo,
                                 OptimizerKind::adalomo}) {
        for (int zero : {0, 1, 2, 3}) {
          for (int tp : {1, 2}) {
            for (int checkpointed : {0, 1, c.n_layer}) {  // none, the first block, all
              for (int micro : {1, 3}) {
                for (bool sequence_parallel : {false, true}) {
                  if (sequence_parallel && tp == 1) continue;  // it splits over the tp group
                  CAPTURE(sequence_parallel);
                  CAPTURE(std::string(family_name(family)));
                  CAPTURE(std::string(dtype_name(dtype)));
                  CAPTURE(std::string(optimizer_kind_name(kind)));
                  CAPTURE(zero);
                  CAPTURE(tp);
                  CAPTURE(checkpointed);
                  CAPTURE(micro);
                  const EngineOptions o = matrix_options(dtype, kind);
                  const int accum = is_fused(kind) ? 1 : 2;
                  MeshTrainer t(world, c, o, tp, zero, checkpointed, 0, false, sequence_parallel);
                  t.train(micro, accum, T, c.vocab_size);
                  RunShape base{micro, T, dtype, checkpointed, o.optimizer, true};
                  base.sequence_parallel = sequence_parallel;
                  testing::check_prediction(predict_memory(c, t.shape(base)), t.trainer.alloc);
                  ++runs;
                }
              }
            }
          }
        }
      }
    }
  }
  if (world.rank() == 0) {
    MESSAGE(runs << " runs x 4 ranks: every prediction equal to the measured peak");
  }
}

TEST_CASE("with the optimizer offloaded both pools equal their measured peaks on every rank") {
  MpiCommunicator world(MPI_COMM_WORLD, 120);
  const int T = 8, micro = 3;
  int runs = 0;
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    const ModelConfig c = model(family);
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adamw}) {
        for (int zero : {0, 1, 2, 3}) {
          for (int tp : {1, 2}) {
            CAPTURE(std::string(family_name(family)));
            CAPTURE(std::string(dtype_name(dtype)));
            CAPTURE(std::string(optimizer_kind_name(kind)));
            CAPTURE(zero);
            CAPTURE(tp);
            const EngineOptions o = matrix_options(dtype, kind);
            MeshTrainer t(world, c, o, tp, zero, 0, 0, true);
            t.train(micro, 2, T, c.vocab_size);
            RunShape base{micro, T, dtype, 0, o.optimizer, true};
            base.offload_optimizer = true;
            testing::check_prediction(predict_memory(c, t.shape(base)), t.trainer.alloc,
                                      &t.trainer.host_alloc);
            ++runs;
          }
        }
      }
    }
  }
  if (world.rank() == 0) {
    MESSAGE(runs << " offloaded runs x 4 ranks: both pools equal to the measured peaks");
  }
}

TEST_CASE("the planner's choice for a memory budget trains within it at the predicted peak") {
  MpiCommunicator world(MPI_COMM_WORLD, 120);
  const ModelConfig c = model(ModelFamily::llama);
  PlanRequest request;
  request.workload.model = c;
  request.workload.optimizer.kind = OptimizerKind::adamw;
  request.workload.dtype = DType::bf16;
  request.workload.seq_len = 16;
  request.workload.global_batch = 8;
  request.workload.clip_grad = true;
  request.world = world.size();
  request.device = device_preset("cpu");
  request.device.memory_bytes = size_t{1} << 30;
  // The peaks of the layouts that fit a roomy budget, from the largest to the smallest.
  size_t largest = 0, smallest = SIZE_MAX;
  for (const Candidate& candidate : plan_layouts(request).candidates) {
    if (!candidate.fits) continue;
    largest = std::max(largest, candidate.memory.peak);
    smallest = std::min(smallest, candidate.memory.peak);
  }
  REQUIRE(smallest < largest);
  // From roomy to tight: the planner gives up speed for memory as the budget shrinks.
  for (double fraction : {1.0, 0.6, 0.3, 0.0}) {
    CAPTURE(fraction);
    const double budget = smallest + fraction * static_cast<double>(largest - smallest);
    request.device.memory_bytes = static_cast<size_t>(budget / (1.0 - request.memory_margin)) + 1;
    const PlanResult result = plan_layouts(request);
    REQUIRE(result.chosen() != nullptr);
    const Layout l = result.chosen()->layout;
    CAPTURE(describe_layout(l));
    if (world.rank() == 0) MESSAGE(fraction << " of the roomy peak: " << describe_layout(l));
    EngineOptions o;
    o.dtype = DType::bf16;
    o.clip_grad = 1.0f;
    // The allocator refuses (throws) any allocation past the usable budget.
    MeshTrainer t(world, c, o, l.tp, l.zero_stage, l.checkpointed_blocks, result.usable_bytes,
                  l.offload_optimizer, l.sequence_parallel);
    t.train(l.micro_batch, l.grad_accum, 16, c.vocab_size);
    CHECK(t.trainer.alloc.total_peak() <= result.usable_bytes);
    CHECK(result.chosen()->memory.host_peak == t.trainer.host_alloc.total_peak());
    // On CPU the planner adds no device overhead: its peak is the memory model's.
    CHECK(result.chosen()->memory.peak == t.trainer.alloc.total_peak());
  }
}

namespace {

// Every link figure of `c`, in order.
std::vector<double> link_figures(const Calibration& c) {
  std::vector<double> figures;
  for (const Link* link : {&c.intra_node, &c.inter_node}) {
    for (const Collective op : kLinkCollectives) {
      figures.push_back(link->rate(op).bandwidth);
      figures.push_back(link->rate(op).latency_s);
    }
  }
  return figures;
}

// Whether every rank holds the same `figures`.
bool same_on_every_rank(const std::vector<double>& figures) {
  std::vector<double> lowest(figures.size()), highest(figures.size());
  const int n = static_cast<int>(figures.size());
  MPI_Allreduce(figures.data(), lowest.data(), n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(figures.data(), highest.data(), n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lowest == highest;
}

void check_measured(const Link& link) {
  REQUIRE(link.known());
  for (const Collective op : kLinkCollectives) {
    CAPTURE(std::string(collective_name(op)));
    CHECK(std::isfinite(link.rate(op).bandwidth));
    CHECK(link.rate(op).bandwidth > 0);
    CHECK(link.rate(op).latency_s > 0);
  }
}

}  // namespace

TEST_CASE("calibration measures each collective over the node, the same figures on every rank") {
  MpiCommunicator world(MPI_COMM_WORLD, 120);
  CpuBackend backend;
  backend.set_threads(1);
  Allocator allocator(backend.memory(), 0);
  SUBCASE("one node") {
    // All four ranks on this machine: the node is the world, and no link crosses nodes.
    const Calibration c = measure_devices(backend, allocator, &world, &world, "cpu", DType::f32);
    check_measured(c.intra_node);
    CHECK_FALSE(c.inter_node.known());
  }
  // Ranks split into "nodes" by `node_of_rank`: every rank must hold both links, measured,
  // and the same figures (the slowest node's), or ranks of two nodes could choose
  // different layouts.
  const auto check_across_nodes = [&](int node_of_rank) {
    const std::unique_ptr<Communicator> node = world.split(node_of_rank, world.rank());
    const Calibration c =
        measure_devices(backend, allocator, &world, node.get(), "cpu", DType::f32);
    check_measured(c.intra_node);
    check_measured(c.inter_node);
    CHECK(same_on_every_rank(link_figures(c)));
  };
  SUBCASE("two nodes of two ranks") {
    check_across_nodes(world.rank() / 2);  // each pair measures its own intra-node link
  }
  SUBCASE("a node of one rank beside a node of three") {
    check_across_nodes(world.rank() == 0 ? 0 : 1);  // rank 0's node measures none
  }
}

TEST_CASE("ranks whose devices differ plan for the same device and train rank 0's layout") {
  MpiCommunicator world(MPI_COMM_WORLD, 120);
  CpuBackend backend;
  Allocator allocator(backend.memory(), 0);
  constexpr size_t kMiB = size_t{1} << 20;
  const int r = world.rank();
  // Rank r: 1000 + r MiB of memory of which its overheads take 10 r + 0.5 MiB and 3 r MiB,
  // 50 + r MiB of host memory, 100 - r GFLOP/s, 8 - r devices on its node.
  DeviceDescription mine = device_preset("h100-80g");
  mine.overhead_bytes = static_cast<size_t>(10 * r) * kMiB + kMiB / 2;
  mine.communicator_bytes = static_cast<size_t>(3 * r) * kMiB;
  mine.memory_bytes = static_cast<size_t>(1000 + r) * kMiB;
  mine.host_memory_bytes = static_cast<size_t>(50 + r) * kMiB + 123;
  mine.peak_flops = (100.0 - r) * 1e9;
  mine.gpus_per_node = 8 - r;
  const DeviceDescription agreed = agreed_device(backend, allocator, &world, mine);
  const int last = world.size() - 1;
  // The largest overheads (the last rank's, whole MiB up), beside the least memory left
  // for the step: rank r leaves 1000 + r - 13 r - 0.5 MiB, least on the last rank (whole
  // MiB down).
  const size_t overhead = static_cast<size_t>(10 * last + 1) * kMiB;
  const size_t communicators = static_cast<size_t>(3 * last) * kMiB;
  const size_t left = static_cast<size_t>(1000 - 12 * last - 1) * kMiB;
  CHECK(agreed.overhead_bytes == overhead);
  CHECK(agreed.communicator_bytes == communicators);
  CHECK(agreed.memory_bytes == left + overhead + communicators);
  CHECK(agreed.host_memory_bytes == 50 * kMiB);
  CHECK(agreed.peak_flops == doctest::Approx((100.0 - last) * 1e9).epsilon(1e-6));  // in f32
  CHECK(agreed.gpus_per_node == 8 - last);
  std::vector<double> figures{static_cast<double>(agreed.memory_bytes), agreed.peak_flops};
  CHECK(same_on_every_rank(figures));

  // Each rank proposes a layout of its own; all train rank 0's.
  const Layout proposed{4 - r, 1 + r, r % 4, 2 + r, 1, r, r % 2 == 1, r % 2 == 0};
  const Layout chosen = lead_layout(backend, allocator, &world, proposed);
  CHECK(chosen.dp == 4);
  CHECK(chosen.tp == 1);
  CHECK(chosen.zero_stage == 0);
  CHECK(chosen.micro_batch == 2);
  CHECK(chosen.checkpointed_blocks == 0);
  CHECK_FALSE(chosen.offload_optimizer);
  CHECK(chosen.sequence_parallel);
}
