// Tensor parallelism under mpiexec (-n 2 and -n 4): each tensor-parallel layer against its
// single-rank twin (outputs and every gradient), the vocabulary-parallel embedding, head
// and cross-entropy with a padded vocabulary, whole-model training against one rank for
// tp = world and dp x tp meshes with ZeRO 0 and 3 (AdamW, LOMO and AdaLomo, whose
// statistics are summed over the slices), each with and without sequence parallelism, the
// memory model on every rank, sequence parallelism's activation savings, and the
// tensor-parallel traffic of a step against the time model's list of collectives.
// Checks are CHECKs so that every rank enters every collective.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "comm/mpi_communicator.h"
#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"
#include "parallel/planner/step_collectives.h"
#include "parallel/tp_gather.h"
#include "tests/support/memory_checks.h"
#include "tests/support/parity.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::kFp32Parity;
using testing::random_tokens;
using testing::relative_gap;

namespace {

// Heads, kv heads and MLP width divide 1, 2 and 4; the vocabulary (61) is padded.
ModelConfig tp_config(ModelFamily family) {
  return testing::family_config(family, {61, 16, 32, 2, 8, 0, 48});
}

std::vector<float> random_vector(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

Tensor host(std::vector<float>& v, Shape shape) {
  return Tensor(v.data(), DType::f32, std::move(shape));
}

// The whole model's weights, gathered from this rank's slices (collective).
std::vector<float> whole_params(testing::TestTrainer& t, const ModelConfig& c, Communicator* tp) {
  const std::vector<UnitLayout> whole = unit_layouts(c);
  std::vector<float> all;
  for (size_t u = 0; u < whole.size(); ++u) {
    const std::vector<float> p = gather_tp_unit(tp, t.be, t.alloc, whole[u], t.model->units()[u],
                                                t.engine->read_params(static_cast<int>(u)));
    all.insert(all.end(), p.begin(), p.end());
  }
  return all;
}

EngineOptions options(OptimizerKind kind) {
  return testing::parity_options(kind, 8);
}

}  // namespace

TEST_CASE("each tensor-parallel block equals its single-rank twin: output and every gradient") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const TpSlice slice{world.rank(), world.size()};
  CpuBackend be;
  be.set_threads(1);
  Allocator alloc(be.memory(), 0);
  const int B = 2, T = 8;
  const int64_t N = B * T;
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    CAPTURE(std::string(family_name(family)));
    const ModelConfig c = tp_config(family);
    const std::unique_ptr<Family> f = make_family(family);
    const UnitLayout whole = f->block_layout(c, 0, TpSlice{});
    const UnitLayout local = f->block_layout(c, 0, slice);
    std::mt19937_64 rng(11);  // the same values on every rank
    std::vector<float> whole_params = random_vector(whole.numel, rng);
    std::vector<float> local_params = slice_unit(whole, local, slice, whole_params);
    std::vector<float> x = random_vector(N * c.hidden, rng);
    const std::vector<float> dout = random_vector(N * c.hidden, rng);

    struct Result {
      std::vector<float> out, dx, grads;
    };
    std::vector<int32_t> positions(static_cast<size_t>(N));  // one stream per row
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i % T);
    const Tensor position_tensor(positions.data(), DType::i32, {B, T});
    auto run = [&](const UnitLayout& layout, std::vector<float>& params, TpSlice s,
                   ReduceGroup* group) {
      const BlockContext ctx{be,       alloc, c,    BlockShape{B, T}, 0, position_tensor,
                             Tensor(), s,     group};
      BlockSaved saved;
      f->block_forward(ctx, layout, host(params, {layout.numel}), host(x, {N, c.hidden}), saved);
      Result r;
      r.out.resize(N * c.hidden);
      be.copy_to_host(r.out.data(), ctx.view(saved.out, {N, c.hidden}));
      r.dx = dout;
      r.grads.assign(layout.numel, 0.0f);
      f->block_backward(ctx, layout, host(params, {layout.numel}), host(r.grads, {layout.numel}),
                        host(x, {N, c.hidden}), saved, host(r.dx, {N, c.hidden}));
      return r;
    };
    const Result one = run(whole, whole_params, TpSlice{}, nullptr);
    const Result many = run(local, local_params, slice, &world);
    // Row-parallel layers add the slices' partial products over the group instead of in
    // one GEMM: the same sums in another order (tests/support/parity.h).
    CHECK(relative_gap(many.out, one.out) < kFp32Parity);
    CHECK(relative_gap(many.dx, one.dx) < kFp32Parity);
    CHECK(relative_gap(many.grads, slice_unit(whole, local, slice, one.grads)) < kFp32Parity);
  }
}

