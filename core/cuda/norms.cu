// LayerNorm and RMSNorm on the GPU, statistics in f32 as PyTorch keeps them. Forwards (and
// the fused residual add + norm) and input gradients: a block per row holding the row in
// registers (row_slice.cuh), so each element is read once, with 16-byte accesses where the
// tensors allow; rows too wide for that take a warp per row that reads the row again for
// each pass. Weight and bias gradients: column_sums.cuh's fixed-order column sums.
#include "core/cuda/block_reduce.cuh"
#include "core/cuda/column_sums.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/cuda/row_slice.cuh"
#include "core/cuda/vector_access.cuh"

namespace llmft::cuda {
namespace {

constexpr int kRowsPerBlock = 8;  // warps per block, one row each

__device__ __forceinline__ int64_t warp_row() {
  return blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
}

// --- rows too wide for registers: a warp per row, a pass over the row for each
// statistic and one for the output ---

template <typename T>
__global__ void layernorm_forward_wide_kernel(T* out, float* mean_out, float* rstd_out,
                                              const T* inp, const T* weight, const T* bias,
                                              int64_t N, int64_t C, float eps) {
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
__global__ void rmsnorm_forward_wide_kernel(T* out, float* rstd_out, const T* inp, const T* weight,
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
__global__ void layernorm_dinp_wide_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
                                           const float* mean, const float* rstd, int64_t N,
                                           int64_t C) {
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

template <typename T>
__global__ void rmsnorm_dinp_wide_kernel(T* dinp, const T* dout, const T* inp, const T* weight,
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

// --- a block per row, the row in registers (row_slice.cuh) ---

// Row n of a norm's input: inp's, or with `residual` set, residual's row + inp's row
// rounded once into T (add_inplace's arithmetic), which is also written back to residual;
// the norm then reads the rounded values, as it would read them from the stored residual.
template <typename T, int P>
__device__ RowSlice<P> norm_input(T* residual, const T* inp, int64_t n, int64_t C, bool aligned) {
  RowSlice<P> x(C, aligned);
  if (residual == nullptr) {
    x.read(inp + n * C);
    return x;
  }
  RowSlice<P> addend(C, aligned);
  x.read(residual + n * C);
  addend.read(inp + n * C);
#pragma unroll
  for (int j = 0; j < P; ++j) {
#pragma unroll
    for (int k = 0; k < kPack; ++k) x.v[j][k] = load(store<T>(x.v[j][k] + addend.v[j][k]));
  }
  x.write(residual + n * C);
  return x;
}

template <typename T, int P>
__global__ void __launch_bounds__(kMaxRowThreads)
    layernorm_forward_kernel(T* out, float* mean_out, float* rstd_out, T* residual, const T* inp,
                             const T* weight, const T* bias, int64_t C, float eps, bool aligned) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  const RowSlice<P> x = norm_input<T, P>(residual, inp, n, C, aligned);
  const float mean = x.row_sum([](float v) { return v; }, shared) / static_cast<float>(C);
  const auto squared_deviation = [&](float v) {
    const float d = v - mean;
    return d * d;
  };
  const float var = x.row_sum(squared_deviation, shared) / static_cast<float>(C);
  const float rstd = rsqrtf(var + eps);
#pragma unroll
  for (int j = 0; j < P; ++j) {
    float w[kPack], b[kPack];
    load_pack(w, weight, x.span[j]);
    load_pack(b, bias, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) w[k] = (x.v[j][k] - mean) * rstd * w[k] + b[k];
    store_pack(out + n * C, w, x.span[j]);
  }
  if (threadIdx.x == 0) {
    mean_out[n] = mean;
    rstd_out[n] = rstd;
  }
}

template <typename T, int P>
__global__ void __launch_bounds__(kMaxRowThreads)
    rmsnorm_forward_kernel(T* out, float* rstd_out, T* residual, const T* inp, const T* weight,
                           int64_t C, float eps, bool aligned) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  const RowSlice<P> x = norm_input<T, P>(residual, inp, n, C, aligned);
  const float sum_sq = x.row_sum([](float v) { return v * v; }, shared);
  const float r = rsqrtf(sum_sq / static_cast<float>(C) + eps);
#pragma unroll
  for (int j = 0; j < P; ++j) {
    float w[kPack];
    load_pack(w, weight, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) w[k] = w[k] * (x.v[j][k] * r);
    store_pack(out + n * C, w, x.span[j]);
  }
  if (threadIdx.x == 0) rstd_out[n] = r;
}

template <typename T, int P>
__global__ void __launch_bounds__(kMaxRowThreads)
    layernorm_dinp_kernel(T* dinp, const T* dout, const T* inp, const T* weight, const float* mean,
                          const float* rstd, int64_t C, bool aligned) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  const float m = mean[n], s = rstd[n];
  RowSlice<P> x(C, aligned), dnorm(C, aligned);
  x.read(inp + n * C);
  dnorm.read(dout + n * C);
#pragma unroll
  for (int j = 0; j < P; ++j) {
    float w[kPack];
    load_pack(w, weight, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) dnorm.v[j][k] = w[k] * dnorm.v[j][k];
  }
  const float dnorm_mean = dnorm.row_sum([](float d) { return d; }, shared) / static_cast<float>(C);
  const auto dnorm_norm_terms = [&](int j, float(&terms)[kPack]) {
#pragma unroll
    for (int k = 0; k < kPack; ++k) terms[k] = dnorm.v[j][k] * (x.v[j][k] - m) * s;
  };
  const float dnorm_norm_mean = x.row_total(dnorm_norm_terms, shared) / static_cast<float>(C);
#pragma unroll
  for (int j = 0; j < P; ++j) {
    float dx[kPack];
    load_pack(dx, dinp + n * C, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) {
      const float norm = (x.v[j][k] - m) * s;
      dx[k] = dx[k] + (dnorm.v[j][k] - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
    store_pack(dinp + n * C, dx, x.span[j]);
  }
}

template <typename T, int P>
__global__ void __launch_bounds__(kMaxRowThreads)
    rmsnorm_dinp_kernel(T* dinp, const T* dout, const T* inp, const T* weight, const float* rstd,
                        int64_t C, bool aligned) {
  __shared__ float shared[32];
  const int64_t n = blockIdx.x;
  const float r = rstd[n];
  RowSlice<P> x(C, aligned), dy(C, aligned);
  x.read(inp + n * C);
  dy.read(dout + n * C);
  const auto dot_terms = [&](int j, float(&terms)[kPack]) {
    float w[kPack];
    load_pack(w, weight, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) terms[k] = w[k] * dy.v[j][k] * x.v[j][k];
  };
  const float dot = x.row_total(dot_terms, shared);
  const float coeff = r * r * r * dot / static_cast<float>(C);
#pragma unroll
  for (int j = 0; j < P; ++j) {
    float dx[kPack], w[kPack];
    load_pack(dx, dinp + n * C, x.span[j]);
    load_pack(w, weight, x.span[j]);
#pragma unroll
    for (int k = 0; k < kPack; ++k) dx[k] = dx[k] + r * w[k] * dy.v[j][k] - coeff * x.v[j][k];
    store_pack(dinp + n * C, dx, x.span[j]);
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

// The weight and bias gradients are of G: T, or f32 (sums in fp32, core/backend.h).
template <typename G, typename T>
__global__ void __launch_bounds__(kColumnThreads)
    layernorm_params_kernel(G* dweight, G* dbias, const T* dout, const T* inp, const float* mean,
                            const float* rstd, int64_t N, int64_t C) {
  const int64_t c = block_column();
  const ParamSums sums = column_sum<ParamSums>(N, C, [&](int64_t n) {
    const float dy = load(dout[n * C + c]);
    return ParamSums{(load(inp[n * C + c]) - mean[n]) * rstd[n] * dy, dy};
  });
  if (!holds_column_total() || c >= C) return;
  dweight[c] = store<G>(load(dweight[c]) + sums.dweight);
  dbias[c] = store<G>(load(dbias[c]) + sums.dbias);
}

template <typename G, typename T>
__global__ void __launch_bounds__(kColumnThreads)
    rmsnorm_weight_kernel(G* dweight, const T* dout, const T* inp, const float* rstd, int64_t N,
                          int64_t C) {
  const int64_t c = block_column();
  const float dw = column_sum<float>(
      N, C, [&](int64_t n) { return load(dout[n * C + c]) * load(inp[n * C + c]) * rstd[n]; });
  if (!holds_column_total() || c >= C) return;
  dweight[c] = store<G>(load(dweight[c]) + dw);
}

unsigned row_blocks(int64_t N) {
  return static_cast<unsigned>((N + kRowsPerBlock - 1) / kRowsPerBlock);
}

// The tensors every norm forward launch shares: the rows of inp, or with `residual` set,
// of residual += inp, normalised into out.
template <typename T>
struct NormRows {
  T* out;
  T* residual;  // null: a plain norm of inp
  const T* inp;
  const T* weight;
  int64_t N, C;

  // Whether 16-byte accesses serve every row and the weight.
  bool aligned() const {
    return rows_aligned_for_packs(out, C) && rows_aligned_for_packs(inp, C) &&
           (residual == nullptr || rows_aligned_for_packs(residual, C)) &&
           aligned_for_packs(weight);
  }
  // What the wide kernels normalise: inp, or residual after add_inplace has added inp to it
  // (the same arithmetic as the register kernels' fused add).
  const T* wide_input(DType type, cudaStream_t stream) const {
    if (residual == nullptr) return inp;
    add_inplace(residual, type, inp, type, N * C, stream);
    return residual;
  }
};

template <typename T>
NormRows<T> norm_rows(void* out, void* residual, const void* inp, const void* weight, int64_t N,
                      int64_t C) {
  return NormRows<T>{static_cast<T*>(out),
                     static_cast<T*>(residual),
                     static_cast<const T*>(inp),
                     static_cast<const T*>(weight),
                     N,
                     C};
}

// The tensors of a norm's input-gradient launch: dinp(N, C) += the gradient through the
// norm of inp, given dout.
template <typename T>
struct NormGradientRows {
  T* dinp;
  const T* dout;
  const T* inp;
  const T* weight;
  int64_t C;

  // Whether 16-byte accesses serve every row and the weight.
  bool aligned() const {
    return rows_aligned_for_packs(dinp, C) && rows_aligned_for_packs(dout, C) &&
           rows_aligned_for_packs(inp, C) && aligned_for_packs(weight);
  }
};

template <typename T>
NormGradientRows<T> norm_gradient_rows(void* dinp, const void* dout, const void* inp,
                                       const void* weight, int64_t C) {
  return NormGradientRows<T>{static_cast<T*>(dinp), static_cast<const T*>(dout),
                             static_cast<const T*>(inp), static_cast<const T*>(weight), C};
}

}  // namespace

void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight,
                       const void* bias, DType type, int64_t N, int64_t C, float eps,
                       cudaStream_t stream) {
  residual_layernorm_forward(nullptr, inp, out, mean, rstd, weight, bias, type, N, C, eps, stream);
}

void residual_layernorm_forward(void* residual, const void* x, void* out, float* mean, float* rstd,
                                const void* weight, const void* bias, DType type, int64_t N,
                                int64_t C, float eps, cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to add or normalise
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const auto rows = norm_rows<S>(out, residual, x, weight, N, C);
    const S* b = static_cast<const S*>(bias);
    if (!row_fits_registers(C)) {
      const S* input = rows.wide_input(type, stream);
      layernorm_forward_wide_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
          rows.out, mean, rstd, input, rows.weight, b, N, C, eps);
      return;
    }
    const bool aligned = rows.aligned() && aligned_for_packs(b);
    with_row_slice(C, [&](auto packs, int threads) {
      layernorm_forward_kernel<S, decltype(packs)::value>
          <<<static_cast<unsigned>(N), threads, 0, stream>>>(
              rows.out, mean, rstd, rows.residual, rows.inp, rows.weight, b, C, eps, aligned);
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void layernorm_backward(void* dinp, void* dweight, void* dbias, DType grad_type, const void* dout,
                        const void* inp, const void* weight, const float* mean, const float* rstd,
                        DType type, int64_t N, int64_t C, cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const auto rows = norm_gradient_rows<S>(dinp, dout, inp, weight, C);
    if (!row_fits_registers(C)) {
      layernorm_dinp_wide_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
          rows.dinp, rows.dout, rows.inp, rows.weight, mean, rstd, N, C);
    } else {
      with_row_slice(C, [&](auto packs, int threads) {
        layernorm_dinp_kernel<S, decltype(packs)::value>
            <<<static_cast<unsigned>(N), threads, 0, stream>>>(
                rows.dinp, rows.dout, rows.inp, rows.weight, mean, rstd, C, rows.aligned());
      });
    }
    LLMFT_CUDA_LAUNCH_CHECK();
    dispatch_float(grad_type, [&](auto g) {
      using G = decltype(g);
      layernorm_params_kernel<<<column_blocks(C), kColumnThreads, 0, stream>>>(
          static_cast<G*>(dweight), static_cast<G*>(dbias), static_cast<const S*>(dout),
          static_cast<const S*>(inp), mean, rstd, N, C);
    });
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

void rmsnorm_forward(void* out, float* rstd, const void* inp, const void* weight, DType type,
                     int64_t N, int64_t C, float eps, cudaStream_t stream) {
  residual_rmsnorm_forward(nullptr, inp, out, rstd, weight, type, N, C, eps, stream);
}

void residual_rmsnorm_forward(void* residual, const void* x, void* out, float* rstd,
                              const void* weight, DType type, int64_t N, int64_t C, float eps,
                              cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to add or normalise
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const auto rows = norm_rows<S>(out, residual, x, weight, N, C);
    if (!row_fits_registers(C)) {
      const S* input = rows.wide_input(type, stream);
      rmsnorm_forward_wide_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
          rows.out, rstd, input, rows.weight, N, C, eps);
      return;
    }
    with_row_slice(C, [&](auto packs, int threads) {
      rmsnorm_forward_kernel<S, decltype(packs)::value>
          <<<static_cast<unsigned>(N), threads, 0, stream>>>(
              rows.out, rstd, rows.residual, rows.inp, rows.weight, C, eps, rows.aligned());
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void rmsnorm_backward(void* dinp, void* dweight, DType grad_type, const void* dout, const void* inp,
                      const void* weight, const float* rstd, DType type, int64_t N, int64_t C,
                      cudaStream_t stream) {
  if (N * C == 0) return;  // no rows: nothing to normalise or add
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    const auto rows = norm_gradient_rows<S>(dinp, dout, inp, weight, C);
    if (!row_fits_registers(C)) {
      rmsnorm_dinp_wide_kernel<<<row_blocks(N), kRowsPerBlock * 32, 0, stream>>>(
          rows.dinp, rows.dout, rows.inp, rows.weight, rstd, N, C);
    } else {
      with_row_slice(C, [&](auto packs, int threads) {
        rmsnorm_dinp_kernel<S, decltype(packs)::value>
            <<<static_cast<unsigned>(N), threads, 0, stream>>>(
                rows.dinp, rows.dout, rows.inp, rows.weight, rstd, C, rows.aligned());
      });
    }
    LLMFT_CUDA_LAUNCH_CHECK();
    dispatch_float(grad_type, [&](auto g) {
      using G = decltype(g);
      rmsnorm_weight_kernel<<<column_blocks(C), kColumnThreads, 0, stream>>>(
          static_cast<G*>(dweight), static_cast<const S*>(dout), static_cast<const S*>(inp), rstd,
          N, C);
    });
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace llmft::cuda
