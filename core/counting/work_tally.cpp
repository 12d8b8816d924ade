#include "core/counting/work_tally.h"

namespace llmft {

void WorkTally::add_kernel(KernelKind kind, double bytes) {
  ++kernel_calls;
  kernel_bytes[static_cast<int>(kind)] += bytes;
}

void WorkTally::add_gemm(int64_t rows, const GemmShape& shape) {
  ++kernel_calls;
  const auto [m, n, k] = shape;
  gemm_flops[rows] +=
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  ++gemm_calls[shape];
}

void WorkTally::add_attention(const AttentionShape& shape) {
  ++kernel_calls;
  ++attention[shape];
}

WorkTally WorkTally::minus(const WorkTally& other) const {
  WorkTally d = *this;
  d.kernel_calls -= other.kernel_calls;
  for (int k = 0; k < kKernelKinds; ++k) d.kernel_bytes[k] -= other.kernel_bytes[k];
  for (const auto& [rows, flops] : other.gemm_flops) d.gemm_flops[rows] -= flops;
  for (const auto& [shape, calls] : other.gemm_calls) d.gemm_calls[shape] -= calls;
  for (const auto& [shape, calls] : other.attention) d.attention[shape] -= calls;
  return d;
}

double WorkTally::total_gemm_flops() const {
  double total = 0;
  for (const auto& [rows, flops] : gemm_flops) total += flops;
  return total;
}

}  // namespace llmft
