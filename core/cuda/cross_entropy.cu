// The vocabulary-parallel cross-entropy on the GPU: one block per row, statistics in f32.
// The logits stay in the compute dtype throughout; the exps are recomputed from them in the
// last pass, which then writes the gradient over them, so no f32 copy of the (N, V) logits
// ever exists. The loss adds the rows' losses in row order (no atomics).
#include "core/cuda/block_reduce.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void max_kernel(float* stats, const T* logits, int64_t V, int64_t valid) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  float row_max = -INFINITY;
  for (int64_t v = threadIdx.x; v < valid; v += blockDim.x) {
    row_max = fmaxf(row_max, load(logits[n * V + v]));
  }
  row_max = block_max(row_max, shared);
  if (threadIdx.x == 0) stats[n] = row_max;
}

template <typename T>
__global__ void sums_kernel(float* stats, const T* logits, const int32_t* targets, int64_t N,
                            int64_t V, int64_t valid, int64_t vocab_start) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  const float row_max = stats[n];
  float sum = 0.0f;
  for (int64_t v = threadIdx.x; v < valid; v += blockDim.x) {
    sum += __expf(load(logits[n * V + v]) - row_max);
  }
  sum = block_sum(sum, shared);
  if (threadIdx.x != 0) return;
  stats[N + n] = sum;
  const int64_t target = static_cast<int64_t>(targets[n]) - vocab_start;
  stats[2 * N + n] = target >= 0 && target < valid ? load(logits[n * V + target]) : 0.0f;
}

template <typename T>
__global__ void finish_kernel(T* logits, float* stats, const int32_t* targets, int64_t N, int64_t V,
                              int64_t valid, int64_t vocab_start, float grad_scale) {
  const int64_t n = blockIdx.x;
  const float row_max = stats[n], sum = stats[N + n];
  const bool counted = targets[n] >= 0;
  const int64_t target = static_cast<int64_t>(targets[n]) - vocab_start;
  const float scale = grad_scale / sum;
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x) {
    float grad = 0.0f;
    if (counted && v < valid) {
      grad = __expf(load(logits[n * V + v]) - row_max) * scale;
      if (v == target) grad -= grad_scale;
    }
    logits[n * V + v] = store<T>(grad);
  }
  __syncthreads();  // every thread has read its row maximum before it is replaced
  if (threadIdx.x == 0) stats[n] = counted ? logf(sum) + row_max - stats[2 * N + n] : 0.0f;
}

__global__ void add_row_losses(float* loss_sum, const float* row_losses, int64_t N) {
  __shared__ double shared[32];
  double sum = 0.0;
  // Each thread a fixed stride of rows, then a fixed tree: the same bits every run.
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) sum += row_losses[n];
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) *loss_sum += static_cast<float>(sum);
}

}  // namespace

void cross_entropy_max(float* stats, const void* logits, DType type, int64_t N, int64_t V,
                       int64_t valid, cudaStream_t stream) {
  if (N == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    max_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(
        stats, static_cast<const S*>(logits), V, valid);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void cross_entropy_sums(float* stats, const void* logits, const int32_t* targets, DType type,
                        int64_t N, int64_t V, int64_t valid, int64_t vocab_start,
                        cudaStream_t stream) {
  if (N == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    sums_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(
        stats, static_cast<const S*>(logits), targets, N, V, valid, vocab_start);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void cross_entropy_finish(void* logits, float* loss_sum, float* stats, const int32_t* targets,
                          DType type, int64_t N, int64_t V, int64_t valid, int64_t vocab_start,
                          float grad_scale, cudaStream_t stream) {
  if (N == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    finish_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(
        static_cast<S*>(logits), stats, targets, N, V, valid, vocab_start, grad_scale);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
  add_row_losses<<<1, 1024, 0, stream>>>(loss_sum, stats, N);
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
