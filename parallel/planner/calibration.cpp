#include "parallel/planner/calibration.h"

namespace llmft {

DeviceDescription calibrated(DeviceDescription preset, const Calibration& c) {
  if (c.gemm_flops > 0) {
    preset.peak_flops = c.gemm_flops;
    preset.gemm_half_rate_rows = c.gemm_half_rate_rows;
  }
  if (c.memory_bandwidth > 0) {
    preset.memory_bandwidth = c.memory_bandwidth;
    preset.kernel_call_s = c.kernel_call_s;
  }
  if (c.intra_node.known()) preset.intra_node = c.intra_node;
  if (c.inter_node.known()) preset.inter_node = c.inter_node;
  return preset;
}

}  // namespace llmft