TEST_CASE("vocabulary-parallel embedding, LM head and cross-entropy equal one rank") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const TpSlice slice{world.rank(), world.size()};
  const int B = 2, T = 8;
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    CAPTURE(std::string(family_name(family)));
    ModelConfig c = tp_config(family);
    c.n_layer = 1;
    EngineOptions o = options(OptimizerKind::adamw);
    o.schedule = LrSchedule{LrShape::constant, 0.0f, 0.0f, 0, 1};
    o.clip_grad = 0.0f;
    EngineOptions sliced = o;
    sliced.tensor_parallel = &world;
    testing::TestTrainer single(c, o, 0, 1);
    testing::TestTrainer parallel(c, sliced, 0, 1, slice, &world);
    std::mt19937_64 rng(3);
    std::vector<int32_t> inputs = random_tokens(B * T, c.vocab_size, rng);
    std::vector<int32_t> targets = random_tokens(B * T, c.vocab_size, rng);
    targets[3] = -1;                // a masked position
    targets[5] = c.vocab_size - 1;  // the last real entry, next to the padding
    const MicroBatch mb{B, T, inputs.data(), targets.data()};
    const StepStats s = single.engine->train_step({mb}, 1);
    const StepStats p = parallel.engine->train_step({mb}, 1);
    // The same sums in another order: the row maxima, exp-sums and target logits over
    // slices of the vocabulary, and the logits' GEMMs over slices of its rows.
    CHECK(testing::relative_difference(p.loss, s.loss) < kFp32Parity);
    CHECK(testing::relative_difference(p.grad_norm, s.grad_norm) < kFp32Parity);
    const std::vector<UnitLayout> whole = unit_layouts(c);
    for (int u = 0; u < static_cast<int>(whole.size()); ++u) {
      CAPTURE(u);
      const std::vector<float> expected = slice_unit(
          whole[u], parallel.model->units()[u], slice,
          whole_from_slice(whole[u], single.model->units()[u], single.engine->read_grads(u)));
      CHECK(relative_gap(parallel.engine->read_grads(u), expected) < kFp32Parity);
    }
  }
}

