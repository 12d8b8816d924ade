// The vocabulary-parallel cross-entropy on the GPU: one block per row, statistics in f32,
// each of the three passes reading the logits once with 16-byte loads (walk_row).
// The logits stay in the compute dtype throughout; the exps are recomputed from them in the
// last pass, which then writes the gradient over them, so no f32 copy of the (N, V) logits
// ever exists. The loss adds the rows' losses in row order (no atomics).
#include <type_traits>

#include "core/cuda/block_reduce.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/cuda/vector_access.cuh"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

// Calls f(v, x) for each element v < n of a row, x its value in f32, the block's threads
// side by side: the elements before the row's first 16-byte boundary one a thread (fewer
// than kPack; a row of a vocabulary such as GPT-2's 50257 starts anywhere), then packs from
// the boundary on with 16-byte loads, the last one partial (element loads). With kWriteBack, what f
// leaves in x is stored back, rounded once into T.
template <bool kWriteBack, typename T, typename F>
__device__ __forceinline__ void walk_row(T* row, int64_t n, F f) {
  const int misalignment = static_cast<int>(reinterpret_cast<uintptr_t>(row) % kAccessBytes);
  const int64_t head =
      min(n, static_cast<int64_t>((kAccessBytes - misalignment) % kAccessBytes / sizeof(T)));
  if (threadIdx.x < head) {
    float x = load(row[threadIdx.x]);
    f(static_cast<int64_t>(threadIdx.x), x);
    if constexpr (kWriteBack) row[threadIdx.x] = store<std::remove_const_t<T>>(x);
  }
  T* body = row + head;
  const auto visit = [&](PackSpan s) {
    float x[kPack];
    load_pack(x, body, s);
#pragma unroll
    for (int k = 0; k < kPack; ++k) {
      if (k < s.count) f(head + s.first + k, x[k]);
    }
    if constexpr (kWriteBack) store_pack(body, x, s);
  };
  // Whole packs, then the partial last one by the thread whose turn it is.
  const int64_t rest = n - head, whole = rest / kPack;
  for (int64_t p = threadIdx.x; p < whole; p += blockDim.x) visit(PackSpan{p * kPack, kPack, true});
  if (threadIdx.x == whole % blockDim.x) visit(pack_span(whole, rest, false));
}

template <typename T>
__global__ void max_kernel(float* stats, const T* logits, int64_t V, int64_t valid) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  float row_max = -INFINITY;
  walk_row<false>(logits + n * V, valid, [&](int64_t, float x) { row_max = fmaxf(row_max, x); });
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
  walk_row<false>(logits + n * V, valid, [&](int64_t, float x) { sum += __expf(x - row_max); });
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
  walk_row<true>(logits + n * V, V, [&](int64_t v, float& x) {
    float grad = 0.0f;
    if (counted && v < valid) {
      grad = __expf(x - row_max) * scale;
      if (v == target) grad -= grad_scale;
    }
    x = grad;
  });
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
