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

}  // namespace llmft::cpu
