// The per-element arithmetic that the CPU kernels and the CUDA kernels share, so that the
// CPU tests check the GPU's formulas too. LLMFT_HOST_DEVICE marks them for both: the
// build defines it (CMakeLists.txt) as __host__ __device__ for CUDA sources and as nothing
// for C++ ones. Transcendentals stay with the caller (each device has its own fast exp
// and tanh): functions take sigmoid(x) or tanh(...) already computed.
#pragma once

#include <math.h>

namespace llmft::element {

// GELU, tanh approximation (GPT-2's "gelu_new"): gelu(x) = 0.5 x (1 + tanh(arg(x))).
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

LLMFT_HOST_DEVICE inline float gelu_tanh_arg(float x) {
  return kGeluScale * (x + kGeluCubic * x * x * x);
}
// t = tanh(gelu_tanh_arg(x)).
LLMFT_HOST_DEVICE inline float gelu(float x, float t) {
  return 0.5f * x * (1.0f + t);
}
LLMFT_HOST_DEVICE inline float gelu_derivative(float x, float t) {
  return 0.5f * (1.0f + t) +
         x * 0.5f * (1.0f - t * t) * kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
}

// SwiGLU: out = silu(gate) * up, s = sigmoid(gate).
LLMFT_HOST_DEVICE inline float swiglu(float gate, float up, float s) {
  return gate * s * up;
}
LLMFT_HOST_DEVICE inline float swiglu_dgate(float gate, float up, float s, float dout) {
  return dout * up * (s + gate * s * (1.0f - s));
}
LLMFT_HOST_DEVICE inline float swiglu_dup(float gate, float s, float dout) {
  return dout * gate * s;
}

// Rotary embedding (Hugging Face's rotate-half): pair i of a head turns by
// position x inv_freq[i] (core/rope_frequencies.h).
// (a, b) -> (a cos - b sin, b cos + a sin); backward passes -sin.
LLMFT_HOST_DEVICE inline void rotate(float& a, float& b, float cos_a, float sin_a) {
  const float a0 = a;
  a = a0 * cos_a - b * sin_a;
  b = b * cos_a + a0 * sin_a;
}

// AdamW with decoupled weight decay on one element (torch.optim.AdamW's order).
struct AdamwScalars {
  float step_size;     // lr / (1 - beta1^t)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
  float decay;         // 1 - lr x weight_decay
  float beta1, beta2, eps;
};
// The scalars of step t from the hyperparameters, bias_correction_i = 1 - beta_i^t.
inline AdamwScalars adamw_scalars(float lr, float beta1, float beta2, float eps, float weight_decay,
                                  float bias_correction1, float bias_correction2) {
  return AdamwScalars{lr / bias_correction1,
                      1.0f / sqrtf(bias_correction2),
                      1.0f - lr * weight_decay,
                      beta1,
                      beta2,
                      eps};
}
LLMFT_HOST_DEVICE inline void adamw(float& param, float& m, float& v, float grad,
                                    const AdamwScalars& s) {
  m = s.beta1 * m + (1.0f - s.beta1) * grad;
  v = s.beta2 * v + (1.0f - s.beta2) * grad * grad;
  const float denom = sqrtf(v) * s.inv_sqrt_bc2 + s.eps;
  param = param * s.decay - s.step_size * m / denom;
}

// AdaLomo's update of one element of gradient x from the factored second moment: a
// matrix's row and column states (the row's relative to the mean row state), or a
// vector's row state alone.
LLMFT_HOST_DEVICE inline float adalomo_update(float x, float row, float row_mean, float col,
                                              bool matrix) {
  if (!matrix) return x / sqrtf(row);
  return x / sqrtf(row / row_mean) / sqrtf(col);
}

// SGD with decoupled weight decay; with momentum the buffer is torch's (dampening 0).
LLMFT_HOST_DEVICE inline float sgd(float param, float grad, float lr, float decay) {
  return param * decay - lr * grad;
}
LLMFT_HOST_DEVICE inline float sgd_momentum(float param, float& buffer, float grad, float lr,
                                            float momentum, float decay) {
  buffer = momentum * buffer + grad;
  return param * decay - lr * buffer;
}

}  // namespace llmft::element
