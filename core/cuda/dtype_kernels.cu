// Fill, convert, accumulate, sums of squares, column sums and a vector repeated down rows
// on the GPU, for any float dtype. Fill, convert, accumulate and sums of squares move a pack
// of elements per thread (vector_access.cuh): 16-byte accesses where every operand is
// aligned. A fill with zero is the driver's memset.
#include <cmath>

#include "core/cuda/block_reduce.cuh"
#include "core/cuda/column_sums.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/cuda/vector_access.cuh"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void fill_kernel(T* x, float value, int64_t n, bool aligned) {
  const PackSpan s = pack_span(pack_index_in(blockIdx.x), n, aligned);
  if (s.count == 0) return;
  float v[kPack];
#pragma unroll
  for (int k = 0; k < kPack; ++k) v[k] = value;
  store_pack(x, v, s);
}

template <typename D, typename S>
__global__ void convert_kernel(D* dst, const S* src, int64_t n, bool aligned) {
  const PackSpan s = pack_span(pack_index_in(blockIdx.x), n, aligned);
  if (s.count == 0) return;
  float v[kPack];
  load_pack(v, src, s);
  store_pack(dst, v, s);
}

template <typename T>
__global__ void repeat_rows_kernel(T* out, int64_t ld, const T* row, int64_t rows, int64_t cols) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows * cols) out[i / cols * ld + i % cols] = row[i % cols];
}

template <typename A, typename X>
__global__ void add_kernel(A* acc, const X* x, int64_t n, bool aligned) {
  const PackSpan s = pack_span(pack_index_in(blockIdx.x), n, aligned);
  if (s.count == 0) return;
  float sum[kPack], addend[kPack];
  load_pack(sum, acc, s);
  load_pack(addend, x, s);
#pragma unroll
  for (int k = 0; k < kPack; ++k) sum[k] = sum[k] + addend[k];
  store_pack(acc, sum, s);
}

// Thread t of block b sums the squares of pack b x kThreads + t and of every
// kSumBlocks x kThreads-th pack after it; the block adds its threads' sums into
// partials[b]. The grid never depends on the device, and which elements a thread adds
// does not depend on whether 16-byte loads serve them.
template <typename T>
__global__ void square_partials(double* partials, const T* x, int64_t n, bool aligned) {
  __shared__ double shared[32];
  double sum = 0.0;
  const int64_t stride = static_cast<int64_t>(kSumBlocks) * kThreads;
  for (int64_t p = pack_index_in(blockIdx.x); p * kPack < n; p += stride) {
    const PackSpan s = pack_span(p, n, aligned);
    float v[kPack];
    load_pack(v, x, s);  // 0 past the end: adds nothing
#pragma unroll
    for (int k = 0; k < kPack; ++k) {
      const double d = v[k];
      sum += d * d;
    }
  }
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void add_partials(float* total, const double* partials) {
  __shared__ double shared[32];
  const double sum = block_sum(partials[threadIdx.x], shared);
  if (threadIdx.x == 0) *total += static_cast<float>(sum);
}

template <typename O, typename X>
__global__ void __launch_bounds__(kColumnThreads)
    column_sums_kernel(O* out, const X* x, int64_t N, int64_t C) {
  const int64_t c = block_column();
  const float sum = column_sum<float>(N, C, [&](int64_t n) { return load(x[n * C + c]); });
  if (!holds_column_total() || c >= C) return;
  out[c] = store<O>(load(out[c]) + sum);
}

}  // namespace

void fill(void* x, DType type, float value, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (value == 0.0f && !std::signbit(value)) {
    // +0 is all zero bits in every float dtype: the driver's memset, which fills near the
    // copy bandwidth. The fill kernel's 100 zeroing launches took 9.4 ms of TinyLlama's
    // step in the H200 profile (the f32 gradient sums alone are 4.4 GB: 1.1 ms at 4 TB/s).
    LLMFT_CUDA_CHECK(cudaMemsetAsync(x, 0, static_cast<size_t>(n) * dtype_size(type), stream));
    return;
  }
  dispatch_float(type, [&](auto t) {
    using T = decltype(t);
    fill_kernel<<<pack_blocks(n, kThreads), kThreads, 0, stream>>>(static_cast<T*>(x), value, n,
                                                                   aligned_for_packs(x));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void convert(void* dst, DType dst_type, const void* src, DType src_type, int64_t n,
             cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(dst_type, [&](auto d) {
    dispatch_float(src_type, [&](auto s) {
      using D = decltype(d);
      using S = decltype(s);
      convert_kernel<<<pack_blocks(n, kThreads), kThreads, 0, stream>>>(
          static_cast<D*>(dst), static_cast<const S*>(src), n,
          aligned_for_packs(dst) && aligned_for_packs(src));
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void add_inplace(void* acc, DType acc_type, const void* x, DType x_type, int64_t n,
                 cudaStream_t stream) {
  if (n == 0) return;
  dispatch_float(acc_type, [&](auto a) {
    dispatch_float(x_type, [&](auto s) {
      using A = decltype(a);
      using X = decltype(s);
      add_kernel<<<pack_blocks(n, kThreads), kThreads, 0, stream>>>(
          static_cast<A*>(acc), static_cast<const X*>(x), n,
          aligned_for_packs(acc) && aligned_for_packs(x));
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void sum_squares(float* sum_sq, const void* x, DType type, int64_t n, double* partials,
                 cudaStream_t stream) {
  dispatch_float(type, [&](auto t) {
    using T = decltype(t);
    square_partials<<<kSumBlocks, kThreads, 0, stream>>>(partials, static_cast<const T*>(x), n,
                                                         aligned_for_packs(x));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
  add_partials<<<1, kSumBlocks, 0, stream>>>(sum_sq, partials);
  LLMFT_CUDA_LAUNCH_CHECK();
}

void add_column_sums(void* out, DType out_type, const void* x, DType x_type, int64_t N, int64_t C,
                     cudaStream_t stream) {
  if (C == 0) return;
  dispatch_float(out_type, [&](auto o) {
    dispatch_float(x_type, [&](auto s) {
      using O = decltype(o);
      using X = decltype(s);
      column_sums_kernel<<<column_blocks(C), kColumnThreads, 0, stream>>>(
          static_cast<O*>(out), static_cast<const X*>(x), N, C);
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void repeat_rows(void* out, int64_t ld, const void* row, DType type, int64_t rows, int64_t cols,
                 cudaStream_t stream) {
  if (rows * cols == 0) return;
  dispatch_float(type, [&](auto t) {
    using T = decltype(t);
    repeat_rows_kernel<<<blocks_for(rows * cols, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(out), ld, static_cast<const T*>(row), rows, cols);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
