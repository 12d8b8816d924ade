// Rotary position embedding on the GPU (Hugging Face's rotate-half layout), with the
// per-element rotation of core/element_math.h: one thread per (token, pack of 8 pairs),
// turning those pairs in every rotated head of the token, so each angle's sincosf is taken
// once rather than once per head, and moving each head's 8 first-half and 8 second-half
// elements with 16-byte accesses where the layout allows (vector_access.cuh). The host's inverse
// frequencies (core/rope_frequencies.h) arrive by value in the kernel's parameters
// (__grid_constant__: read in place, never copied per thread), so every backend turns by the same
// float32 angles.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/cuda/vector_access.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

// The packs of pairs of one head: pairs 0 .. D/2 - 1, kPack to a pack.
__host__ __device__ inline int64_t pair_packs(int64_t half) {
  return (half + kPack - 1) / kPack;
}

template <typename T>
__global__ void rope_kernel(T* qkv, const int32_t* positions, int64_t tokens, int H, int KVH, int D,
                            const __grid_constant__ RopeFrequencies freqs, bool inverse,
                            bool aligned) {
  const int half = D / 2;
  const int packs = static_cast<int>(pair_packs(half));
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= tokens * packs) return;
  const int64_t token = i / packs;
  const PackSpan s = pack_span(i % packs, half, aligned);
  const float pos = static_cast<float>(positions[token]);
  float cos_a[kPack], sin_a[kPack];
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    const float angle = k < s.count ? pos * freqs.inv_freq[s.first + k] : 0.0f;
    sincosf(angle, &sin_a[k], &cos_a[k]);
    if (inverse) sin_a[k] = -sin_a[k];
  }
  T* row = qkv + token * (H + 2 * KVH) * D;
#pragma unroll 2
  for (int head = 0; head < H + KVH; ++head) {  // q heads then k heads turn; v does not
    T* v = row + head * D;
    float a[kPack], b[kPack];
    load_pack(a, v, s);
    load_pack(b, v + half, s);
#pragma unroll
    for (int k = 0; k < kPack; ++k) element::rotate(a[k], b[k], cos_a[k], sin_a[k]);
    store_pack(v, a, s);
    store_pack(v + half, b, s);
  }
}

}  // namespace

void rope(void* qkv, const int32_t* positions, DType type, int64_t N, int64_t H, int64_t KVH,
          int64_t D, const RopeFrequencies& freqs, bool inverse, cudaStream_t stream) {
  const int64_t n = N * pair_packs(D / 2);  // a thread per pack of pairs
  if (n == 0 || H + KVH == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    S* x = static_cast<S*>(qkv);
    // 16-byte accesses need every head's two halves on 16 bytes: D / 2 elements a multiple
    // of 16 bytes puts every head, and every token's row, there too.
    rope_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
        x, positions, N, static_cast<int>(H), static_cast<int>(KVH), static_cast<int>(D), freqs,
        inverse, rows_aligned_for_packs(x, D / 2));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
