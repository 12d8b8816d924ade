// The CPU attention's tile products (core/cpu/tile_products.h) against double-precision
// sums: row counts around the register tile's 6 rows, widths around its vectors (8 or 16
// floats) and column blocks (16 or 64), depths across its depth blocks (128 or 512 rows of
// B), A read straight and transposed, alpha, accumulation, and the transposed product
// through transpose_panels with rows and columns off its register squares.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu/tile_products.h"

namespace llmft {
namespace {

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(generator);
  return values;
}

struct Case {
  int64_t m, width, depth;
  bool transposed_a;
  float alpha;
  bool accumulate;
};

// How far c is from alpha * A B (+ c0) beyond fp32's bound: a sum of `depth` products
// rounds by at most depth units of 2^-24 of the sum of the terms' magnitudes (the standard
// bound on recursive summation, doubled for the products' and the scaling's roundings), so
// any element past it is a wrong term, not rounding. Returns the worst excess (<= 0 passes).
double worst_excess(const Case& t, const std::vector<float>& c, const std::vector<float>& c0,
                    const std::vector<float>& a, const std::vector<float>& b, int64_t ldc,
                    int64_t ldb) {
  double worst = -1.0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.width; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < t.depth; ++k) {
        const double a_ik = t.transposed_a ? a[k * t.m + i] : a[i * t.depth + k];
        sum += a_ik * b[k * ldb + j];
        magnitude += std::fabs(a_ik * b[k * ldb + j]);
      }
      const double base = t.accumulate ? c0[i * ldc + j] : 0.0;
      const double expected = base + t.alpha * sum;
      const double bound = 2.0 * (t.depth + 2) * std::ldexp(1.0, -24) *
                           (std::fabs(t.alpha) * magnitude + std::fabs(base));
      worst = std::max(worst, std::fabs(c[i * ldc + j] - expected) - bound);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("tile products equal double-precision sums at every edge of their blocking") {
  unsigned seed = 1;
  for (int64_t m : {1, 5, 6, 7, 13}) {
    for (int64_t width : {1, 15, 16, 17, 64, 65, 100, 130}) {
      for (int64_t depth : {0, 1, 7, 64, 600}) {
        for (bool transposed_a : {false, true}) {
          const Case t{m, width, depth, transposed_a, transposed_a ? 0.125f : 1.0f, depth % 2 == 1};
          const int64_t ldc = width + 3, ldb = width + 5;
          const std::vector<float> a = random_values(m * depth, seed++);
          const std::vector<float> b = random_values(depth * ldb, seed++);
          const std::vector<float> c0 = random_values(m * ldc, seed++);
          std::vector<float> c = c0;
          cpu::tile_product({c.data(), ldc, a.data(), transposed_a ? 1 : depth,
                             transposed_a ? m : 1, b.data(), ldb, m, width, depth, t.alpha,
                             t.accumulate});
          CAPTURE(m);
          CAPTURE(width);
          CAPTURE(depth);
          CAPTURE(transposed_a);
          CHECK(worst_excess(t, c, c0, a, b, ldc, ldb) <= 0.0);
          // Past each row's width nothing is written.
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = width; j < ldc; ++j) CHECK(c[i * ldc + j] == c0[i * ldc + j]);
          }
        }
      }
    }
  }
}

TEST_CASE("a product with a transposed right-hand side through its panels equals the sums") {
  // x has a panel's rows more on each side of the `rows` the product takes, which start at
  // a panel boundary: the panels of a whole sequence serve each of its key tiles.
  const int64_t panel = cpu::tile_panel_width();
  unsigned seed = 100;
  for (int64_t rows : {1, 16, 37, 64, 100, 128}) {
    for (int64_t cols : {8, 24, 64}) {
      const int64_t m = 11, ld = cols + 7, total = rows + 2 * panel;
      const std::vector<float> x = random_values(total * ld, seed++);
      const std::vector<float> a = random_values(m * cols, seed++);
      std::vector<float> panels(total * cols);
      cpu::transpose_panels(panels.data(), x.data(), total, cols, ld);
      std::vector<float> c(m * rows, 0.0f);
      cpu::transposed_product(c.data(), rows, a.data(), cols, 1, panels.data() + panel * cols,
                              total - panel, m, rows, cols, 0.5f, false);
      // The reference reads x^T directly: B(k, j) = x[(panel + j) * ld + k].
      std::vector<float> x_transposed(cols * rows);
      for (int64_t j = 0; j < rows; ++j) {
        for (int64_t k = 0; k < cols; ++k) x_transposed[k * rows + j] = x[(panel + j) * ld + k];
      }
      CAPTURE(rows);
      CAPTURE(cols);
      CHECK(worst_excess({m, rows, cols, false, 0.5f, false}, c, c, a, x_transposed, rows, rows) <=
            0.0);
    }
  }
}

}  // namespace llmft
