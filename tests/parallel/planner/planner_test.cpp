// The planner: LOMO fits a 65B model on 8 x 24 GB where AdamW cannot (Lv et al. 2023, at
// their sequence 512 and batch 8),
// explicit layout choices are kept, layouts that cannot keep the global batch are
// rejected with the reason, and the fastest fitting layout is chosen.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/model.h"
#include "parallel/planner/planner.h"

using namespace llmft;

namespace {

PlanRequest llama_65b_on_rtx3090(OptimizerKind optimizer) {
  PlanRequest r;
  r.workload.model = preset_config("llama-65b");
  r.workload.optimizer.kind = optimizer;
  r.workload.dtype = DType::f16;
  r.workload.seq_len = 512;
  r.workload.global_batch = 8;
  r.workload.clip_grad = true;
  r.world = 8;
  r.device = device_preset("rtx3090");
  return r;
}

PlanRequest llama_7b_on_a100(int world, int global_batch) {
  PlanRequest r;
  r.workload.model = preset_config("llama-7b");
  r.workload.dtype = DType::bf16;
  r.workload.seq_len = 512;
  r.workload.global_batch = global_batch;
  r.world = world;
  r.device = device_preset("a100-40g");
  return r;
}

}  // namespace

TEST_CASE("LOMO fits LLaMA-65B on 8 x RTX 3090; AdamW does not") {
  const PlanRequest lomo = llama_65b_on_rtx3090(OptimizerKind::lomo);
  const PlanResult fits = plan_layouts(lomo);
  REQUIRE(fits.chosen() != nullptr);
  const Candidate& chosen = chosen_layout(lomo, fits);
  CHECK(chosen.memory.peak <= fits.usable_bytes);
  CHECK(chosen.layout.grad_accum == 1);  // LOMO cannot accumulate
  CHECK(chosen.layout.micro_batch * chosen.layout.dp == 8);
  // A GPU computes in fp16; charged the CPU backend's f32 working copies, activations
  // and gradients, the same job fits no layout without sequence parallelism (which
  // divides the stream's activations by tp).
  PlanRequest charged_as_cpu = lomo;
  charged_as_cpu.device.compute = ComputeRule::f32;
  charged_as_cpu.constraints.sequence_parallel = false;
  CHECK(plan_layouts(charged_as_cpu).chosen() == nullptr);

  const PlanRequest adamw = llama_65b_on_rtx3090(OptimizerKind::adamw);
  const PlanResult none = plan_layouts(adamw);
  CHECK(none.chosen() == nullptr);
  CHECK_THROWS_WITH_AS(chosen_layout(adamw, none), doctest::Contains("--optimizer lomo"), Error);
  CHECK_THROWS_WITH_AS(chosen_layout(adamw, none), doctest::Contains("no layout of llama-65b"),
                       Error);
  for (const Candidate& c : none.candidates) {
    CHECK_FALSE(c.fits);
    CHECK(c.reason.find(c.evaluated ? "usable" : "not divisible by dp") != std::string::npos);
  }
}

TEST_CASE("the planner keeps explicit layout choices") {
  PlanRequest r = llama_7b_on_a100(8, 16);
  r.constraints.tp = 2;
  r.constraints.zero_stage = 1;
  r.constraints.micro_batch = 2;
  r.constraints.checkpointed_blocks = ModelOptions::kAllBlocks;
  r.constraints.offload_optimizer = true;
  r.constraints.sequence_parallel = true;
  const PlanResult result = plan_layouts(r);
  REQUIRE(result.candidates.size() == 1);
  const Layout& l = result.candidates.front().layout;
  CHECK(l.dp == 4);
  CHECK(l.tp == 2);
  CHECK(l.zero_stage == 1);
  CHECK(l.micro_batch == 2);
  CHECK(l.grad_accum == 2);
  CHECK(l.checkpointed_blocks == 32);  // all of llama-7b's blocks
  CHECK(l.offload_optimizer);
  CHECK(l.sequence_parallel);

  r.constraints.tp = 3;
  CHECK_THROWS_WITH_AS(plan_layouts(r), doctest::Contains("--tp 3 does not divide"), Error);
}

