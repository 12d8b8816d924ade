// The blocked CPU attention (core/cpu/attention.cpp) against a direct double-precision
// evaluation of causal softmax attention and its gradients, at lengths that are not
// multiples of its 128-row tiles (1, 37, 129, 1000) or of the forward's 1024-key blocks
// (1100, and a KV cache of 1200 rows), with grouped and multi-query heads,
// with samples packed into a row (no query sees a key of another sample) and, forward,
// with a KV cache offset (the queries are the last rows of a longer cache).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "tests/core/gradcheck.h"

namespace llmft {
namespace {

using testing::random_vector;

struct Shape {
  int64_t B, T, H, KVH, D, R;  // R rows of qkv; the T queries are its last T rows
  int64_t width() const { return (H + 2 * KVH) * D; }
};

struct Reference {
  std::vector<double> out, lse, dqkv;
};

// Positions first, first + 1, ... along every row: one stream, no sample edges.
std::vector<int32_t> stream_positions(const Shape& s) {
  std::vector<int32_t> positions(s.B * s.T);
  for (size_t i = 0; i < positions.size(); ++i) {
    positions[i] = static_cast<int32_t>(s.R - s.T + static_cast<int64_t>(i) % s.T);
  }
  return positions;
}

// Positions of samples of the given lengths packed into each row, one after another (the
// lengths of a row add up to T); row b's lengths are rotated by b so rows differ.
std::vector<int32_t> packed_positions(const Shape& s, const std::vector<int64_t>& lengths) {
  std::vector<int32_t> positions;
  for (int64_t b = 0; b < s.B; ++b) {
    for (size_t i = 0; i < lengths.size(); ++i) {
      const int64_t length = lengths[(i + b) % lengths.size()];
      for (int64_t p = 0; p < length; ++p) positions.push_back(static_cast<int32_t>(p));
    }
  }
  REQUIRE(static_cast<int64_t>(positions.size()) == s.B * s.T);
  return positions;
}

// out = softmax(q k^T / sqrt(D)) v per head, each query seeing the keys from its sample's
// start (its row minus its position) to its own row, lse, and (when dout is given, R = T)
// the gradient of sum(out * dout) with respect to qkv, all in double.
Reference reference(const std::vector<float>& qkv, const std::vector<float>* dout, const Shape& s,
                    const std::vector<int32_t>& positions) {
  const int64_t W = s.width(), group = s.H / s.KVH, first = s.R - s.T;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  Reference ref{std::vector<double>(s.B * s.T * s.H * s.D), std::vector<double>(s.B * s.H * s.T),
                std::vector<double>(qkv.size(), 0.0)};
  auto at = [&](int64_t b, int64_t t, int64_t column) { return qkv[(b * s.R + t) * W + column]; };
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t kc = (s.H + h / group) * s.D, vc = (s.H + s.KVH + h / group) * s.D;
      for (int64_t t = 0; t < s.T; ++t) {
        const int64_t i = first + t, start = i - positions[b * s.T + t];
        std::vector<double> p(i + 1, 0.0);
        double max = -INFINITY, sum = 0.0;
        for (int64_t j = start; j <= i; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < s.D; ++d) dot += at(b, i, h * s.D + d) * at(b, j, kc + d);
          p[j] = dot * scale;
          max = std::max(max, p[j]);
        }
        for (int64_t j = start; j <= i; ++j) sum += (p[j] = std::exp(p[j] - max));
        double* o = &ref.out[((b * s.T + t) * s.H + h) * s.D];
        for (int64_t j = start; j <= i; ++j) {
          p[j] /= sum;
          for (int64_t d = 0; d < s.D; ++d) o[d] += p[j] * at(b, j, vc + d);
        }
        ref.lse[(b * s.H + h) * s.T + t] = max + std::log(sum);
        if (dout == nullptr) continue;
        const float* g = &(*dout)[((b * s.T + t) * s.H + h) * s.D];
        double delta = 0.0;
        for (int64_t d = 0; d < s.D; ++d) delta += g[d] * o[d];
        for (int64_t j = start; j <= i; ++j) {
          double dp = 0.0;
          for (int64_t d = 0; d < s.D; ++d) dp += g[d] * at(b, j, vc + d);
          const double ds = p[j] * (dp - delta) * scale;
          for (int64_t d = 0; d < s.D; ++d) {
            ref.dqkv[(b * s.R + i) * W + h * s.D + d] += ds * at(b, j, kc + d);
            ref.dqkv[(b * s.R + j) * W + kc + d] += ds * at(b, i, h * s.D + d);
            ref.dqkv[(b * s.R + j) * W + vc + d] += p[j] * g[d];
          }
        }
      }
    }
  }
  return ref;
}

