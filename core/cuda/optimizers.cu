// AdamW and SGD (and so LOMO's fused update) on the GPU with the per-element updates of
// core/element_math.h: gradients of any float dtype; SGD updates weights of any float
// dtype in place through f32 registers.
#include <cmath>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename G>
__global__ void adamw_kernel(float* param, const G* grad, float* m, float* v, int64_t n,
                             element::AdamwScalars s, float grad_scale) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) element::adamw(param[i], m[i], v[i], load(grad[i]) * grad_scale, s);
}

template <typename P, typename G>
__global__ void sgd_kernel(P* param, const G* grad, float* momentum_buf, int64_t n, float lr,
                           float momentum, float decay, float grad_scale) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float g = load(grad[i]) * grad_scale;
  param[i] =
      store<P>(momentum_buf == nullptr ? element::sgd(load(param[i]), g, lr, decay)
                                       : element::sgd_momentum(load(param[i]), momentum_buf[i], g,
                                                               lr, momentum, decay));
}

}  // namespace

void adamw_update(float* param, const void* grad, DType grad_type, float* m, float* v, int64_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float grad_scale, float bias_correction1, float bias_correction2,
                  cudaStream_t stream) {
  if (n == 0) return;
  const element::AdamwScalars s = element::adamw_scalars(lr, beta1, beta2, eps, weight_decay,
                                                         bias_correction1, bias_correction2);
  dispatch_float(grad_type, [&](auto g) {
    using G = decltype(g);
    adamw_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
        param, static_cast<const G*>(grad), m, v, n, s, grad_scale);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void sgd_update(void* param, DType param_type, const void* grad, DType grad_type,
                float* momentum_buf, int64_t n, float lr, float momentum, float weight_decay,
                float grad_scale, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(param_type, [&](auto p) {
    dispatch_float(grad_type, [&](auto g) {
      using P = decltype(p);
      using G = decltype(g);
      sgd_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<P*>(param), static_cast<const G*>(grad), momentum_buf, n, lr, momentum,
          1.0f - lr * weight_decay, grad_scale);
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
