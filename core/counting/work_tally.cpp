#include "core/counting/work_tally.h"

#include <algorithm>
#include <cmath>

namespace llmft {

void WorkTally::add_elementwise(double bytes) {
  ++kernel_calls;
  if (bytes <= 0) return;
  const int size_class = std::min(kSizeClasses - 1, std::max(0, std::ilogb(bytes)));
  elementwise_bytes[size_class] += bytes;
}

void WorkTally::add_gemm(int64_t rows, double flops) {
  ++kernel_calls;
  gemm_flops[rows] += flops;
}

void WorkTally::add_attention(const AttentionShape& shape) {
  ++kernel_calls;
  ++attention[shape];
}

WorkTally WorkTally::minus(const WorkTally& other) const {
  WorkTally d = *this;
  d.kernel_calls -= other.kernel_calls;
  for (int c = 0; c < kSizeClasses; ++c) d.elementwise_bytes[c] -= other.elementwise_bytes[c];
  for (const auto& [rows, flops] : other.gemm_flops) d.gemm_flops[rows] -= flops;
  for (const auto& [shape, calls] : other.attention) d.attention[shape] -= calls;
  return d;
}

double WorkTally::total_gemm_flops() const {
  double total = 0;
  for (const auto& [rows, flops] : gemm_flops) total += flops;
  return total;
}

}  // namespace llmft