TEST_CASE("the planner searches every layout and ranks the fitting ones by step time") {
  PlanRequest r = llama_7b_on_a100(8, 16);
  // bf16 gradient sums: then some layouts fit only with some of their blocks
  // checkpointed, the search this test counts.
  r.workload.optimizer.grad_accum_dtype = GradAccumDtype::stored;
  const PlanResult result = plan_layouts(r);
  REQUIRE(result.chosen() != nullptr);
  bool fitting = true;
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    const Candidate& c = result.candidates[i];
    CHECK(c.evaluated);
    CHECK(c.layout.micro_batch * c.layout.grad_accum * c.layout.dp == 16);
    CHECK(c.fits ==
          (c.memory.peak <= result.usable_bytes && c.memory.host_peak <= result.usable_host_bytes));
    if (!c.fits) fitting = false;
    CHECK((c.fits || !fitting));  // the fitting ones come first
    if (i > 0 && c.fits) {
      CHECK(result.candidates[i - 1].time.total_s <= c.time.total_s);
    }
  }
  // tp 1, 2, 4, 8 (dp 8, 4, 2, 1) x ZeRO 0-3 (only 0 when dp is 1) x the micro-batches
  // dividing 16 / dp x sequence parallelism off and on (tp > 1) x the optimizer on the
  // device or offloaded x checkpointing of no block and of all 32, plus, where no block
  // does not fit and all do, the fewest first blocks that fit: fewer fit no more.
  size_t partial = 0;
  for (const Candidate& c : result.candidates) {
    const int k = c.layout.checkpointed_blocks;
    if (k == 0 || k == 32) continue;
    ++partial;
    CAPTURE(describe_layout(c.layout));
    CHECK(c.fits);
    Layout fewer = c.layout;
    fewer.checkpointed_blocks = k - 1;
    CHECK(predict_rank_memory(r.workload, fewer, r.device).peak > result.usable_bytes);
  }
  CHECK(partial >= 1);
  const size_t expected = (4 * 2 + (4 * 3 + 4 * 4 + 1 * 5) * 2) * 2 * 2 + partial;
  CHECK(result.candidates.size() == expected);
}

TEST_CASE("offloading the optimizer fits AdamW on one GPU that cannot hold its state") {
  // LLaMA-7B with AdamW in bf16 keeps 16 bytes per parameter for its master weights,
  // gradients and moments (112 GB): no layout of one 40 GB GPU holds them; offloaded, the
  // GPU keeps the bf16 weights and one unit's gradient, the host the rest (12 bytes per
  // parameter: master, gradient sum, two moments at 4 bytes; 16 with the staging).
  PlanRequest r = llama_7b_on_a100(1, 8);
  r.constraints.offload_optimizer = false;
  CHECK(plan_layouts(r).chosen() == nullptr);
  r.constraints.offload_optimizer = std::nullopt;  // searched
  const PlanResult result = plan_layouts(r);
  REQUIRE(result.chosen() != nullptr);
  const Candidate& chosen = *result.chosen();
  CHECK(chosen.layout.offload_optimizer);
  const double params = static_cast<double>(parameter_count(r.workload.model));
  CHECK(chosen.memory.host_peak >= static_cast<size_t>(16 * params));
  CHECK(chosen.memory.host_peak <= result.usable_host_bytes);
  CHECK(chosen.memory.at_peak[index_of(MemoryCategory::optimizer_state)] == 0);
  // Too little host memory: refused with the host pool as the reason.
  r.device.host_memory_bytes = chosen.memory.host_peak / 2;
  r.constraints.offload_optimizer = true;
  const PlanResult starved = plan_layouts(r);
  CHECK(starved.chosen() == nullptr);
  for (const Candidate& c : starved.candidates) {
    if (c.memory.peak <= starved.usable_bytes) CHECK(c.reason.find("host pool") == 0);
  }
  // Nothing to offload for LOMO.
  r.workload.optimizer.kind = OptimizerKind::lomo;
  CHECK_THROWS_WITH_AS(plan_layouts(r), doctest::Contains("nothing to offload"), Error);
}

TEST_CASE("layouts that cannot keep the global batch are rejected with the reason") {
  PlanRequest r = llama_7b_on_a100(6, 8);  // tp 1 or 2: dp 6 or 3
  const PlanResult result = plan_layouts(r);
  REQUIRE(result.candidates.size() == 2);
  CHECK(result.chosen() == nullptr);
  CHECK(result.candidates[1].reason == "global batch 8 not divisible by dp 3");
  CHECK_THROWS_WITH_AS(chosen_layout(r, result), doctest::Contains("no layout keeps the global"),
                       Error);

  PlanRequest lomo = llama_7b_on_a100(2, 8);
  lomo.workload.optimizer.kind = OptimizerKind::lomo;
  lomo.constraints.tp = 1;
  lomo.constraints.micro_batch = 2;
  const PlanResult accumulating = plan_layouts(lomo);
  REQUIRE(accumulating.candidates.size() == 1);
  CHECK(accumulating.candidates[0].reason ==
        "lomo cannot accumulate gradients (micro-batch 2 would need 2 per step)");
}

TEST_CASE("the memory margin decides what fits") {
  PlanRequest r = llama_7b_on_a100(1, 1);
  r.constraints.checkpointed_blocks = ModelOptions::kAllBlocks;
  r.workload.optimizer.kind = OptimizerKind::lomo;
  const size_t peak = plan_layouts(r).candidates.front().memory.peak;
  r.device.memory_bytes = peak;
  r.memory_margin = 0;
  CHECK(plan_layouts(r).chosen() != nullptr);
  r.memory_margin = 0.05;
  const PlanResult tight = plan_layouts(r);
  CHECK(tight.chosen() == nullptr);
  CHECK(tight.candidates.front().reason.find(" > ") != std::string::npos);
  r.memory_margin = 1;
  CHECK_THROWS_WITH_AS(plan_layouts(r), doctest::Contains("--memory-margin"), Error);
}
