// AdaLomo's four passes (core/backend.h) on the GPU, with the CPU's arithmetic
// (core/cpu/adalomo.cpp): a factored second moment from row and column sums of squared
// gradients, a grouped normalisation of the update and a step relative to the weights' RMS.
// Every sum adds in a fixed order: rows by a warp each (strided lanes, then the warp's
// shuffles), columns through column_sums.cuh, norms through fixed partials.
#include "core/cuda/block_reduce.cuh"
#include "core/cuda/column_sums.cuh"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/element_math.h"

namespace llmft::cuda {
namespace {

constexpr float kSquareEps = 1e-30f;    // added to g^2 (AdaLomo's eps[0])
constexpr float kMinParamRms = 1e-3f;   // floor of the relative step size (eps[1])
constexpr float kClipThreshold = 1.0f;  // grouped update normalisation
constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / 32;  // row sums: a warp per row

template <typename G>
struct Moments {
  const G* g;
  const float* row;
  const float* col;  // null for a vector
  int64_t rows, cols;
  float grad_scale;
  const float* row_total;  // stats[0]: the whole tensor's row total, left on the device
  float full_rows;

  __host__ __device__ int64_t width() const { return col ? cols : 1; }
  __device__ float update(int64_t r, int64_t c) const {
    return element::adalomo_update(load(g[r * width() + c]) * grad_scale, row[r],
                                   *row_total / full_rows, col ? col[c] : 0.0f, col != nullptr);
  }
};

template <typename G>
__device__ double square(const G* g, int64_t i, float grad_scale) {
  const float x = load(g[i]) * grad_scale;
  return static_cast<double>(x) * x + kSquareEps;
}

// A warp per row: lane l adds columns l, l + 32, ... in order, then the warp's fixed
// shuffle pattern adds the lanes (neighbouring lanes read neighbouring elements).
template <typename G>
__global__ void row_sums_kernel(float* row_sums, const G* g, int64_t rows, int64_t width,
                                float grad_scale) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
  if (r >= rows) return;  // whole warps: a warp shares its row
  double total = 0.0;
  for (int64_t c = threadIdx.x % 32; c < width; c += 32) {
    total += square(g, r * width + c, grad_scale);
  }
  total = warp_sum(total);
  if (threadIdx.x % 32 == 0) row_sums[r] = static_cast<float>(total);
}

template <typename G>
__global__ void __launch_bounds__(kColumnThreads)
    col_sums_kernel(float* col_sums, const G* g, int64_t rows, int64_t cols, float grad_scale) {
  const int64_t c = block_column();
  const double total = column_sum<double>(
      rows, cols, [&](int64_t r) { return square(g, r * cols + c, grad_scale); });
  if (!holds_column_total() || c >= cols) return;
  col_sums[c] = static_cast<float>(total);
}

// One block: the states, and stats[0] = the sum of this slice's row state.
__global__ void moments_kernel(float* row_state, float* col_state, float* stats,
                               const float* row_sums, const float* col_sums, int64_t rows,
                               int64_t cols, int64_t full_rows, int64_t full_cols, float beta2) {
  __shared__ double shared[32];
  double total = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    const float mean = cols == 0 ? row_sums[r] : row_sums[r] / static_cast<float>(full_cols);
    row_state[r] = beta2 * row_state[r] + (1.0f - beta2) * mean;
    total += row_state[r];
  }
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    col_state[c] =
        beta2 * col_state[c] + (1.0f - beta2) * col_sums[c] / static_cast<float>(full_rows);
  }
  total = block_sum(total, shared);
  if (threadIdx.x == 0) stats[0] = static_cast<float>(total);
}

// Partials 2b, 2b + 1 = block b's sums of update^2 and param^2 over a fixed stride.
template <typename P, typename G>
__global__ void norm_partials(double* partials, const P* p, Moments<G> m) {
  __shared__ double shared[32];
  const int64_t n = m.rows * m.width();
  const int64_t stride = static_cast<int64_t>(kSumBlocks) * kThreads;
  double update_sq = 0.0, param_sq = 0.0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < n; i += stride) {
    const double u = m.update(i / m.width(), i % m.width());
    const double w = load(p[i]);
    update_sq += u * u;
    param_sq += w * w;
  }
  update_sq = block_sum(update_sq, shared);
  param_sq = block_sum(param_sq, shared);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = update_sq;
    partials[2 * blockIdx.x + 1] = param_sq;
  }
}

