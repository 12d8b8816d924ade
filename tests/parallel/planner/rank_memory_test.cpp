// The planner's memory against the ZeRO paper's bytes per parameter (Rajbhandari et al. 2020):
// mixed-precision AdamW keeps 2 + 2 + 12 = 16 B/param replicated; stage 1 4 + 12/N,
// stage 2 2 + 14/N, stage 3 16/N, plus from stage 2 on the working set of one unit's
// transient f32 gradient. The paper's gradients are fp16 (--grad-accum-dtype stored);
// fp32 gradient sums take 4 bytes: 18, 6 + 12/N, 2 + 16/N and 18/N.
#include <doctest/doctest.h>

#include <algorithm>

#include "parallel/planner/rank_memory.h"

using namespace llmft;

namespace {

double model_state_bytes(const RankMemory& m) {
  double sum = 0;
  for (MemoryCategory c : {MemoryCategory::params, MemoryCategory::master_params,
                           MemoryCategory::grads, MemoryCategory::optimizer_state}) {
    sum += static_cast<double>(m.at_peak[index_of(c)]);
  }
  return sum;
}

// The elements of the model's largest unit: a block, or the embedding / the untied head.
double largest_unit(const ModelConfig& c) {
  const double vocab_rows = static_cast<double>(c.vocab_size) * c.hidden;
  const double blocks =
      static_cast<double>(parameter_count(c)) - 2 * vocab_rows - c.hidden;  // untied llama
  return std::max(blocks / c.n_layer, vocab_rows + c.hidden);
}

}  // namespace

TEST_CASE("ZeRO bytes per parameter at 64 ranks match the ZeRO paper") {
  Workload w;
  w.model = preset_config("llama-13b");
  w.dtype = DType::bf16;
  w.seq_len = 128;
  w.global_batch = 64;
  const double psi = static_cast<double>(parameter_count(w.model));
  const double n = 64;
  const double stored[] = {16, 4 + 12 / n, 2 + 14 / n, 16 / n};
  const double fp32[] = {18, 6 + 12 / n, 2 + 16 / n, 18 / n};
  const DeviceDescription device = device_preset("a100-80g");
  for (int stage = 0; stage <= 3; ++stage) {
    for (GradAccumDtype accum : {GradAccumDtype::stored, GradAccumDtype::fp32}) {
      CAPTURE(stage);
      CAPTURE(grad_accum_dtype_name(accum));
      w.optimizer.grad_accum_dtype = accum;
      const Layout layout{64, 1, stage, 1, 1, true};
      const RankMemory m = predict_rank_memory(w, layout, device);
      const double formula = (accum == GradAccumDtype::stored ? stored : fp32)[stage] * psi;
      const double working_set = stage >= 2 ? 4 * largest_unit(w.model) : 0;
      const double predicted = model_state_bytes(m);
      INFO("predicted " << predicted / psi << " B/param, formula " << formula / psi);
      CHECK(predicted >= 0.99 * formula);
      CHECK(predicted <= 1.01 * (formula + working_set));
      CHECK(m.overhead == device.overhead_bytes);
      CHECK(m.peak == total_bytes(m.at_peak) + m.overhead);
    }
  }
}

TEST_CASE("NCCL's buffers count as comm_buffers on layouts of more than one GPU") {
  Workload w;
  w.model = preset_config("gpt2");
  w.seq_len = 64;
  w.global_batch = 2;
  const DeviceDescription device = device_preset("h100-80g");
  REQUIRE(device.communicator_bytes > 0);
  const int comm = index_of(MemoryCategory::comm_buffers);
  for (const Layout& layout :
       {Layout{1, 1, 0, 2, 1, 0}, Layout{2, 1, 0, 1, 1, 0}, Layout{1, 2, 0, 2, 1, 0}}) {
    CAPTURE(layout.dp);
    CAPTURE(layout.tp);
    const RankMemory m = predict_rank_memory(w, layout, device);
    const size_t nccl = layout.world() > 1 ? device.communicator_bytes : 0;
    // The dry run's own collective buffers, from its prediction, plus NCCL's.
    RunShape shape = run_shape(w, layout, m.dp_rank, m.tp_rank);
    shape.compute = device.compute;
    shape.attention = device.attention_workspace;
    shape.overlapped_comm = device.overlaps_communication;
    const MemoryPrediction p = predict_memory(w.model, shape);
    CHECK(m.at_peak[comm] == p.at_peak[comm] + nccl);
    CHECK(m.peak == total_bytes(m.at_peak) + m.overhead);
  }
}

TEST_CASE("the first and last rank of each group bound every rank") {
  Workload w;
  w.model = preset_config("gpt2");  // vocabulary 50257: padded for tensor parallelism
  w.seq_len = 64;
  w.global_batch = 3;
  for (int zero_stage = 0; zero_stage <= 3; ++zero_stage) {
    CAPTURE(zero_stage);
    const Layout layout{3, 4, zero_stage, 1, 1, false};  // units do not divide by 3
    const RankMemory worst = predict_rank_memory(w, layout, device_preset("cpu"));
    CHECK(worst.overhead == 0);  // no fixed overhead on CPU
    for (int dp_rank = 0; dp_rank < layout.dp; ++dp_rank) {
      for (int tp_rank = 0; tp_rank < layout.tp; ++tp_rank) {
        const MemoryPrediction p = predict_memory(w.model, run_shape(w, layout, dp_rank, tp_rank));
        CHECK(p.peak_total <= worst.peak);
      }
    }
  }
}