TEST_CASE("tensor-parallel training equals one rank, alone and in dp x tp meshes with ZeRO") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int n = world.size(), B = 2, T = 16;
  struct Layout {
    int tp, zero;
    bool sequence_parallel;
  };
  std::vector<Layout> layouts = {{n, 0, false}, {n, 0, true}};
  testing::WorstGaps gaps;
  if (n == 4) {
    layouts.insert(layouts.end(), {{2, 0, false}, {2, 3, false}, {2, 0, true}, {2, 3, true}});
  }
  for (Layout layout : layouts) {
    for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
      for (OptimizerKind kind :
           {OptimizerKind::adamw, OptimizerKind::lomo, OptimizerKind::adalomo}) {
        // GPT-2's key bias has a gradient that is zero in exact arithmetic; AdaLomo
        // normalises its rounding residue to a full step of either sign, so AdaLomo is
        // compared on LLaMA (no biases), as in the data-parallel tests.
        if (kind == OptimizerKind::adalomo && family == ModelFamily::gpt2) continue;
        CAPTURE(layout.tp);
        CAPTURE(layout.zero);
        CAPTURE(layout.sequence_parallel);
        CAPTURE(std::string(family_name(family)));
        CAPTURE(std::string(optimizer_kind_name(kind)));
        const ModelConfig c = tp_config(family);
        Mesh mesh(world, MeshShape{n / layout.tp, layout.tp});
        const int dp = n / layout.tp, dp_rank = mesh.dp_rank();
        EngineOptions o = options(kind);
        o.tensor_parallel = &mesh.tensor_parallel();
        o.data_parallel = dp > 1 ? &mesh.data_parallel() : nullptr;
        o.zero_stage = layout.zero;
        testing::TestTrainer parallel(c, o, 0, 1, TpSlice{mesh.tp_rank(), layout.tp},
                                      o.tensor_parallel, 0, false, layout.sequence_parallel);
        testing::TestTrainer single(c, options(kind), 0, 1);
        std::mt19937_64 rng(5);
        double worst_loss = 0, worst_norm = 0;
        for (int step = 1; step <= 8; ++step) {
          const int rows = dp * B;
          const auto inputs = random_tokens(rows * T, c.vocab_size, rng);
          const auto targets = random_tokens(rows * T, c.vocab_size, rng);
          const int32_t* mine_in = inputs.data() + dp_rank * B * T;
          const int32_t* mine_tg = targets.data() + dp_rank * B * T;
          const StepStats p =
              parallel.engine->train_step({MicroBatch{B, T, mine_in, mine_tg}}, step);
          const StepStats s =
              single.engine->train_step({MicroBatch{rows, T, inputs.data(), targets.data()}}, step);
          worst_loss = std::max(worst_loss, testing::relative_difference(p.loss, s.loss));
          worst_norm = std::max(worst_norm, testing::relative_difference(p.grad_norm, s.grad_norm));
        }
        const double weight_gap =
            testing::weight_gap(c, whole_params(parallel, c, o.tensor_parallel), single.params());
        gaps.add(worst_loss, worst_norm);
        gaps.add_weights(weight_gap);
        CHECK(worst_loss < kFp32Parity);
        CHECK(worst_norm < kFp32Parity);
        CHECK(weight_gap < kFp32Parity);
      }
    }
  }
  MESSAGE("tensor parallel on " << n << " ranks vs one, " << gaps.summary());
}

TEST_CASE("the memory model holds on every rank of a dp x tp mesh") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int n = world.size(), tp = 2, dp = n / tp;
  Mesh mesh(world, MeshShape{dp, tp});
  for (int zero : {0, 3}) {
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::lomo, OptimizerKind::adalomo}) {
      for (DType dtype : {DType::f32, DType::bf16}) {
        for (bool sequence_parallel : {false, true}) {
          CAPTURE(sequence_parallel);
          CAPTURE(zero);
          CAPTURE(std::string(optimizer_kind_name(kind)));
          CAPTURE(std::string(dtype_name(dtype)));
          const ModelConfig c = tp_config(ModelFamily::llama);
          EngineOptions o = options(kind);
          o.dtype = dtype;
          o.tensor_parallel = &mesh.tensor_parallel();
          o.data_parallel = dp > 1 ? &mesh.data_parallel() : nullptr;
          o.zero_stage = zero;
          testing::TestTrainer t(c, o, 0, 1, TpSlice{mesh.tp_rank(), tp}, o.tensor_parallel, 0,
                                 false, sequence_parallel);
          std::mt19937_64 rng(9);
          for (int step = 1; step <= 2; ++step) {
            const auto tokens = random_tokens(3 * 16, c.vocab_size, rng);
            t.engine->train_step({MicroBatch{3, 16, tokens.data(), tokens.data()}}, step);
          }
          RunShape shape{3, 16, dtype, 0, o.optimizer, true};
          shape.sequence_parallel = sequence_parallel;
          shape.zero_stage = zero;
          shape.ranks = dp;
          shape.rank = mesh.dp_rank();
          shape.tp = tp;
          shape.tp_rank = mesh.tp_rank();
          testing::check_prediction(predict_memory(c, shape), t.alloc);
        }
      }
    }
  }
}

