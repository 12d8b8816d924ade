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
  stream_elements<float>(
      n, element_index, [&](int64_t i) { return load(inp[i]); },
      [&](int64_t i, float x) {
        out[i] = store<T>(element::gelu(x, tanhf(element::gelu_tanh_arg(x))));
      });
}

struct InputAndGradient {
  float x, dy;
};

template <typename T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t n) {
  stream_elements<InputAndGradient>(
      n, element_index,
      [&](int64_t i) {
        return InputAndGradient{load(inp[i]), load(dout[i])};
      },
      [&](int64_t i, InputAndGradient v) {
        const float t = tanhf(element::gelu_tanh_arg(v.x));
        dinp[i] = store<T>(element::gelu_derivative(v.x, t) * v.dy);
      });
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

// SwiGLU's grid: x the rows (no division to find one), y the column chunks of each.
dim3 swiglu_grid(int64_t N, int64_t I) {
  return dim3(static_cast<unsigned>(N), element_blocks(I, kThreads));
}

// Column k (< kPerThread) of this thread's row: its chunk is the grid's y.
__device__ __forceinline__ int64_t swiglu_column(int k) {
  return element_index_in(blockIdx.y, k);
}

// A column's gate and up values, and (backward) its output gradient.
struct GateUp {
  float gate, up, dy;
};

template <typename T>
__global__ void swiglu_forward_kernel(T* out, const T* gate_up, int64_t I) {
  const int64_t n = blockIdx.x;
  const T* gate = gate_up + n * 2 * I;
  stream_elements<GateUp>(
      I, swiglu_column,
      [&](int64_t c) {
        return GateUp{load(gate[c]), load(gate[I + c]), 0.0f};
      },
      [&](int64_t c, GateUp v) {
        out[n * I + c] = store<T>(element::swiglu(v.gate, v.up, sigmoid(v.gate)));
      });
}

template <typename T>
__global__ void swiglu_backward_kernel(T* dgate_up, const T* gate_up, const T* dout, int64_t I) {
  const int64_t n = blockIdx.x;
  const T* gate = gate_up + n * 2 * I;
  T* dgate = dgate_up + n * 2 * I;
  stream_elements<GateUp>(
      I, swiglu_column,
      [&](int64_t c) {
        return GateUp{load(gate[c]), load(gate[I + c]), load(dout[n * I + c])};
      },
      [&](int64_t c, GateUp v) {
        const float s = sigmoid(v.gate);
        dgate[c] = store<T>(element::swiglu_dgate(v.gate, v.up, s, v.dy));
        dgate[I + c] = store<T>(element::swiglu_dup(v.gate, s, v.dy));
      });
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
