// LayerNorm and RMSNorm on the GPU: one warp per row for the outputs and input gradients
// (statistics in f32, as PyTorch keeps them), and column_sums.cuh's fixed-order column
// sums for the weight and bias gradients.
#include "core/cuda/block_reduce.cuh"
#include "core/cuda/column_sums.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"

namespace llmft::cuda {
namespace {

constexpr int kRowsPerBlock = 8;  // warps per block, one row each

__device__ __forceinline__ int64_t warp_row() {
  return blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
}

template <typename T>
__global__ void layernorm_forward_kernel(T* out, float* mean_out, float* rstd_out, const T* inp,
                                         const T* weight, const T* bias, int64_t N, int64_t C,
                                         float eps) {
  const int64_t n = warp_row();
  if (n >= N) return;
  const int lane = threadIdx.x % 32;
  const T* x = inp + n * C;
  float sum = 0.0f;
  for (int64_t c = lane; c < C; c += 32) sum += load(x[c]);
  const float mean = warp_sum(sum) / static_cast<float>(C);
  float var = 0.0f;
  for (int64_t c = lane; c < C; c += 32) {
    const float d = load(x[c]) - mean;
    var += d * d;
  }
  const float rstd = rsqrtf(warp_sum(var) / static_cast<float>(C) + eps);
  for (int64_t c = lane; c < C; c += 32) {
    out[n * C + c] = store<T>((load(x[c]) - mean) * rstd * load(weight[c]) + load(bias[c]));
  }
  if (lane == 0) {
    mean_out[n] = mean;
    rstd_out[n] = rstd;
  }
}

template <typename T>
__global__ void layernorm_dinp_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
                                      const float* mean, const float* rstd, int64_t N, int64_t C) {
  const int64_t n = warp_row();
  if (n >= N) return;
  const int lane = threadIdx.x % 32;
  const T* dy = dout + n * C;
  const T* x = inp + n * C;
  const float m = mean[n], s = rstd[n];
  float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
  for (int64_t c = lane; c < C; c += 32) {
    const float dnorm = load(weight[c]) * load(dy[c]);
    dnorm_mean += dnorm;
    dnorm_norm_mean += dnorm * (load(x[c]) - m) * s;
  }
  dnorm_mean = warp_sum(dnorm_mean) / static_cast<float>(C);
  dnorm_norm_mean = warp_sum(dnorm_norm_mean) / static_cast<float>(C);
  for (int64_t c = lane; c < C; c += 32) {
    const float norm = (load(x[c]) - m) * s;
    const float dnorm = load(weight[c]) * load(dy[c]);
    T* dx = dinp + n * C + c;
    *dx = store<T>(load(*dx) + (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s);
  }
}

// A column's weight- and bias-gradient sums, added together.
struct ParamSums {
  float dweight, dbias;
  __device__ ParamSums& operator+=(const ParamSums& o) {
    dweight += o.dweight;
    dbias += o.dbias;
    return *this;
  }
};

template <typename T>
__global__ void __launch_bounds__(kColumnThreads)
    layernorm_params_kernel(T* dweight, T* dbias, const T* dout, const T* inp, const float* mean,
                            const float* rstd, int64_t N, int64_t C) {
  const int64_t c = block_column();
  const ParamSums sums = column_sum<ParamSums>(N, [&](int64_t n) {
    if (c >= C) return ParamSums{};
    const float dy = load(dout[n * C + c]);
    return ParamSums{(load(inp[n * C + c]) - mean[n]) * rstd[n] * dy, dy};
  });
  if (!holds_column_total() || c >= C) return;
  dweight[c] = store<T>(load(dweight[c]) + sums.dweight);
  dbias[c] = store<T>(load(dbias[c]) + sums.dbias);
}

template <typename T>
__global__ void rmsnorm_forward_kernel(T* out, float* rstd_out, const T* inp, const T* weight,
                                       int64_t N, int64_t C, float eps) {
  const int64_t n = warp_row();
  if (n >= N) return;
  const int lane = threadIdx.x % 32;
  const T* x = inp + n * C;
  float sum_sq = 0.0f;
  for (int64_t c = lane; c < C; c += 32) sum_sq += load(x[c]) * load(x[c]);
  const float r = rsqrtf(warp_sum(sum_sq) / static_cast<float>(C) + eps);
  for (int64_t c = lane; c < C; c += 32)
    out[n * C + c] = store<T>(load(weight[c]) * (load(x[c]) * r));
  if (lane == 0) rstd_out[n] = r;
}

template <typename T>
__global__ void rmsnorm_dinp_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
                                    const float* rstd, int64_t N, int64_t C) {
  const int64_t n = warp_row();
  if (n >= N) return;
  const int lane = threadIdx.x % 32;
  const T* dy = dout + n * C;
  const T* x = inp + n * C;
  const float r = rstd[n];
  float dot = 0.0f;
  for (int64_t c = lane; c < C; c += 32) dot += load(weight[c]) * load(dy[c]) * load(x[c]);
  const float coeff = r * r * r * warp_sum(dot) / static_cast<float>(C);
  for (int64_t c = lane; c < C; c += 32) {
    T* dx = dinp + n * C + c;
    *dx = store<T>(load(*dx) + r * load(weight[c]) * load(dy[c]) - coeff * load(x[c]));
  }
}

template <typename T>
__global__ void __launch_bounds__(kColumnThreads)
    rmsnorm_weight_kernel(T* dweight, const T* dout, const T* inp, const float* rstd, int64_t N,
                          int64_t C) {
  const int64_t c = block_column();
  const float dw = column_sum<float>(N, [&](int64_t n) {
    return c < C ? load(dout[n * C + c]) * load(inp[n * C + c]) * rstd[n] : 0.0f;
  });
  if (!holds_column_total() || c >= C) return;
  dweight[c] = store<T>(load(dweight[c]) + dw);
}

unsigned row_blocks(int64_t N) {
  return static_cast<unsigned>((N + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace

void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight,
                       const void* bias, DType type, int64_t N, int64_t C, float eps,
                       cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    layernorm_forward_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
        static_cast<S*>(out), mean, rstd, static_cast<const S*>(inp), static_cast<const S*>(weight),
        static_cast<const S*>(bias), N, C, eps);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void layernorm_backward(void* dinp, void* dweight, void* dbias, const void* dout, const void* inp,
                        const void* weight, const float* mean, const float* rstd, DType type,
                        int64_t N, int64_t C, cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    layernorm_dinp_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
        static_cast<S*>(dinp), static_cast<const S*>(dout), static_cast<const S*>(inp),
        static_cast<const S*>(weight), mean, rstd, N, C);
    LLMFT_CUDA_LAUNCH_CHECK();
    layernorm_params_kernel<<<column_blocks(C), kColumnThreads, 0, stream>>>(
        static_cast<S*>(dweight), static_cast<S*>(dbias), static_cast<const S*>(dout),
        static_cast<const S*>(inp), mean, rstd, N, C);
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

void rmsnorm_forward(void* out, float* rstd, const void* inp, const void* weight, DType type,
                     int64_t N, int64_t C, float eps, cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    rmsnorm_forward_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
        static_cast<S*>(out), rstd, static_cast<const S*>(inp), static_cast<const S*>(weight), N, C,
        eps);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void rmsnorm_backward(void* dinp, void* dweight, const void* dout, const void* inp,
                      const void* weight, const float* rstd, DType type, int64_t N, int64_t C,
                      cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    rmsnorm_dinp_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
        static_cast<S*>(dinp), static_cast<const S*>(dout), static_cast<const S*>(inp),
        static_cast<const S*>(weight), rstd, N, C);
    LLMFT_CUDA_LAUNCH_CHECK();
    rmsnorm_weight_kernel<<<column_blocks(C), kColumnThreads, 0, stream>>>(
        static_cast<S*>(dweight), static_cast<const S*>(dout), static_cast<const S*>(inp), rstd, N,
        C);
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace llmft::cuda
