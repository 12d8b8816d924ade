// Optimizer arithmetic on CPU: the AdamW and SGD (and so LOMO) element updates, reading
// gradients of any stored dtype; SGD also writes weights of any stored dtype in place.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/element_math.h"
#include "core/float_traits.h"

namespace llmft::cpu {

void adamw_update(float* param, const void* grad, DType grad_type, float* m, float* v, int64_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float grad_scale, float bias_correction1, float bias_correction2) {
  const element::AdamwScalars s = element::adamw_scalars(lr, beta1, beta2, eps, weight_decay,
                                                         bias_correction1, bias_correction2);
  with_float_type(grad_type, [&](auto traits) {
    using G = decltype(traits);
    const auto* g_in = static_cast<const typename G::Storage*>(grad);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      element::adamw(param[i], m[i], v[i], G::load(g_in[i]) * grad_scale, s);
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
          p[i] = P::store(element::sgd(P::load(p[i]), G::load(g[i]) * grad_scale, lr, decay));
        }
        return;
      }
#pragma omp parallel for simd schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        p[i] = P::store(element::sgd_momentum(P::load(p[i]), momentum_buf[i],
                                              G::load(g[i]) * grad_scale, lr, momentum, decay));
      }
    });
  });
}

}  // namespace llmft::cpu
