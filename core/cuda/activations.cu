// GELU (tanh approximation) and SwiGLU on the GPU, with the per-element formulas of
// core/element_math.h, a pack of elements per thread (vector_access.cuh): 16-byte
// accesses where every operand, and for SwiGLU every row and its up half, is aligned.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/cuda/vector_access.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void gelu_forward_kernel(T* out, const T* inp, int64_t n, bool aligned) {
  const PackSpan s = pack_span(pack_index_in(blockIdx.x), n, aligned);
  if (s.count == 0) return;
  float x[kPack];
  load_pack(x, inp, s);
#pragma unroll
  for (int k = 0; k < kPack; ++k) x[k] = element::gelu(x[k], tanhf(element::gelu_tanh_arg(x[k])));
  store_pack(out, x, s);
}

template <typename T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t n,
                                     bool aligned) {
  const PackSpan s = pack_span(pack_index_in(blockIdx.x), n, aligned);
  if (s.count == 0) return;
  float x[kPack], dy[kPack];
  load_pack(x, inp, s);
  load_pack(dy, dout, s);
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    const float t = tanhf(element::gelu_tanh_arg(x[k]));
    dy[k] = element::gelu_derivative(x[k], t) * dy[k];
  }
  store_pack(dinp, dy, s);
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

// SwiGLU's grid: x the rows (no division to find one), y the packs of columns of each.
dim3 swiglu_grid(int64_t N, int64_t I) {
  return dim3(static_cast<unsigned>(N), pack_blocks(I, kThreads));
}

// Whether 16-byte accesses serve SwiGLU's rows: gate_up(N, 2I) as [gate | up] and the
// (N, I) tensors beside it all start each row, and the up half, on 16 bytes.
template <typename T>
bool swiglu_aligned(const T* gate_up, const T* other, int64_t I) {
  return rows_aligned_for_packs(gate_up, I) && rows_aligned_for_packs(other, I);
}

template <typename T>
__global__ void swiglu_forward_kernel(T* out, const T* gate_up, int64_t I, bool aligned) {
  const int64_t n = blockIdx.x;
  const PackSpan s = pack_span(pack_index_in(blockIdx.y), I, aligned);
  if (s.count == 0) return;
  const T* gate = gate_up + n * 2 * I;
  float g[kPack], u[kPack];
  load_pack(g, gate, s);
  load_pack(u, gate + I, s);
#pragma unroll
  for (int k = 0; k < kPack; ++k) g[k] = element::swiglu(g[k], u[k], sigmoid(g[k]));
  store_pack(out + n * I, g, s);
}

template <typename T>
__global__ void swiglu_backward_kernel(T* dgate_up, const T* gate_up, const T* dout, int64_t I,
                                       bool aligned) {
  const int64_t n = blockIdx.x;
  const PackSpan s = pack_span(pack_index_in(blockIdx.y), I, aligned);
  if (s.count == 0) return;
  const T* gate = gate_up + n * 2 * I;
  T* dgate = dgate_up + n * 2 * I;
  float g[kPack], u[kPack], dy[kPack];
  load_pack(g, gate, s);
  load_pack(u, gate + I, s);
  load_pack(dy, dout + n * I, s);
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    const float sg = sigmoid(g[k]);
    const float dg = element::swiglu_dgate(g[k], u[k], sg, dy[k]);
    u[k] = element::swiglu_dup(g[k], sg, dy[k]);
    g[k] = dg;
  }
  store_pack(dgate, g, s);
  store_pack(dgate + I, u, s);
}

}  // namespace

void gelu_forward(void* out, const void* inp, DType type, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_forward_kernel<<<pack_blocks(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<const S*>(inp), n,
        aligned_for_packs(out) && aligned_for_packs(inp));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void gelu_backward(void* dinp, const void* inp, const void* dout, DType type, int64_t n,
                   cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    gelu_backward_kernel<<<pack_blocks(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dinp), static_cast<const S*>(inp), static_cast<const S*>(dout), n,
        aligned_for_packs(dinp) && aligned_for_packs(inp) && aligned_for_packs(dout));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_forward(void* out, const void* gate_up, DType type, int64_t N, int64_t I,
                    cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const S* gu = static_cast<const S*>(gate_up);
    swiglu_forward_kernel<<<swiglu_grid(N, I), kThreads, 0, stream>>>(
        static_cast<S*>(out), gu, I, swiglu_aligned(gu, static_cast<const S*>(out), I));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void swiglu_backward(void* dgate_up, const void* gate_up, const void* dout, DType type, int64_t N,
                     int64_t I, cudaStream_t stream) {
  if (N * I == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const S* gu = static_cast<const S*>(gate_up);
    const S* dy = static_cast<const S*>(dout);
    swiglu_backward_kernel<<<swiglu_grid(N, I), kThreads, 0, stream>>>(
        static_cast<S*>(dgate_up), gu, dy, I,
        swiglu_aligned(gu, dy, I) && rows_aligned_for_packs(static_cast<const S*>(dgate_up), I));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
