#include "parallel/planner/predicted_mfu.h"

#include <cmath>

#include "parallel/flops.h"

namespace llmft {

double predicted_mfu(const PlanRequest& request, const Candidate& candidate) {
  if (!candidate.evaluated || candidate.time.total_s <= 0 || request.device.peak_flops <= 0) {
    return 0;
  }
  const Workload& w = request.workload;
  const double tokens = static_cast<double>(w.global_batch) * w.seq_len;
  return step_throughput(tokens, candidate.time.total_s,
                         training_flops_per_token(w.model, w.seq_len), candidate.layout.world(),
                         request.device.peak_flops)
      .mfu;
}

std::string predicted_mfu_basis(const PlanRequest& request) {
  const DeviceDescription& d = request.device;
  // A calibration measures the streaming kernels' rate; presets leave it 0.
  if (d.memory_bandwidth > 0) return "the rates this job's calibration measured";
  return "the " + d.name + " preset, which prices a step's matrix products at " +
         std::to_string(static_cast<int>(std::lround(d.achieved_fraction * 100))) +
         "% of its peak (an assumption, not a per-kernel model)";
}

}  // namespace llmft
