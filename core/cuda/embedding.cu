// Token (+ learned position) embedding on the GPU, vocabulary-parallel as on the CPU:
// tokens outside this rank's rows [vocab_start, + rows) contribute zero.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t local_row(const int32_t* tokens, int64_t n, int64_t start,
                                             int64_t rows) {
  const int64_t row = static_cast<int64_t>(tokens[n]) - start;
  return row >= 0 && row < rows ? row : -1;
}

template <typename T>
__global__ void forward_kernel(T* out, const int32_t* tokens, const T* wte, const T* wpe, int64_t N,
                               int64_t T_len, int64_t C, int64_t position_offset,
                               int64_t vocab_start, int64_t rows) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= N * C) return;
  const int64_t n = i / C, c = i % C;
  const int64_t row = local_row(tokens, n, vocab_start, rows);
  float value = row < 0 ? 0.0f : load(wte[row * C + c]);
  if (wpe != nullptr) value += load(wpe[(n % T_len + position_offset) * C + c]);
  out[i] = store<T>(value);
}

// Rows of dwte repeat across tokens, so thread c owns column c and adds the tokens' rows
// in token order: no atomics, the same bits every run.
template <typename T>
__global__ void token_backward_kernel(T* dwte, const T* dout, const int32_t* tokens, int64_t N,
                                      int64_t C, int64_t vocab_start, int64_t rows) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= C) return;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t row = local_row(tokens, n, vocab_start, rows);
    if (row < 0) continue;
    T* d = dwte + row * C + c;
    *d = store<T>(load(*d) + load(dout[n * C + c]));
  }
}

// Thread (t, c) adds position t's gradient over the batch.
template <typename T>
__global__ void position_backward_kernel(T* dwpe, const T* dout, int64_t N, int64_t T_len,
                                         int64_t C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= T_len * C) return;
  const int64_t t = i / C, c = i % C;
  float sum = load(dwpe[i]);
  for (int64_t n = t; n < N; n += T_len) sum += load(dout[n * C + c]);
  dwpe[i] = store<T>(sum);
}

}  // namespace

void embedding_forward(void* out, const int32_t* tokens, const void* wte, const void* wpe,
                       DType type, int64_t N, int64_t T, int64_t C, int64_t position_offset,
                       int64_t vocab_start, int64_t rows, cudaStream_t stream) {
  if (N * C == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    forward_kernel<<<blocks_for(N * C, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), tokens, static_cast<const S*>(wte), static_cast<const S*>(wpe), N, T,
        C, position_offset, vocab_start, rows);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void embedding_backward(void* dwte, void* dwpe, const void* dout, const int32_t* tokens, DType type,
                        int64_t N, int64_t T, int64_t C, int64_t vocab_start, int64_t rows,
                        cudaStream_t stream) {
  if (C == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    token_backward_kernel<<<blocks_for(C, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dwte), static_cast<const S*>(dout), tokens, N, C, vocab_start, rows);
    LLMFT_CUDA_LAUNCH_CHECK();
    if (dwpe == nullptr || T * C == 0) return;
    position_backward_kernel<<<blocks_for(T * C, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(dwpe), static_cast<const S*>(dout), N, T, C);
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace llmft::cuda
