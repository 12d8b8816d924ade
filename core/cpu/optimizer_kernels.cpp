// Optimizer arithmetic on CPU: squared norms and the AdamW / SGD element updates.
#include <cmath>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

double sum_squares(const float* x, int64_t n) {
  // f32 partial sums over short blocks (vectorised), added up in f64.
  constexpr int64_t kBlock = 1024;
  double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = start + kBlock < n ? start + kBlock : n;
    float block = 0.0f;
#pragma omp simd reduction(+ : block)
    for (int64_t i = start; i < end; ++i) block += x[i] * x[i];
    sum += block;
  }
  return sum;
}

void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, float grad_scale,
                  float bias_correction1, float bias_correction2) {
  const float step_size = lr / bias_correction1;
  const float inv_sqrt_bc2 = 1.0f / std::sqrt(bias_correction2);
  const float decay = 1.0f - lr * weight_decay;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float g = grad[i] * grad_scale;
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
    param[i] = param[i] * decay - step_size * mi / denom;
  }
}

void sgd_update(float* param, const float* grad, float* momentum_buf, int64_t n, float lr,
                float momentum, float weight_decay, float grad_scale) {
  const float decay = 1.0f - lr * weight_decay;
  if (momentum_buf == nullptr) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) param[i] = param[i] * decay - lr * grad[i] * grad_scale;
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float buf = momentum * momentum_buf[i] + grad[i] * grad_scale;
    momentum_buf[i] = buf;
    param[i] = param[i] * decay - lr * buf;
  }
}

}  // namespace llmft::cpu
