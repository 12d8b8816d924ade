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
  // The planner charges them: every layout needs more memory with fp32 sums...
  const PlanResult with_fp32 = plan_layouts(fp32);
  for (const Candidate& c : with_fp32.candidates) {
    if (!c.evaluated || c.layout.offload_optimizer) continue;  // offload sums in f32 anyway
    CAPTURE(describe_layout(c.layout));
    CHECK(c.memory.peak > predict_rank_memory(stored.workload, c.layout, stored.device).peak);
  }
  // ...and a device with room for a layout's stored sums but not its fp32 ones takes it
  // only with stored sums.
  const Layout layout{1, 1, 0, 1, 16, 32};
  PlanRequest tight[] = {fp32, stored};
  const size_t between = (predict_rank_memory(fp32.workload, layout, fp32.device).peak +
                          predict_rank_memory(stored.workload, layout, stored.device).peak) /
                         2;
  for (PlanRequest& r : tight) {
    r.world = 1;
    r.memory_margin = 0;
    r.device.memory_bytes = between;
    r.constraints = LayoutConstraints{1, 0, 1, 32, false, false};
  }
  CHECK(plan_layouts(tight[0]).chosen() == nullptr);
  const PlanResult fits_stored = plan_layouts(tight[1]);
  REQUIRE(fits_stored.chosen() != nullptr);
  CHECK(describe_layout(fits_stored.chosen()->layout) == describe_layout(layout));
}
