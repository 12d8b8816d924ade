// How tests compare two fp32 training runs that differ only in the order their sums are
// added: another layout (ranks, micro-batches, tensor-parallel slices: GEMMs of other
// shapes, reductions over other groupings) or another machine (BLAS kernel, threads).
//
// The tolerance, kFp32Parity, relative: reordering a sum of K terms changes it by about
// sqrt(K) u relative (at most K u; u = 2^-24). The largest sums in these tests are the
// weight gradients' sums over a global batch of at most 256 rows and the vocabulary-wide
// softmax sums (61 terms), so gradients, losses and norms differ by about 16 u ~ 1e-6
// and at most 256 u ~ 1.5e-5 relative. Weights are compared by their relative L2
// distance, not element by element: an element whose gradient is a sum that nearly
// cancels (a rarely used embedding row) carries a large relative rounding error, which
// AdamW's update m / (sqrt(v) + eps) passes on at full size (up to lr per step), but such
// elements are few and small beside the norm of all weights. The rest move by ~1e-7 of
// their update a step. Measured over 8-10 steps on every OpenBLAS kernel this CPU runs
// (Prescott, Nehalem, Sandybridge, Haswell, Zen) with 1 and 2 threads: losses and norms
// at most 2e-7 (layout_invariance: 3e-7), weights at most ~1e-6; 1e-5 is above the
// worst case of the gradient sums.
//
// One exception: GPT-2's key bias. Adding a constant to every key score of a query does
// not change its softmax, so the key bias's gradient is zero in exact arithmetic and its
// computed gradient is rounding residue; Adam normalises that residue into steps of up to
// lr x residue / eps, whose sign is the sign of the residue. Its value is arbitrary and
// changes nothing the model computes, so weight comparisons leave it out.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/model_config.h"
#include "core/model_factory.h"
#include "core/unit_layout.h"

namespace llmft::testing {

constexpr double kFp32Parity = 1e-5;

// max |a - b| relative to max |b|.
inline double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 1e-30;
  for (size_t i = 0; i < b.size(); ++i) {
    gap = std::max(gap, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return gap / scale;
}

// The whole model's flat weights (unit after unit, as TestTrainer::params() lists them)
// without the elements no training run determines: GPT-2's key bias (see above).
inline std::vector<float> determined_weights(const ModelConfig& c, const std::vector<float>& all) {
  std::vector<float> kept;
  int64_t unit_start = 0;
  for (const UnitLayout& u : unit_layouts(c)) {
    for (const ParamInfo& p : u.params) {
      const std::string suffix = "attn.c_attn.bias";  // q | k | v, each a third
      const bool qkv_bias =
          p.name.size() >= suffix.size() &&
          p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0;
      const int64_t third = p.numel() / 3;
      for (int64_t i = 0; i < p.numel(); ++i) {
        if (qkv_bias && i >= third && i < 2 * third) continue;
        kept.push_back(all[unit_start + p.offset + i]);
      }
    }
    unit_start += u.numel;
  }
  return kept;
}

// |a - b| / |b|.
inline double relative_difference(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

// The largest gaps a test saw over its runs, for its closing MESSAGE (the figures that
// justify kFp32Parity above).
struct WorstGaps {
  double loss = 0, grad_norm = 0;
  std::optional<double> weights;  // none: the test did not compare weights
  void add(double loss_gap, double grad_norm_gap) {
    loss = std::max(loss, loss_gap);
    grad_norm = std::max(grad_norm, grad_norm_gap);
  }
  void add_weights(double weight_gap) { weights = std::max(weights.value_or(0.0), weight_gap); }
  std::string summary() const {
    char text[128];
    std::snprintf(text, sizeof text, "worst relative gaps: loss %.2g, gradient norm %.2g", loss,
                  grad_norm);
    std::string line = text;
    if (weights) {
      std::snprintf(text, sizeof text, ", weights %.2g", *weights);
      line += text;
    }
    return line;
  }
};

// ||a - b|| / ||b|| (L2).
inline double relative_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    gap += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    scale += double(b[i]) * b[i];
  }
  return std::sqrt(gap / scale);
}

// relative_distance over the determined weights.
inline double weight_gap(const ModelConfig& c, const std::vector<float>& a,
                         const std::vector<float>& b) {
  return relative_distance(determined_weights(c, a), determined_weights(c, b));
}

}  // namespace llmft::testing