// max |got - want| over max |want|.
template <typename T>
double scaled_error(const std::vector<T>& got, const std::vector<double>& want) {
  double error = 0.0, scale = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    error = std::max(error, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return error / scale;
}

// float32 products of D <= 64 terms and sums of up to 1000 probabilities and tile products,
// each rounded to 2^-24 relative, with exp's 2 ulp: the error is a few hundred ulp in the
// worst case and about sqrt(T) ulp typically (measured at most 4e-7). 1e-5 still fails
// any wrong mask, tile edge or scale, which moves outputs by 1e-2 or more.
constexpr double kTolerance = 1e-5;

// Runs forward and backward on random qkv and dout and checks them against reference().
void check_training_layout(const Shape& s, const std::vector<int32_t>& positions) {
  std::mt19937_64 rng(static_cast<uint64_t>(s.T * 31 + s.KVH));
  const std::vector<float> qkv = random_vector(s.B * s.R * s.width(), rng);
  const std::vector<float> dout = random_vector(s.B * s.T * s.H * s.D, rng);
  std::vector<float> out(dout.size()), lse(s.B * s.H * s.T), dqkv(qkv.size(), 7.0f);
  cpu::attention_forward(out.data(), lse.data(), qkv.data(), positions.data(), s.B, s.T, s.H, s.KVH,
                         s.D, s.R, 0);
  cpu::attention_backward(dqkv.data(), dout.data(), qkv.data(), out.data(), lse.data(),
                          positions.data(), s.B, s.T, s.H, s.KVH, s.D);
  const Reference ref = reference(qkv, &dout, s, positions);
  MESSAGE("T " << s.T << ": out " << scaled_error(out, ref.out) << ", lse "
               << scaled_error(lse, ref.lse) << ", dqkv " << scaled_error(dqkv, ref.dqkv));
  CHECK(scaled_error(out, ref.out) < kTolerance);
  CHECK(scaled_error(lse, ref.lse) < kTolerance);
  CHECK(scaled_error(dqkv, ref.dqkv) < kTolerance);
}

}  // namespace

TEST_CASE("blocked attention equals direct attention at lengths off the tile grid") {
  for (Shape s : {Shape{2, 1, 4, 2, 8, 1}, Shape{1, 37, 6, 2, 16, 37}, Shape{2, 129, 4, 4, 8, 129},
                  Shape{1, 129, 4, 1, 32, 129}, Shape{1, 1000, 4, 2, 16, 1000},
                  Shape{1, 1100, 2, 1, 8, 1100}}) {
    CAPTURE(s.T);
    CAPTURE(s.H);
    CAPTURE(s.KVH);
    check_training_layout(s, stream_positions(s));
  }
}

TEST_CASE("blocked attention over packed samples sees each query's own sample only") {
  // Samples of 1 token, samples across the 128-row tile edges, a tile holding several
  // samples, and a sample starting in one tile and ending two tiles later.
  const std::vector<int64_t> lengths{1, 130, 50, 2, 1, 300, 16};
  const Shape s{2, 500, 4, 2, 8, 500};
  check_training_layout(s, packed_positions(s, lengths));
}

TEST_CASE("blocked attention with a KV cache: queries are the last rows of a longer cache") {
  for (Shape s : {Shape{1, 1, 4, 2, 16, 200}, Shape{2, 37, 6, 3, 8, 101},
                  Shape{1, 70, 4, 1, 8, 135}, Shape{1, 37, 4, 2, 8, 1200}}) {
    CAPTURE(s.T);
    CAPTURE(s.R);
    std::mt19937_64 rng(static_cast<uint64_t>(s.R));
    const std::vector<float> qkv = random_vector(s.B * s.R * s.width(), rng);
    std::vector<float> out(s.B * s.T * s.H * s.D), lse(s.B * s.H * s.T);
    const std::vector<int32_t> positions = stream_positions(s);
    cpu::attention_forward(out.data(), lse.data(), qkv.data(), positions.data(), s.B, s.T, s.H,
                           s.KVH, s.D, s.R, s.R - s.T);
    const Reference ref = reference(qkv, nullptr, s, positions);
    CHECK(scaled_error(out, ref.out) < kTolerance);
    CHECK(scaled_error(lse, ref.lse) < kTolerance);
  }
}

}  // namespace llmft
