// Finite-difference helpers for backward checks: a directional derivative of a scalar
// loss (accumulated in double) by central differences, compared with the analytic one.
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace llmft::testing {

inline std::vector<float> random_vector(size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// sum_i a[i] * b[i] in double.
inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// (loss(x + eps d) - loss(x - eps d)) / (2 eps) for a random unit direction d; x is
// restored.
// Returns {numeric, analytic} where analytic = grad . d.
inline std::pair<double, double> directional_check(std::vector<float>& x,
                                                   const std::vector<float>& grad,
                                                   const std::function<double()>& loss,
                                                   std::mt19937_64& rng, double eps = 1e-2) {
  std::vector<float> d = random_vector(x.size(), rng);
  const double norm = std::sqrt(dot(d, d));
  for (float& v : d) v = static_cast<float>(v / norm);
  std::vector<float> saved = x;
  for (size_t i = 0; i < x.size(); ++i) x[i] = saved[i] + static_cast<float>(eps) * d[i];
  double plus = loss();
  for (size_t i = 0; i < x.size(); ++i) x[i] = saved[i] - static_cast<float>(eps) * d[i];
  double minus = loss();
  x = saved;
  return {(plus - minus) / (2 * eps), dot(grad, d)};
}

// |a - b| relative to the larger of the two, floored at 1% of the gradient's norm so that
// directions nearly orthogonal to the gradient do not turn float rounding into failures.
inline double relative_error(double a, double b, const std::vector<float>& grad) {
  const double floor = 1e-2 * std::sqrt(dot(grad, grad)) + 1e-9;
  return std::fabs(a - b) / std::max({std::fabs(a), std::fabs(b), floor});
}

}  // namespace llmft::testing