__global__ void norm_totals(float* stats, const double* partials) {
  __shared__ double shared[32];
  const double update_sq = block_sum(partials[2 * threadIdx.x], shared);
  const double param_sq = block_sum(partials[2 * threadIdx.x + 1], shared);
  if (threadIdx.x == 0) {
    stats[1] = static_cast<float>(update_sq);
    stats[2] = static_cast<float>(param_sq);
  }
}

template <typename P, typename G>
__global__ void apply_kernel(P* p, Moments<G> m, const float* stats, double full_numel, float lr,
                             float weight_decay) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m.rows * m.width()) return;
  const float normaliser =
      static_cast<float>(fmax(1.0, sqrt(stats[1] / full_numel) / kClipThreshold));
  const float step = lr * static_cast<float>(fmax(kMinParamRms, sqrt(stats[2] / full_numel)));
  const float decay = 1.0f - step * weight_decay;
  p[i] = store<P>(load(p[i]) * decay - step * m.update(i / m.width(), i % m.width()) / normaliser);
}

}  // namespace

void adalomo_square_sums(float* row_sums, float* col_sums, const void* grad, DType grad_type,
                         int64_t rows, int64_t cols, float grad_scale, cudaStream_t stream) {
  dispatch_float(grad_type, [&](auto t) {
    using G = decltype(t);
    const G* g = static_cast<const G*>(grad);
    if (rows > 0) {  // a tensor-parallel slice may hold no rows
      row_sums_kernel<<<blocks_for(rows, kRowsPerBlock), kThreads, 0, stream>>>(
          row_sums, g, rows, cols == 0 ? 1 : cols, grad_scale);
      LLMFT_CUDA_LAUNCH_CHECK();
    }
    if (cols == 0) return;
    col_sums_kernel<<<column_blocks(cols), kColumnThreads, 0, stream>>>(col_sums, g, rows, cols,
                                                                        grad_scale);
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

void adalomo_moments(float* row_state, float* col_state, float* stats, const float* row_sums,
                     const float* col_sums, int64_t rows, int64_t cols, int64_t full_rows,
                     int64_t full_cols, float beta2, cudaStream_t stream) {
  moments_kernel<<<1, 1024, 0, stream>>>(row_state, col_state, stats, row_sums, col_sums, rows,
                                         cols, full_rows, full_cols, beta2);
  LLMFT_CUDA_LAUNCH_CHECK();
}

namespace {

// The passes' view of a slice: its row mean is stats[0] (the whole tensor's row total,
// which the moments pass and, across a group, the Engine's sum leave there) over the full
// rows, read by the kernels on the device, so no pass waits on the host.
template <typename G>
Moments<G> moments_of(const void* grad, const float* row_state, const float* col_state,
                      int64_t rows, int64_t cols, int64_t full_rows, float grad_scale,
                      const float* stats) {
  return Moments<G>{static_cast<const G*>(grad),
                    row_state,
                    cols ? col_state : nullptr,
                    rows,
                    cols,
                    grad_scale,
                    stats,
                    static_cast<float>(full_rows)};
}

}  // namespace

void adalomo_norms(float* stats, const void* param, DType param_type, const void* grad,
                   DType grad_type, const float* row_state, const float* col_state, int64_t rows,
                   int64_t cols, int64_t full_rows, float grad_scale, double* partials,
                   cudaStream_t stream) {
  dispatch_float(param_type, [&](auto p) {
    dispatch_float(grad_type, [&](auto g) {
      using P = decltype(p);
      using G = decltype(g);
      const Moments<G> m =
          moments_of<G>(grad, row_state, col_state, rows, cols, full_rows, grad_scale, stats);
      norm_partials<<<kSumBlocks, kThreads, 0, stream>>>(partials, static_cast<const P*>(param), m);
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
  norm_totals<<<1, kSumBlocks, 0, stream>>>(stats, partials);
  LLMFT_CUDA_LAUNCH_CHECK();
}

void adalomo_apply(void* param, DType param_type, const void* grad, DType grad_type,
                   const float* row_state, const float* col_state, const float* stats, int64_t rows,
                   int64_t cols, int64_t full_rows, int64_t full_numel, float lr,
                   float weight_decay, float grad_scale, cudaStream_t stream) {
  dispatch_float(param_type, [&](auto p) {
    dispatch_float(grad_type, [&](auto g) {
      using P = decltype(p);
      using G = decltype(g);
      const Moments<G> m =
          moments_of<G>(grad, row_state, col_state, rows, cols, full_rows, grad_scale, stats);
      if (rows * m.width() == 0) return;
      apply_kernel<<<blocks_for(rows * m.width(), kThreads), kThreads, 0, stream>>>(
          static_cast<P*>(param), m, stats, static_cast<double>(full_numel), lr, weight_decay);
    });
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

}  // namespace llmft::cuda
