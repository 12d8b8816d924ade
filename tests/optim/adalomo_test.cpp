// AdaLomo's update against a straightforward double-precision implementation of the
// published rule (factored second moment, grouped update normalisation, relative step
// size, decoupled weight decay), written here independently of the kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "optim/adalomo.h"

using namespace llmft;

namespace {

// The reference: one tensor (rows x cols, or a vector when cols == 0), state in doubles.
struct Reference {
  std::vector<double> param, row, col;
  int64_t rows, cols;

  void step(const std::vector<float>& grad, int t, double lr, double wd, double scale) {
    const double beta2 = 1.0 - std::pow(t, -0.8);
    const int64_t n = static_cast<int64_t>(param.size());
    std::vector<double> g(n), u(n);
    for (int64_t i = 0; i < n; ++i) g[i] = grad[i] * scale;
    if (cols > 0) {
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0;
        for (int64_t c = 0; c < cols; ++c)
          mean += (g[r * cols + c] * g[r * cols + c] + 1e-30) / cols;
        row[r] = beta2 * row[r] + (1 - beta2) * mean;
      }
      for (int64_t c = 0; c < cols; ++c) {
        double mean = 0;
        for (int64_t r = 0; r < rows; ++r)
          mean += (g[r * cols + c] * g[r * cols + c] + 1e-30) / rows;
        col[c] = beta2 * col[c] + (1 - beta2) * mean;
      }
      double row_mean = 0;
      for (double v : row) row_mean += v / rows;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          // v_hat = row col^T / mean(row)
          u[r * cols + c] = g[r * cols + c] / std::sqrt(row[r] * col[c] / row_mean);
        }
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        row[i] = beta2 * row[i] + (1 - beta2) * (g[i] * g[i] + 1e-30);
        u[i] = g[i] / std::sqrt(row[i]);
      }
    }
    double u_sq = 0, p_sq = 0;
    for (int64_t i = 0; i < n; ++i) u_sq += u[i] * u[i], p_sq += param[i] * param[i];
    const double clip = std::max(1.0, std::sqrt(u_sq / n));
    const double step_lr = lr * std::max(1e-3, std::sqrt(p_sq / n));
    for (int64_t i = 0; i < n; ++i) {
      param[i] = param[i] * (1 - step_lr * wd) - step_lr * u[i] / clip;
    }
  }
};

}  // namespace

TEST_CASE("AdaLomo matches a reference implementation of its update") {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  UnitLayout u;
  u.name = "unit";
  ParamInfo w{"w", {5, 7}};
  w.weight_decay = true;
  u.add(w);
  u.add(ParamInfo{"b", {6}});
  OptimizerConfig cfg;
  cfg.kind = OptimizerKind::adalomo;
  cfg.weight_decay = 0.05f;
  auto opt = make_optimizer(cfg, be, alloc, {u}, {whole(u)});
  CHECK(opt->fused());
  // The state (rows + columns, the vector) and the scratch of one update (the largest
  // tensor's row and column sums and three statistics).
  CHECK(alloc.current(MemoryCategory::optimizer_state) ==
        rounded_allocation((5 + 7 + 6) * sizeof(float)) +
            rounded_allocation((5 + 7 + 3) * sizeof(float)));

  std::mt19937_64 rng(12);
  std::normal_distribution<float> normal;
  std::vector<float> params(41), grads(41);
  for (float& p : params) p = normal(rng) * 0.1f;
  Reference matrix{
      {params.begin(), params.begin() + 35}, std::vector<double>(5), std::vector<double>(7), 5, 7};
  Reference vector{{params.begin() + 35, params.end()}, std::vector<double>(6), {}, 6, 0};
  for (int t = 1; t <= 5; ++t) {
    for (float& g : grads) g = normal(rng) * (t == 3 ? 50.0f : 1.0f);  // t = 3 exercises the clip
    opt->begin_step(t);
    opt->update_unit(0, u, whole(u), Tensor(params.data(), DType::f32, {41}),
                     Tensor(grads.data(), DType::f32, {41}), 0.01f, 0.5f);
    matrix.step({grads.begin(), grads.begin() + 35}, t, 0.01, 0.05, 0.5);
    vector.step({grads.begin() + 35, grads.end()}, t, 0.01, 0.0, 0.5);
    // f32 against double: a step rounds a few dozen operations per weight (u = 6e-8
    // relative each) and the grouped normalisation sums 35 squares; on weights of size
    // ~0.1 that is ~1e-7 a step. 1e-5 absolute (1e-4 of a weight) covers five steps.
    for (int i = 0; i < 35; ++i) CHECK(std::fabs(params[i] - matrix.param[i]) < 1e-5);
    for (int i = 0; i < 6; ++i) CHECK(std::fabs(params[35 + i] - vector.param[i]) < 1e-5);
  }
}
