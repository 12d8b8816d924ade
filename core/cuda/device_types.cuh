// The float dtypes as kernels see them: storage types with load to f32 and store from f32
// (round to nearest even, as the CPU's core/half.h), and the host-side dispatch from a
// tensor's DType to a kernel instantiated for its storage type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/dtype.h"
#include "core/error.h"

namespace llmft::cuda {

__device__ __forceinline__ float load(float x) {
  return x;
}
__device__ __forceinline__ float load(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float load(__half x) {
  return __half2float(x);
}

template <typename T>
__device__ __forceinline__ T store(float x);
template <>
__device__ __forceinline__ float store<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 store<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half store<__half>(float x) {
  return __float2half_rn(x);
}

// Calls f(T{}) with T the storage type of a float dtype.
template <typename F>
void dispatch_float(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f(float{});
    case DType::bf16:
      return f(__nv_bfloat16{});
    case DType::f16:
      return f(__half{});
    case DType::i32:
      break;
  }
  LLMFT_FAIL("cuda: expected a floating-point tensor, got " << dtype_name(dtype));
}

// Blocks of `threads` covering n elements.
inline unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace llmft::cuda
