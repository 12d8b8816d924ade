// GELU (tanh approximation) and SwiGLU on the GPU, with the per-element formulas of
// core/element_math.h.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void gelu_forward_kernel(T* out, const T* inp, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float x = load(inp[i]);
  out[i] = store<T>(element::gelu(x, tanhf(element::gelu_tanh_arg(x))));
}

template <typename T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float x = load(inp[i]);
  dinp[i] = store<T>(element::gelu_derivative(x, tanhf(element::gelu_tanh_arg(x))) * load(dout[i]));
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

template <typename T>
__global__ void swiglu_forward_kernel(T* out, const T* gate_up, int64_t N, int64_t I) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= N * I) return;
  const int64_t n = i / I, c = i % I;
  const float g = load(gate_up[n * 2 * I + c]), u = load(gate_up[n * 2 * I + I + c]);
  out[i] = store<T>(element::swiglu(g, u, sigmoid(g)));
}

template <typename T>
__global__ void swiglu_backward_kernel(T* dgate_up, const T* gate_up, const T* dout, int64_t N,
                                       int64_t I) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= N * I) return;
  const int64_t n = i / I, c = i % I;
  const float g = load(gate_up[n * 2 * I + c]), u = load(gate_up[n * 2 * I + I + c]);
  const float s = sigmoid(g), dy = load(dout[i]);
  dgate_up[n * 2 * I + c] = store<T>(element::swiglu_dgate(g, u, s, dy));
  dgate_up[n * 2 * I + I + c] = store<T>(element::swiglu_dup(g, s, dy));
}

}  // namespace

void gelu_forward(void* out, const void* inp, DType type, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_forward_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<const S*>(inp), n);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void gelu_backward(void* dinp, const void* inp, const void* dout, DType type, int64_t n,
                   cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_backward_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_forward(void* out, const void* gate_up, DType type, int64_t N, int64_t I,
                    cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    swiglu_forward_kernel<<<blocks_for(N * I, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<const S*>(gate_up), N, I);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_backward(void* dgate_up, const void* gate_up, const void* dout, DType type, int64_t N,
                     int64_t I, cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    swiglu_backward_kernel<<<blocks_for(N * I, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dgate_up), static_cast<const S*>(gate_up), static_cast<const S*>(dout), N,
        I);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
