// AdaLomo's update on CPU in the four passes of Backend::adalomo_* (between which a
// tensor-parallel group reduces its slices' statistics). Each update element is
// recomputed where needed instead of storing an f32 copy of the tensor. Every sum runs
// in a fixed order (threads own rows, or blocks of columns, or chunks added in order), so
// the update does not depend on the thread count.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/ordered_reduce.h"
#include "core/element_math.h"
#include "core/float_traits.h"

namespace llmft::cpu {

namespace {

constexpr float kSquareEps = 1e-30f;    // added to g^2 (AdaLomo's eps[0])
constexpr float kMinParamRms = 1e-3f;   // floor of the relative step size (eps[1])
constexpr float kClipThreshold = 1.0f;  // grouped update normalisation

// The tensor's gradient, statistics and shape as the passes read them.
template <typename G>
struct Moments {
  const typename G::Storage* g;
  const float* row;
  const float* col;    // null for a vector
  int64_t rows, cols;  // cols 0: a vector of `rows`
  float grad_scale, row_mean;

  int64_t width() const { return col ? cols : 1; }
  float grad(int64_t i) const { return G::load(g[i]) * grad_scale; }
  float update(int64_t r, int64_t c) const {
    return element::adalomo_update(grad(r * width() + c), row[r], row_mean, col ? col[c] : 0.0f,
                                   col != nullptr);
  }
};

// The passes' view of a slice, its row mean from stats[0] (the whole tensor's row total).
template <typename G>
Moments<G> moments(const void* grad, const float* row_state, const float* col_state, int64_t rows,
                   int64_t cols, int64_t full_rows, float grad_scale, const float* stats) {
  return Moments<G>{static_cast<const typename G::Storage*>(grad),
                    row_state,
                    cols ? col_state : nullptr,
                    rows,
                    cols,
                    grad_scale,
                    stats[0] / static_cast<float>(full_rows)};
}

template <typename G>
void square_sums(float* row_sums, float* col_sums, const typename G::Storage* g, int64_t rows,
                 int64_t cols, float grad_scale) {
  auto square = [&](int64_t i) {
    const float x = G::load(g[i]) * grad_scale;
    return static_cast<double>(x) * x + kSquareEps;
  };
  const int64_t width = cols == 0 ? 1 : cols;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double row_total = 0.0;
    for (int64_t c = 0; c < width; ++c) row_total += square(r * width + c);
    row_sums[r] = static_cast<float>(row_total);
  }
  // Columns: threads own blocks of columns and walk the rows in order.
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < cols; start += kBlock) {
    const int64_t end = start + kBlock < cols ? start + kBlock : cols;
    double totals[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = start; c < end; ++c) totals[c - start] += square(r * cols + c);
    }
    for (int64_t c = start; c < end; ++c) col_sums[c] = static_cast<float>(totals[c - start]);
  }
}

// The sums of squares of the update and of the weights, added up together.
struct SquareSums {
  double update = 0.0, param = 0.0;
  SquareSums& operator+=(const SquareSums& o) {
    update += o.update;
    param += o.param;
    return *this;
  }
};

template <typename P, typename G>
void norms(float* stats, const typename P::Storage* p, const Moments<G>& m) {
  constexpr int64_t kRowsPerChunk = 16;
  const SquareSums sums =
      ordered_sum<SquareSums>(m.rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
        SquareSums chunk;
        for (int64_t r = begin; r < end; ++r) {
          for (int64_t c = 0; c < m.width(); ++c) {
            const double u = m.update(r, c);
            const double w = P::load(p[r * m.width() + c]);
            chunk.update += u * u;
            chunk.param += w * w;
          }
        }
        return chunk;
      });
  stats[1] = static_cast<float>(sums.update);
  stats[2] = static_cast<float>(sums.param);
}

template <typename P, typename G>
void apply(typename P::Storage* p, const Moments<G>& m, const float* stats, int64_t full_numel,
           float lr, float weight_decay) {
  const double n = static_cast<double>(full_numel);
  const float normaliser =
      static_cast<float>(std::max(1.0, std::sqrt(stats[1] / n) / kClipThreshold));
  const float step =
      lr * static_cast<float>(std::max<double>(kMinParamRms, std::sqrt(stats[2] / n)));
  const float decay = 1.0f - step * weight_decay;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.width(); ++c) {
      const int64_t i = r * m.width() + c;
      p[i] = P::store(P::load(p[i]) * decay - step * m.update(r, c) / normaliser);
    }
  }
}

// Calls f(P traits, G traits) for the tensors' dtypes.
template <typename F>
void with_types(DType param_type, DType grad_type, F f) {
  with_float_type(param_type,
                  [&](auto p) { with_float_type(grad_type, [&](auto g) { f(p, g); }); });
}

}  // namespace

void adalomo_square_sums(float* row_sums, float* col_sums, const void* grad, DType grad_type,
                         int64_t rows, int64_t cols, float grad_scale) {
  with_float_type(grad_type, [&](auto g) {
    using G = decltype(g);
    square_sums<G>(row_sums, col_sums, static_cast<const typename G::Storage*>(grad), rows, cols,
                   grad_scale);
  });
}

void adalomo_moments(float* row_state, float* col_state, float* stats, const float* row_sums,
                     const float* col_sums, int64_t rows, int64_t cols, int64_t full_rows,
                     int64_t full_cols, float beta2) {
  double row_total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float mean = cols == 0 ? row_sums[r] : row_sums[r] / static_cast<float>(full_cols);
    row_state[r] = beta2 * row_state[r] + (1.0f - beta2) * mean;
    row_total += row_state[r];
  }
  for (int64_t c = 0; c < cols; ++c) {
    col_state[c] =
        beta2 * col_state[c] + (1.0f - beta2) * col_sums[c] / static_cast<float>(full_rows);
  }
  stats[0] = static_cast<float>(row_total);
}

void adalomo_norms(float* stats, const void* param, DType param_type, const void* grad,
                   DType grad_type, const float* row_state, const float* col_state, int64_t rows,
                   int64_t cols, int64_t full_rows, float grad_scale) {
  with_types(param_type, grad_type, [&](auto p, auto g) {
    using P = decltype(p);
    using G = decltype(g);
    const auto m = moments<G>(grad, row_state, col_state, rows, cols, full_rows, grad_scale, stats);
    norms<P, G>(stats, static_cast<const typename P::Storage*>(param), m);
  });
}

void adalomo_apply(void* param, DType param_type, const void* grad, DType grad_type,
                   const float* row_state, const float* col_state, const float* stats, int64_t rows,
                   int64_t cols, int64_t full_rows, int64_t full_numel, float lr,
                   float weight_decay, float grad_scale) {
  with_types(param_type, grad_type, [&](auto p, auto g) {
    using P = decltype(p);
    using G = decltype(g);
    const auto m = moments<G>(grad, row_state, col_state, rows, cols, full_rows, grad_scale, stats);
    apply<P, G>(static_cast<typename P::Storage*>(param), m, stats, full_numel, lr, weight_decay);
  });
}

}  // namespace llmft::cpu
