// AdaLomo's update on CPU (see Backend::adalomo_update): the factored second moment is
// refreshed from the gradient, then two passes compute the update's RMS and apply it,
// recomputing each update element instead of storing an f32 copy of the tensor. Column
// statistics use O(threads x columns) host scratch.
#include <cmath>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/float_traits.h"

namespace llmft::cpu {

namespace {

constexpr float kSquareEps = 1e-30f;    // added to g^2 (AdaLomo's eps[0])
constexpr float kMinParamRms = 1e-3f;   // floor of the relative step size (eps[1])
constexpr float kClipThreshold = 1.0f;  // grouped update normalisation

template <typename P, typename G>
void adalomo(typename P::Storage* p, const typename G::Storage* g, float* row, float* col,
             int64_t rows, int64_t cols, float lr, float beta2, float weight_decay,
             float grad_scale) {
  const bool matrix = cols > 0;
  const int64_t width = matrix ? cols : 1;
  auto grad = [&](int64_t i) { return G::load(g[i]) * grad_scale; };

  // Second-moment statistics.
  if (matrix) {
    std::vector<double> col_sum(static_cast<size_t>(cols), 0.0);
#pragma omp parallel
    {
      std::vector<double> local(static_cast<size_t>(cols), 0.0);
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        double row_sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
          const float x = grad(r * cols + c);
          const double s = static_cast<double>(x) * x + kSquareEps;
          row_sum += s;
          local[c] += s;
        }
        row[r] = beta2 * row[r] + (1.0f - beta2) * static_cast<float>(row_sum / cols);
      }
#pragma omp critical
      for (int64_t c = 0; c < cols; ++c) col_sum[c] += local[c];
    }
    for (int64_t c = 0; c < cols; ++c) {
      col[c] = beta2 * col[c] + (1.0f - beta2) * static_cast<float>(col_sum[c] / rows);
    }
  } else {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float x = grad(r);
      row[r] = beta2 * row[r] + (1.0f - beta2) * (x * x + kSquareEps);
    }
  }
  double row_mean = 0.0;
  if (matrix) {
    for (int64_t r = 0; r < rows; ++r) row_mean += row[r];
    row_mean /= static_cast<double>(rows);
  }
  // u(i) without storing it.
  auto update = [&](int64_t r, int64_t c) {
    const float x = grad(r * width + c);
    if (!matrix) return x / std::sqrt(row[r]);
    return x / std::sqrt(row[r] / static_cast<float>(row_mean)) / std::sqrt(col[c]);
  };

  // RMS of the update and of the parameter.
  double update_sq = 0.0, param_sq = 0.0;
#pragma omp parallel for reduction(+ : update_sq, param_sq) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      const double u = update(r, c);
      const double w = P::load(p[r * width + c]);
      update_sq += u * u;
      param_sq += w * w;
    }
  }
  const double n = static_cast<double>(rows) * width;
  const float normaliser =
      static_cast<float>(std::max(1.0, std::sqrt(update_sq / n) / kClipThreshold));
  const float step =
      lr * static_cast<float>(std::max<double>(kMinParamRms, std::sqrt(param_sq / n)));
  const float decay = 1.0f - step * weight_decay;

#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      const int64_t i = r * width + c;
      p[i] = P::store(P::load(p[i]) * decay - step * update(r, c) / normaliser);
    }
  }
}

}  // namespace

void adalomo_update(void* param, DType param_type, const void* grad, DType grad_type,
                    float* row_state, float* col_state, int64_t rows, int64_t cols, float lr,
                    float beta2, float weight_decay, float grad_scale) {
  with_float_type(param_type, [&](auto param_traits) {
    using P = decltype(param_traits);
    with_float_type(grad_type, [&](auto grad_traits) {
      using G = decltype(grad_traits);
      adalomo<P, G>(static_cast<typename P::Storage*>(param),
                    static_cast<const typename G::Storage*>(grad), row_state, col_state, rows, cols,
                    lr, beta2, weight_decay, grad_scale);
    });
  });
}

}  // namespace llmft::cpu
