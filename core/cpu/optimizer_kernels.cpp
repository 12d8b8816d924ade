// Optimizer arithmetic on CPU: the AdamW and SGD (and so LOMO) element updates, reading
// gradients of any stored dtype; SGD also writes weights of any stored dtype in place.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/float_traits.h"

namespace llmft::cpu {

void adamw_update(float* param, const void* grad, DType grad_type, float* m, float* v, int64_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float grad_scale, float bias_correction1, float bias_correction2) {
  const float step_size = lr / bias_correction1;
  const float inv_sqrt_bc2 = 1.0f / std::sqrt(bias_correction2);
  const float decay = 1.0f - lr * weight_decay;
  with_float_type(grad_type, [&](auto traits) {
    using G = decltype(traits);
    const auto* g_in = static_cast<const typename G::Storage*>(grad);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float g = G::load(g_in[i]) * grad_scale;
      const float mi = beta1 * m[i] + (1.0f - beta1) * g;
      const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
      m[i] = mi;
      v[i] = vi;
      const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
      param[i] = param[i] * decay - step_size * mi / denom;
    }
  });
}

void sgd_update(void* param, DType param_type, const void* grad, DType grad_type,
                float* momentum_buf, int64_t n, float lr, float momentum, float weight_decay,
                float grad_scale) {
  const float decay = 1.0f - lr * weight_decay;
  with_float_type(param_type, [&](auto param_traits) {
    using P = decltype(param_traits);
    auto* p = static_cast<typename P::Storage*>(param);
    with_float_type(grad_type, [&](auto grad_traits) {
      using G = decltype(grad_traits);
      const auto* g = static_cast<const typename G::Storage*>(grad);
      if (momentum_buf == nullptr) {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          p[i] = P::store(P::load(p[i]) * decay - lr * G::load(g[i]) * grad_scale);
        }
        return;
      }
#pragma omp parallel for simd schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        const float buf = momentum * momentum_buf[i] + G::load(g[i]) * grad_scale;
        momentum_buf[i] = buf;
        p[i] = P::store(P::load(p[i]) * decay - lr * buf);
      }
    });
  });
}

}  // namespace llmft::cpu