TEST_CASE("tensor-parallel traffic per step is what the time model prices") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  const int n = world.size(), B = 2, T = 16;
  const ModelConfig c = tp_config(ModelFamily::llama);
  for (bool sequence_parallel : {false, true}) {
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::lomo}) {
      for (int checkpointed : {0, 1, c.n_layer}) {  // none, the first block, all
        CAPTURE(sequence_parallel);
        CAPTURE(std::string(optimizer_kind_name(kind)));
        CAPTURE(checkpointed);
        Mesh mesh(world, MeshShape{1, n});
        EngineOptions o = options(kind);  // clipping: LOMO runs a norm pass
        o.tensor_parallel = &mesh.tensor_parallel();
        testing::TestTrainer t(c, o, checkpointed, 1, TpSlice{mesh.tp_rank(), n}, o.tensor_parallel,
                               0, false, sequence_parallel);
        const int accum = is_fused(kind) ? 1 : 2;
        std::mt19937_64 rng(4);
        std::vector<std::vector<int32_t>> tokens;
        std::vector<MicroBatch> batches;
        for (int m = 0; m < accum; ++m) tokens.push_back(random_tokens(B * T, c.vocab_size, rng));
        for (const auto& tk : tokens) batches.push_back(MicroBatch{B, T, tk.data(), tk.data()});
        mesh.tensor_parallel().reset_counters();
        t.engine->train_step(batches, 1);
        // Counters hold each call's input: a whole buffer, except an all-gather's (a shard).
        CollectiveCounter expected[kCollectiveCount] = {};
        const Workload w{c, o.optimizer, DType::f32, T, B * accum, true};
        const Layout l{1, n, 0, B, accum, checkpointed, false, sequence_parallel};
        for (const CollectiveCall& call : step_collectives(w, l, ComputeRule::f32)) {
          CollectiveCounter& e = expected[static_cast<int>(call.op)];
          const double shards = call.op == Collective::all_gather ? n : 1;
          e.bytes += static_cast<int64_t>(call.bytes / shards) * call.count;
          e.calls += static_cast<int64_t>(call.pieces) * call.count;
        }
        // Besides: the gradient norm's 4-byte sums, one per backward pass.
        const int norm_sums = backward_passes(w);
        expected[static_cast<int>(Collective::all_reduce)].calls += norm_sums;
        expected[static_cast<int>(Collective::all_reduce)].bytes += 4 * norm_sums;
        for (Collective op :
             {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather}) {
          CAPTURE(std::string(collective_name(op)));
          const CollectiveCounter& counted =
              mesh.tensor_parallel().counters()[static_cast<int>(op)];
          CHECK(counted.calls == expected[static_cast<int>(op)].calls);
          CHECK(counted.bytes == expected[static_cast<int>(op)].bytes);
        }
      }
    }
  }
}

TEST_CASE("sequence parallelism divides the residual stream's activations by tp") {
  // With every block checkpointed a block keeps only its input, a stream tensor, which
  // falls by tp. The memory model is the real run's peak to the byte (tested above); the
  // sizes are multiples of the allocator's 512 bytes, so the difference is exact.
  const ModelConfig c = testing::family_config(ModelFamily::llama, {61, 64, 64, 8, 8, 0, 128});
  for (int tp : {2, 4}) {
    CAPTURE(tp);
    RunShape shape{2, 48, DType::f32, c.n_layer, OptimizerConfig{}, true};
    shape.tp = tp;
    shape.tp_rank = 1;
    const MemoryPrediction plain = predict_memory(c, shape);
    shape.sequence_parallel = true;
    const MemoryPrediction split = predict_memory(c, shape);
    const auto activations = [](const MemoryPrediction& p) {
      return static_cast<double>(p.peak_by_category[index_of(MemoryCategory::activations)]);
    };
    // At the peak (the last block's backward) 12 stream tensors of 96 rows x 64 f32 are
    // held: the embedding output and the 8 block outputs, and the recomputed block's two
    // norm outputs and attention residual; everything else is the same. (A hidden size
    // that the logits of a rank's 64 padded vocabulary rows do not outweigh.)
    const double stream = 96.0 * 64 * 4;
    CHECK(activations(plain) - activations(split) == 12 * stream * (1 - 1.0 / tp));
  }
}
