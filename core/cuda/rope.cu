// Rotary position embedding on the GPU (Hugging Face's rotate-half layout), with the
// per-element rotation of core/element_math.h: one thread per (token, pair), turning that
// pair in every rotated head of the token, so each angle's sincosf is taken once rather
// than once per head. The host's inverse frequencies (core/rope_frequencies.h) arrive by
// value in the kernel's parameters (__grid_constant__: read in place, never copied per
// thread), so every backend turns by the same float32 angles.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void rope_kernel(T* qkv, const int32_t* positions, int64_t tokens, int H, int KVH, int D,
                            const __grid_constant__ RopeFrequencies freqs, bool inverse) {
  const int half = D / 2;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= tokens * half) return;
  const int64_t token = i / half;
  const int pair = static_cast<int>(i % half);
  const float pos = static_cast<float>(positions[token]);
  const float angle = pos * freqs.inv_freq[pair];
  float sin_a, cos_a;
  sincosf(angle, &sin_a, &cos_a);
  if (inverse) sin_a = -sin_a;
  T* row = qkv + token * (H + 2 * KVH) * D;
#pragma unroll 4
  for (int head = 0; head < H + KVH; ++head) {  // q heads then k heads turn; v does not
    T* v = row + head * D;
    float a = load(v[pair]), b = load(v[pair + half]);
    element::rotate(a, b, cos_a, sin_a);
    v[pair] = store<T>(a);
    v[pair + half] = store<T>(b);
  }
}

}  // namespace

void rope(void* qkv, const int32_t* positions, DType type, int64_t N, int64_t H, int64_t KVH,
          int64_t D, const RopeFrequencies& freqs, bool inverse, cudaStream_t stream) {
  const int64_t n = N * (D / 2);
  if (n == 0 || H + KVH == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    rope_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(qkv), positions, N, static_cast<int>(H), static_cast<int>(KVH),
        static_cast<int>(D), freqs, inverse);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
