// What both attention kernel files (attention.cu: f32 arithmetic; attention_tensor_cores.cu:
// bf16/fp16 on tensor cores) share: where a head's vectors sit in the packed
// (rows, (H + 2 KVH) D) qkv tensor, how many rows a tile holds, and the opt-in to more
// dynamic shared memory than the default 48 KiB.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/cuda_check.h"

namespace llmft::cuda {

struct AttentionLayout {
  int64_t rows, H, KVH, D;
  __device__ int64_t width() const { return (H + 2 * KVH) * D; }
  __device__ int64_t q(int64_t b, int64_t t, int64_t h) const {
    return (b * rows + t) * width() + h * D;
  }
  __device__ int64_t k(int64_t b, int64_t t, int64_t g) const {
    return (b * rows + t) * width() + (H + g) * D;
  }
  __device__ int64_t v(int64_t b, int64_t t, int64_t g) const {
    return (b * rows + t) * width() + (H + KVH + g) * D;
  }
};

// Where each query's sample starts: query t of batch row b (t counted among the T queries,
// the first of which is key row first_query) sees key rows first_key(b, t) .. first_query + t.
// Sample starts never fall as t rises, so a tile's first query sees the earliest key.
struct SampleStarts {
  const int32_t* positions;  // (B, T)
  int64_t T, first_query;
  __device__ int64_t first_key(int64_t b, int64_t t) const {
    return first_query + t - positions[b * T + t];
  }
};

// Rows of a tile of kRows that exist when `left` rows remain.
template <int kRows>
__device__ __forceinline__ int tile_rows(int64_t left) {
  return left < kRows ? static_cast<int>(left) : kRows;
}

// Lets `kernel` use `bytes` of dynamic shared memory (past the default 48 KiB).
template <typename Kernel>
void allow_shared(Kernel kernel, size_t bytes) {
  LLMFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
}

}  // namespace llmft::cuda
