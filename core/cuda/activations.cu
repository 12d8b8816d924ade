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
  float x[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = element_index(k);
    x[k] = i < n ? load(inp[i]) : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = element_index(k);
    if (i < n) out[i] = store<T>(element::gelu(x[k], tanhf(element::gelu_tanh_arg(x[k]))));
  }
}

template <typename T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t n) {
  float x[kPerThread], dy[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = element_index(k);
    x[k] = i < n ? load(inp[i]) : 0.0f;
    dy[k] = i < n ? load(dout[i]) : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = element_index(k);
    const float t = tanhf(element::gelu_tanh_arg(x[k]));
    if (i < n) dinp[i] = store<T>(element::gelu_derivative(x[k], t) * dy[k]);
  }
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

// SwiGLU's grid: x the rows (no division to find one), y the column chunks of each.
dim3 swiglu_grid(int64_t N, int64_t I) {
  return dim3(static_cast<unsigned>(N), element_blocks(I, kThreads));
}

// Column k (< kPerThread) of this thread's row.
__device__ __forceinline__ int64_t swiglu_column(int k) {
  return (blockIdx.y * static_cast<int64_t>(kPerThread) + k) * kThreads + threadIdx.x;
}

template <typename T>
__global__ void swiglu_forward_kernel(T* out, const T* gate_up, int64_t I) {
  const int64_t n = blockIdx.x;
  const T* gate = gate_up + n * 2 * I;
  const T* up = gate + I;
  float g[kPerThread], u[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t c = swiglu_column(k);
    g[k] = c < I ? load(gate[c]) : 0.0f;
    u[k] = c < I ? load(up[c]) : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t c = swiglu_column(k);
    if (c < I) out[n * I + c] = store<T>(element::swiglu(g[k], u[k], sigmoid(g[k])));
  }
}

template <typename T>
__global__ void swiglu_backward_kernel(T* dgate_up, const T* gate_up, const T* dout, int64_t I) {
  const int64_t n = blockIdx.x;
  const T* gate = gate_up + n * 2 * I;
  const T* up = gate + I;
  float g[kPerThread], u[kPerThread], dy[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t c = swiglu_column(k);
    g[k] = c < I ? load(gate[c]) : 0.0f;
    u[k] = c < I ? load(up[c]) : 0.0f;
    dy[k] = c < I ? load(dout[n * I + c]) : 0.0f;
  }
  T* dgate = dgate_up + n * 2 * I;
  T* dup = dgate + I;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t c = swiglu_column(k);
    if (c >= I) continue;
    const float s = sigmoid(g[k]);
    dgate[c] = store<T>(element::swiglu_dgate(g[k], u[k], s, dy[k]));
    dup[c] = store<T>(element::swiglu_dup(g[k], s, dy[k]));
  }
}

}  // namespace

void gelu_forward(void* out, const void* inp, DType type, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_forward_kernel<<<element_blocks(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<const S*>(inp), n);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void gelu_backward(void* dinp, const void* inp, const void* dout, DType type, int64_t n,
                   cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_backward_kernel<<<element_blocks(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_forward(void* out, const void* gate_up, DType type, int64_t N, int64_t I,
                    cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    swiglu_forward_kernel<<<swiglu_grid(N, I), kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<const S*>(gate_up), I);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_backward(void* dgate_up, const void* gate_up, const void* dout, DType type, int64_t N,
                     int64_t I, cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    swiglu_backward_kernel<<<swiglu_grid(N, I), kThreads, 0, stream>>>(
        static_cast<S*>(dgate_up), static_cast<const S*>(gate_up), static_cast<const S*>(dout), I);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
