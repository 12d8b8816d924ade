// exp and tanh written so that the compiler vectorises loops that call them (the libm
// versions are scalar calls). exp: range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial, relative error about 2 ulp, inputs clamped to [-87, 88], NaN kept; tanh
// through exp, absolute error about 1e-7.
// Loops vectorise with -fno-trapping-math, which CMake sets for llmft_core.
#pragma once

#include <cstdint>
#include <cstring>

namespace llmft::cpu {

inline float fast_exp(float input) {
  float x = input > -87.0f ? input : -87.0f;
  x = x < 88.0f ? x : 88.0f;
  // n = round(x / ln2); truncation is floor here because the argument is positive.
  const int32_t ni = static_cast<int32_t>(x * 1.44269504088896341f + 128.5f) - 128;
  const float n = static_cast<float>(ni);
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;  // x - n ln2, in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (ni + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  // A NaN stays a NaN (the clamps above would turn it into exp(-87)), so that a diverged
  // value reaches the loss and the divergence check instead of vanishing here.
  return input != input ? input : p * scale;
}

inline float fast_tanh(float x) {
  const float e = fast_exp(-2.0f * __builtin_fabsf(x));
  return __builtin_copysignf((1.0f - e) / (1.0f + e), x);
}

// Reductions of x[0, n) in 16 interleaved lanes, each taking its elements in turn, then
// the lanes and the tail in order: loops the compiler vectorises (a plain running sum or
// max is one dependency chain, and without fast-math flags stays scalar), in an order the
// source fixes whatever the CPU's vector width. The lane loop is marked `omp simd`: without
// it, -O3 unrolled it and left the max's 16 selects scalar.
constexpr int64_t kReductionLanes = 16;

template <typename Combine>
float lane_reduce(const float* x, int64_t n, float init, Combine combine) {
  float lanes[kReductionLanes];
  for (float& lane : lanes) lane = init;
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
#pragma omp simd
    for (int64_t l = 0; l < kReductionLanes; ++l) lanes[l] = combine(lanes[l], x[i + l]);
  }
  float result = init;
  for (const float lane : lanes) result = combine(result, lane);
  for (; i < n; ++i) result = combine(result, x[i]);
  return result;
}

inline float lane_sum(const float* x, int64_t n) {
  return lane_reduce(x, n, 0.0f, [](float a, float b) { return a + b; });
}

// The largest of `init` and x[0, n); NaNs are passed over, as std::max passes them.
inline float lane_max(const float* x, int64_t n, float init) {
  return lane_reduce(x, n, init, [](float a, float b) { return a < b ? b : a; });
}

}  // namespace llmft::cpu
