// The planner under --grad-accum-dtype: bf16 weights' gradient sums take 4 bytes per element
// with fp32 and 2 with stored, in the memory the planner predicts and in the layouts it
// finds to fit.
#include <doctest/doctest.h>

#include "core/model.h"
#include "parallel/planner/planner.h"

using namespace llmft;

namespace {

PlanRequest llama_7b_on_a100(GradAccumDtype accum) {
  PlanRequest r;
  r.workload.model = preset_config("llama-7b");
  r.workload.dtype = DType::bf16;
  r.workload.optimizer.grad_accum_dtype = accum;
  r.workload.seq_len = 512;
  r.workload.global_batch = 16;
  r.world = 8;
  r.device = device_preset("a100-40g");
  return r;
}

size_t fitting(const PlanResult& result) {
  size_t n = 0;
  for (const Candidate& c : result.candidates) n += c.fits ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("fp32 gradient sums double the planned gradients of bf16 weights") {
  const PlanRequest fp32 = llama_7b_on_a100(GradAccumDtype::fp32);
  const PlanRequest stored = llama_7b_on_a100(GradAccumDtype::stored);
  // Gradient sums are whole units under ZeRO 0-1 and shards under ZeRO-2 (the device's
  // ZeRO-2 peak may hold a transient unit gradient besides, in bf16 either way).
  for (int zero : {0, 1}) {
    CAPTURE(zero);
    const Layout layout{8, 1, zero, 1, 2, 32};
    const size_t grads = index_of(MemoryCategory::grads);
    const RankMemory wide = predict_rank_memory(fp32.workload, layout, fp32.device);
    const RankMemory narrow = predict_rank_memory(stored.workload, layout, stored.device);
    CHECK(wide.at_peak[grads] == 2 * narrow.at_peak[grads]);
    CHECK(wide.peak > narrow.peak);
  }
  // The planner charges them: every layout needs more memory, so fewer fit.
  const PlanResult with_fp32 = plan_layouts(fp32);
  const PlanResult with_stored = plan_layouts(stored);
  REQUIRE(with_fp32.chosen() != nullptr);
  for (const Candidate& c : with_fp32.candidates) {
    if (!c.evaluated || c.layout.offload_optimizer) continue;  // offload sums in f32 anyway
    CAPTURE(describe_layout(c.layout));
    CHECK(c.memory.peak > predict_rank_memory(stored.workload, c.layout, stored.device).peak);
  }
  MESSAGE("llama-7b bf16 on 8 x a100-40g: " << fitting(with_fp32) << " layouts fit with fp32 "
                                            << "gradient sums, " << fitting(with_stored)
                                            << " with stored; chosen "
                                            << describe_layout(with_fp32.chosen()->layout));
  CHECK(fitting(with_fp32) < fitting(with_stored));
}
