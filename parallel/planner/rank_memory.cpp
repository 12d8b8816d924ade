#include "parallel/planner/rank_memory.h"

#include <vector>

namespace llmft {

namespace {

std::vector<int> first_and_last(int group_size) {
  if (group_size == 1) return {0};
  return {0, group_size - 1};
}

}  // namespace

RankMemory predict_rank_memory(const Workload& workload, const Layout& layout,
                               const DeviceDescription& device) {
  RankMemory worst;
  const size_t communicators = layout.world() > 1 ? device.communicator_bytes : 0;
  for (int dp_rank : first_and_last(layout.dp)) {
    for (int tp_rank : first_and_last(layout.tp)) {
      RunShape shape = run_shape(workload, layout, dp_rank, tp_rank);
      shape.compute = device.compute;
      shape.attention = device.attention_workspace;
      shape.overlapped_comm = device.overlaps_communication;
      const MemoryPrediction p = predict_memory(workload.model, shape);
      if (p.host_peak_total > worst.host_peak) {
        worst.host_peak = p.host_peak_total;
        worst.host_by_category = p.host_peak_by_category;
      }
      const size_t peak = p.peak_total + communicators + device.overhead_bytes;
      if (peak <= worst.peak) continue;
      worst.at_peak = p.at_peak;
      worst.at_peak[index_of(MemoryCategory::comm_buffers)] += communicators;
      worst.overhead = device.overhead_bytes;
      worst.peak = peak;
      worst.peak_phase = p.peak_phase;
      worst.dp_rank = dp_rank;
      worst.tp_rank = tp_rank;
    }
  }
  return worst;
}

}  // namespace llmft
