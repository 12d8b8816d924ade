#include "parallel/planner/gpu_kernel_time.h"

#include <algorithm>

namespace llmft {

double KernelSeconds::total() const {
  double s = products + attention_forward + attention_backward + gaps;
  for (const double m : memory_bound) s += m;
  return s;
}

KernelSeconds& KernelSeconds::operator+=(const KernelSeconds& o) {
  products += o.products;
  attention_forward += o.attention_forward;
  attention_backward += o.attention_backward;
  for (int k = 0; k < kKernelKinds; ++k) memory_bound[k] += o.memory_bound[k];
  gaps += o.gaps;
  product_flops += o.product_flops;
  attention_forward_flops += o.attention_forward_flops;
  attention_backward_flops += o.attention_backward_flops;
  return *this;
}

KernelSeconds KernelSeconds::scaled(double f) const {
  KernelSeconds s = *this;
  s.products *= f;
  s.attention_forward *= f;
  s.attention_backward *= f;
  for (double& m : s.memory_bound) m *= f;
  s.gaps *= f;
  s.product_flops *= f;
  s.attention_forward_flops *= f;
  s.attention_backward_flops *= f;
  return s;
}

bool gpu_kernel_model_applies(const GpuKernelModel& model, DType dtype) {
  return model.known() && (dtype == DType::bf16 || dtype == DType::f16);
}

// Tallies are differences of runs: a negative entry is rounding in nothing and counts as
// none.
KernelSeconds gpu_kernel_seconds(const WorkTally& t, const GpuKernelModel& model, double peak_flops,
                                 AttentionWorkspaceRule attention) {
  KernelSeconds s;
  for (const auto& [shape, calls] : t.gemm_calls) {
    if (calls <= 0) continue;
    const auto [m, n, k] = shape;
    const double flops = 2.0 * static_cast<double>(calls) * static_cast<double>(m) *
                         static_cast<double>(n) * static_cast<double>(k);
    s.product_flops += flops;
    s.products += flops / (peak_flops * gemm_efficiency(model, m, n, k));
  }
  for (const auto& [shape, calls] : t.attention) {
    if (calls <= 0) continue;
    const auto [batch, length, heads, kv_heads, head_dim, backward] = shape;
    // The benchmarks' count: 4 x batch x heads x T^2 x head_dim, halved by the causal
    // mask, 2.5 times that backward.
    const double flops = static_cast<double>(calls) * 2.0 * static_cast<double>(batch) *
                         static_cast<double>(heads) * static_cast<double>(length) *
                         static_cast<double>(length) * static_cast<double>(head_dim) *
                         (backward ? 2.5 : 1.0);
    const double rate = attention_flops_per_s(model, head_dim, length, backward);
    // The deterministic backward: four of its five equal products fused, then dQ on its own.
    constexpr double kDqShare = 1.0 / 5;
    const bool dq_pass = backward && attention == AttentionWorkspaceRule::cudnn_deterministic;
    const double seconds = dq_pass ? (1 - kDqShare) * flops / rate +
                                         kDqShare * flops / model.deterministic_dq_flops_per_s
                                   : flops / rate;
    (backward ? s.attention_backward_flops : s.attention_forward_flops) += flops;
    (backward ? s.attention_backward : s.attention_forward) += seconds;
  }
  for (int k = 0; k < kKernelKinds; ++k) {
    s.memory_bound[k] = std::max(0.0, t.kernel_bytes[k]) / model.memory_bandwidth;
  }
  s.gaps = static_cast<double>(std::max<int64_t>(0, t.kernel_calls)) * model.kernel_gap_s;
  return s;
}

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::copy:
      return "copies and conversions";
    case KernelKind::add:
      return "residual adds";
    case KernelKind::norm:
      return "norms";
    case KernelKind::rope:
      return "rotary embedding";
    case KernelKind::activation:
      return "activations";
    case KernelKind::embedding:
      return "embedding";
    case KernelKind::cross_entropy:
      return "cross-entropy";
    case KernelKind::reduction:
      return "reductions (gradient norm)";
    case KernelKind::optimizer:
      return "optimizer update";
  }
  return "";
}

}  // namespace llmft
