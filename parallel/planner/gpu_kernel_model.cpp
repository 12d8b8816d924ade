#include "parallel/planner/gpu_kernel_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace llmft {

namespace {

constexpr double kTera = 1e12;

// TFLOP/s, cuDNN 9 on an H100 SXM5, FP16 (FlashAttention-3, Shah et al. 2024, figures 5
// and 6: forward and backward without a causal mask; forward with it at head size 64).
LengthCurve tflops(std::initializer_list<std::pair<int64_t, double>> points) {
  LengthCurve curve;
  for (const auto& [length, t] : points) curve.push_back({length, t * kTera});
  return curve;
}

}  // namespace

GpuKernelModel hopper_kernel_model(double hbm_bandwidth) {
  GpuKernelModel m;
  // cuBLAS bf16 on an H100: 177, 677, 789, 798 TFLOP/s for squares of 1024 to 8192.
  m.gemm_peak_fraction = 0.84;
  m.gemm_k_half = 256;
  m.sms = 132;
  m.attention = {
      {64, tflops({{512, 335}, {1024, 373}, {2048, 395}, {4096, 408}, {8192, 412}, {16384, 413}}),
       tflops({{512, 266}, {1024, 348}, {2048, 395}, {4096, 417}, {8192, 432}, {16384, 433}})},
      {128, tflops({{512, 497}, {1024, 574}, {2048, 617}, {4096, 609}, {8192, 600}, {16384, 595}}),
       tflops({{512, 305}, {1024, 408}, {2048, 465}, {4096, 499}, {8192, 518}, {16384, 516}})},
  };
  // Head size 64 forward with the mask (225, 288, 334, 363, 379, 388) over without it.
  m.causal_factor = {{512, 225.0 / 335},  {1024, 288.0 / 373}, {2048, 334.0 / 395},
                     {4096, 363.0 / 408}, {8192, 379.0 / 412}, {16384, 388.0 / 413}};
  // cuDNN's deterministic dQ pass (`matmul_dq`) on an H200, Nsight Compute, one step of
  // TinyLlama-1.1B (8 x 2048, 32 heads of 64): 10.8 ms for 22 layers' 1.51e12 FLOPs.
  m.deterministic_dq_flops_per_s = 140 * kTera;
  // A streaming kernel reaches about 90% of the datasheet's HBM bandwidth.
  m.memory_bandwidth = 0.9 * hbm_bandwidth;
  m.kernel_gap_s = 2e-6;
  return m;
}

double gemm_efficiency(const GpuKernelModel& model, int64_t m, int64_t n, int64_t k) {
  const int64_t tiles = ((m + model.gemm_tile_m - 1) / model.gemm_tile_m) *
                        ((n + model.gemm_tile_n - 1) / model.gemm_tile_n);
  const int64_t waves = (tiles + model.sms - 1) / model.sms;
  const double filled = static_cast<double>(tiles) / static_cast<double>(waves * model.sms);
  const double main_loop = static_cast<double>(k) / (static_cast<double>(k) + model.gemm_k_half);
  return model.gemm_peak_fraction * filled * main_loop;
}

double curve_at(const LengthCurve& curve, int64_t length) {
  if (length <= curve.front().first) return curve.front().second;
  if (length >= curve.back().first) return curve.back().second;
  size_t i = 1;
  while (curve[i].first < length) ++i;
  const auto& [l0, v0] = curve[i - 1];
  const auto& [l1, v1] = curve[i];
  const double t =
      std::log2(static_cast<double>(length) / l0) / std::log2(static_cast<double>(l1) / l0);
  return v0 + t * (v1 - v0);
}

double attention_flops_per_s(const GpuKernelModel& model, int64_t head_dim, int64_t length,
                             bool backward) {
  const AttentionRates* nearest = &model.attention.front();
  for (const AttentionRates& a : model.attention) {
    if (std::llabs(a.head_dim - head_dim) < std::llabs(nearest->head_dim - head_dim)) nearest = &a;
  }
  const double thin = std::min(1.0, static_cast<double>(head_dim) / nearest->head_dim);
  const double unmasked = curve_at(backward ? nearest->backward : nearest->forward, length);
  return unmasked * thin * curve_at(model.causal_factor, length);
}

}  // namespace llmft
