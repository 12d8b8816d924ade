// GpuKernelModel: what one GPU's libraries reach, kernel by kernel, from published
// measurements (each figure and its source: docs/GPU_TIME_MODEL.md), so that a plan for a
// GPU preset prices the kernels a step calls (gpu_kernel_time.h) instead of assuming one
// share of the peak for the whole step.
//
// - GEMMs (cuBLASLt): a share of the dense peak that the largest products reach, lowered
//   by wave quantization (the output tiles over the SMs: the last wave runs partly
//   empty) and by the main loop's prologue and epilogue, K / (K + gemm_k_half).
// - Attention (cuDNN's flash attention): TFLOP/s forward and backward by head size and
//   sequence length, read from published tables and interpolated in log2 of the length;
//   cuDNN's deterministic backward (llmft's default) computes dQ in a pass of its own, at
//   the rate an H200 measured.
// - Every other kernel: the bytes it reads and writes at the achievable HBM bandwidth.
// - Every kernel call: a fixed gap between kernels (launch and tail).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace llmft {

// A throughput curve: (sequence length, FLOP/s) points, lengths ascending.
using LengthCurve = std::vector<std::pair<int64_t, double>>;

// Attention's FLOP/s at one head size, without a causal mask, in the FlashAttention
// benchmarks' count (forward 4 x batch x heads x T^2 x head_dim, backward 2.5 times that).
struct AttentionRates {
  int64_t head_dim = 0;
  LengthCurve forward, backward;
};

struct GpuKernelModel {
  double gemm_peak_fraction = 0;  // 0: no model for this device
  int64_t gemm_tile_m = 128, gemm_tile_n = 256;
  int sms = 0;
  double gemm_k_half = 0;
  std::vector<AttentionRates> attention;  // head sizes ascending
  // A causal mask's FLOP/s over the unmasked one's, by length (the masked kernels skip
  // the upper triangle but keep its diagonal tiles and balance worse).
  LengthCurve causal_factor;
  // cuDNN's deterministic backward: its fused kernel does four of the backward's five
  // products at the rates above, and dQ (the fifth) follows in a separate pass at this
  // FLOP/s (in the count above).
  double deterministic_dq_flops_per_s = 0;
  double memory_bandwidth = 0;  // bytes/s a streaming kernel achieves
  double kernel_gap_s = 0;

  bool known() const { return gemm_peak_fraction > 0; }
};

// The published figures of Hopper (H100 SXM, H200: the same GH100 SMs and clocks) with
// `hbm_bandwidth`, the datasheet's bytes/s.
GpuKernelModel hopper_kernel_model(double hbm_bandwidth);

// The share of the dense peak a GEMM of an M x N output summed over K reaches.
// REQUIRES: model.known(), m, n, k >= 1
double gemm_efficiency(const GpuKernelModel& model, int64_t m, int64_t n, int64_t k);

// Causal attention's FLOP/s (in the count above, halved for the mask) for one head size
// and length: the table of the nearest head size (a head size below it scaled down by
// head_dim / the table's: its products are too thin for the tensor cores), log2-interpolated
// in the length and held flat beyond the table's ends.
// REQUIRES: model.known(), head_dim >= 1, length >= 1
double attention_flops_per_s(const GpuKernelModel& model, int64_t head_dim, int64_t length,
                             bool backward);

// The value of `curve` at `length`, log2-interpolated, flat beyond its ends.
// REQUIRES: curve not empty
double curve_at(const LengthCurve& curve, int64_t length);

}  // namespace llmft
