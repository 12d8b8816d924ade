// Every CPU backward kernel against central finite differences of its forward.
#include <doctest/doctest.h>

#include "core/cpu/cpu_kernels.h"
#include "core/rope_frequencies.h"
#include "tests/core/gradcheck.h"
#include "tests/support/parity.h"

using llmft::testing::directional_check;
using llmft::testing::dot;
using llmft::testing::random_vector;
using llmft::testing::relative_error;
namespace cpu = llmft::cpu;
using llmft::rope_frequencies;
using llmft::RopeFrequencies;
using llmft::RopeScaling;
using llmft::RopeType;

namespace {

// Central differences with step eps = 1e-2 (tests/core/gradcheck.h) are off by eps^2 / 6
// times the third derivative, ~1e-5 to 1e-4 of the derivative for these smooth functions
// of O(1) inputs, plus the f32 forward's rounding, ~u |loss| / eps ~ 1e-5 of it; neither
// depends on the BLAS kernel by more than a few ulps. 2e-3 leaves room for the larger
// third derivatives of exp, tanh and the norms' 1/sqrt.
constexpr double kTolerance = 2e-3;

void check_all(std::vector<std::vector<float>*> values,
               std::vector<const std::vector<float>*> grads, const std::function<double()>& loss,
               std::mt19937_64& rng, const char* what) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (int trial = 0; trial < 3; ++trial) {
      auto [numeric, analytic] = directional_check(*values[i], *grads[i], loss, rng);
      INFO(std::string(what) << " input " << i << ": numeric " << numeric << " analytic "
                             << analytic);
      CHECK(relative_error(numeric, analytic, *grads[i]) < kTolerance);
    }
  }
}

}  // namespace

TEST_CASE("linear backward matches finite differences") {
  std::mt19937_64 rng(1);
  const int N = 7, C = 5, OC = 6;
  auto x = random_vector(N * C, rng), w = random_vector(OC * C, rng), b = random_vector(OC, rng);
  auto r = random_vector(N * OC, rng);
  auto loss = [&] {
    std::vector<float> out(N * OC);
    cpu::linear_forward(out.data(), x.data(), w.data(), b.data(), N, C, OC);
    return dot(out, r);
  };
  std::vector<float> dx(N * C, 0.5f), dw(OC * C, 0.0f), db(OC, 0.0f);
  cpu::linear_backward(dx.data(), false, dw.data(), db.data(), r.data(), x.data(), w.data(), N, C,
                       OC);
  check_all({&x, &w, &b}, {&dx, &dw, &db}, loss, rng, "linear");

  SUBCASE("accumulating input gradients add to what is there") {
    std::vector<float> acc(N * C, 1.0f), dw2(OC * C, 0.0f);
    cpu::linear_backward(acc.data(), true, dw2.data(), nullptr, r.data(), x.data(), w.data(), N, C,
                         OC);
    // With beta = 1 the kernel may add the 1 before or after the OC = 6 products: any order
    // of those 7 terms is within 7 u of their magnitudes (< 10 here), 5e-6 absolute.
    for (int i = 0; i < N * C; ++i) CHECK(std::fabs(acc[i] - (dx[i] + 1.0f)) < 1e-5);
  }
}

TEST_CASE("layernorm backward matches finite differences") {
  std::mt19937_64 rng(2);
  const int N = 6, C = 9;
  auto x = random_vector(N * C, rng), w = random_vector(C, rng), b = random_vector(C, rng);
  auto r = random_vector(N * C, rng);
  std::vector<float> mean(N), rstd(N);
  auto loss = [&] {
    std::vector<float> out(N * C);
    cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C,
                           1e-5f);
    return dot(out, r);
  };
  loss();
  std::vector<float> dx(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  cpu::layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(),
                          mean.data(), rstd.data(), N, C);
  check_all({&x, &w, &b}, {&dx, &dw, &db}, loss, rng, "layernorm");
}

TEST_CASE("gelu backward matches finite differences") {
  std::mt19937_64 rng(3);
  const int n = 50;
  auto x = random_vector(n, rng, 2.0f), r = random_vector(n, rng);
  auto loss = [&] {
    std::vector<float> out(n);
    cpu::gelu_forward(out.data(), x.data(), n);
    return dot(out, r);
  };
  std::vector<float> dx(n);
  cpu::gelu_backward(dx.data(), x.data(), r.data(), n);
  check_all({&x}, {&dx}, loss, rng, "gelu");
}

TEST_CASE("embedding backward matches finite differences, with repeated tokens and positions") {
  std::mt19937_64 rng(4);
  const int B = 2, T = 5, C = 4, V = 6, P = 8;
  std::vector<int32_t> tokens = {1, 3, 3, 0, 5, 3, 1, 1, 2, 4};
  // Row 0 one stream from position 3, row 1 two packed samples.
  std::vector<int32_t> positions = {3, 4, 5, 6, 7, 0, 1, 2, 0, 1};
  auto wte = random_vector(V * C, rng), wpe = random_vector(P * C, rng);
  auto r = random_vector(B * T * C, rng);
  auto loss = [&] {
    std::vector<float> out(B * T * C);
    cpu::embedding_forward(out.data(), tokens.data(), positions.data(), wte.data(), wpe.data(),
                           B * T, C, 0, V);
    return dot(out, r);
  };
  std::vector<float> dwte(V * C, 0.0f), dwpe(P * C, 0.0f);
  cpu::embedding_backward(dwte.data(), dwpe.data(), r.data(), tokens.data(), positions.data(),
                          B * T, C, 0, V);
  check_all({&wte, &wpe}, {&dwte, &dwpe}, loss, rng, "embedding");
}

TEST_CASE("memory-light attention backward matches finite differences") {
  struct Shape {
    int B, T, H, KVH, D, sample;  // positions restart every `sample` tokens (packed samples)
  };
  // 37 and 129 are not multiples of the kernel's tiles; 129 crosses one (128 rows). The
  // last two pack samples of 4 and of 50 tokens (the last ones shorter) into each row.
  for (Shape s : {Shape{2, 7, 3, 3, 4, 7}, Shape{1, 9, 4, 2, 3, 9}, Shape{2, 5, 4, 1, 2, 5},
                  Shape{1, 37, 4, 2, 8, 37}, Shape{1, 129, 6, 2, 4, 129}, Shape{2, 9, 4, 2, 3, 4},
                  Shape{1, 129, 4, 2, 4, 50}}) {
    CAPTURE(s.H);
    CAPTURE(s.KVH);
    CAPTURE(s.sample);
    std::mt19937_64 rng(5 + s.KVH);
    const int W = (s.H + 2 * s.KVH) * s.D;
    auto qkv = random_vector(s.B * s.T * W, rng);
    auto r = random_vector(s.B * s.T * s.H * s.D, rng);
    std::vector<int32_t> positions(s.B * s.T);
    for (int i = 0; i < s.B * s.T; ++i) positions[i] = (i % s.T) % s.sample;
    std::vector<float> out(s.B * s.T * s.H * s.D), lse(s.B * s.H * s.T);
    auto loss = [&] {
      cpu::attention_forward(out.data(), lse.data(), qkv.data(), positions.data(), s.B, s.T, s.H,
                             s.KVH, s.D, s.T, 0);
      return dot(out, r);
    };
    loss();
    std::vector<float> dqkv(qkv.size(), 7.0f);  // must be overwritten, not accumulated
    cpu::attention_backward(dqkv.data(), r.data(), qkv.data(), out.data(), lse.data(),
                            positions.data(), s.B, s.T, s.H, s.KVH, s.D);
    check_all({&qkv}, {&dqkv}, loss, rng, "attention");
  }
}

TEST_CASE("attention is causal: a later token never changes an earlier output") {
  std::mt19937_64 rng(6);
  const int B = 1, T = 6, H = 2, D = 3, W = 3 * H * D;
  auto qkv = random_vector(T * W, rng);
  const std::vector<int32_t> positions{0, 1, 2, 3, 4, 5};
  std::vector<float> out1(T * H * D), out2(T * H * D), lse(H * T);
  cpu::attention_forward(out1.data(), lse.data(), qkv.data(), positions.data(), B, T, H, H, D, T,
                         0);
  for (int i = 0; i < W; ++i) qkv[(T - 1) * W + i] += 1.0f;
  cpu::attention_forward(out2.data(), lse.data(), qkv.data(), positions.data(), B, T, H, H, D, T,
                         0);
  for (int i = 0; i < (T - 1) * H * D; ++i) CHECK(out1[i] == out2[i]);
}

TEST_CASE("packed samples do not see each other: an earlier sample never changes a later one") {
  std::mt19937_64 rng(6);
  const int B = 1, T = 7, H = 2, D = 3, W = 3 * H * D;
  auto qkv = random_vector(T * W, rng);
  const std::vector<int32_t> positions{0, 1, 2, 0, 1, 2, 3};  // samples of 3 and 4 tokens
  std::vector<float> out1(T * H * D), out2(T * H * D), lse(H * T);
  cpu::attention_forward(out1.data(), lse.data(), qkv.data(), positions.data(), B, T, H, H, D, T,
                         0);
  for (int i = 0; i < 3 * W; ++i) qkv[i] += 1.0f;
  cpu::attention_forward(out2.data(), lse.data(), qkv.data(), positions.data(), B, T, H, H, D, T,
                         0);
  for (int i = 3 * H * D; i < T * H * D; ++i) CHECK(out1[i] == out2[i]);
  for (int i = 0; i < 3 * H * D; ++i) CHECK(out1[i] != out2[i]);
}

namespace {

// The three cross-entropy passes on one rank holding the whole vocabulary (the reductions
// between them are identities); `padding` columns past the vocabulary are ignored.
double cross_entropy(std::vector<float>& logits, const std::vector<int32_t>& targets, int64_t N,
                     int64_t V, int64_t padding) {
  std::vector<float> stats(3 * N);
  cpu::cross_entropy_max(stats.data(), logits.data(), N, V + padding, V);
  cpu::cross_entropy_sums(stats.data(), logits.data(), targets.data(), N, V + padding, V, 0);
  return cpu::cross_entropy_finish(logits.data(), stats.data(), targets.data(), N, V + padding, 0,
                                   1.0f);
}

}  // namespace

TEST_CASE("fused cross-entropy: loss and gradient match finite differences, padding ignored") {
  std::mt19937_64 rng(7);
  const int N = 5, V = 11, padding = 2;
  auto logits = random_vector(N * (V + padding), rng, 3.0f);
  std::vector<int32_t> targets = {3, 0, -1, 10, 7};
  auto loss = [&] {
    std::vector<float> copy = logits;
    return cross_entropy(copy, targets, N, V, padding);
  };
  std::vector<float> grad = logits;
  const double at_start = cross_entropy(grad, targets, N, V, padding);
  for (int v = 0; v < V + padding; ++v) CHECK(grad[2 * (V + padding) + v] == 0.0f);  // ignored row
  for (int n = 0; n < N; ++n) {
    for (int v = V; v < V + padding; ++v) CHECK(grad[n * (V + padding) + v] == 0.0f);
  }
  // Padding logits, however large, change nothing.
  std::vector<float> padded = logits;
  for (int n = 0; n < N; ++n) padded[n * (V + padding) + V] = 100.0f;
  CHECK(cross_entropy(padded, targets, N, V, padding) == at_start);  // never read
  check_all({&logits}, {&grad}, loss, rng, "cross-entropy");
}

TEST_CASE("rmsnorm backward matches finite differences") {
  std::mt19937_64 rng(8);
  const int N = 5, C = 7;
  auto x = random_vector(N * C, rng), w = random_vector(C, rng), r = random_vector(N * C, rng);
  std::vector<float> rstd(N);
  auto loss = [&] {
    std::vector<float> out(N * C);
    cpu::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-6f);
    return dot(out, r);
  };
  loss();
  std::vector<float> dx(N * C, 0.0f), dw(C, 0.0f);
  cpu::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), rstd.data(), N, C);
  check_all({&x, &w}, {&dx, &dw}, loss, rng, "rmsnorm");
}

TEST_CASE("rotary embedding backward matches finite differences and preserves norms") {
  std::mt19937_64 rng(9);
  const int B = 2, T = 5, H = 4, KVH = 2, D = 6, W = (H + 2 * KVH) * D;
  auto qkv = random_vector(B * T * W, rng), r = random_vector(B * T * W, rng);
  const RopeFrequencies scaled =
      rope_frequencies(500000.0f, RopeScaling{RopeType::llama3, 8.0, 1.0, 4.0, 32}, D);
  const std::vector<int32_t> positions{3, 4, 5, 6, 7, 0, 1, 2, 0, 1};
  auto loss = [&] {
    std::vector<float> rotated = qkv;
    cpu::rope_forward(rotated.data(), positions.data(), B * T, H, KVH, D, scaled.inv_freq);
    return dot(rotated, r);
  };
  std::vector<float> grad = r;
  cpu::rope_backward(grad.data(), positions.data(), B * T, H, KVH, D, scaled.inv_freq);
  check_all({&qkv}, {&grad}, loss, rng, "rope");

  std::vector<float> rotated = qkv;
  const std::vector<int32_t> zeros(B * T, 0);
  cpu::rope_forward(rotated.data(), zeros.data(), B * T, H, KVH, D,
                    rope_frequencies(10000.0f, RopeScaling{}, D).inv_freq);
  for (int i = (H + KVH) * D; i < W; ++i) CHECK(rotated[i] == qkv[i]);  // v is untouched
  for (int i = 0; i < (H + KVH) * D; ++i) CHECK(rotated[i] == qkv[i]);  // position 0: identity
  // Each rotated pair carries the rounding of cos, sin, two products and a sum: a few u
  // relative, so the squared norms agree to ~1e-6.
  CHECK(llmft::testing::relative_difference(dot(rotated, rotated), dot(qkv, qkv)) < 1e-5);
}

TEST_CASE("swiglu backward matches finite differences") {
  std::mt19937_64 rng(10);
  const int N = 4, I = 9;
  auto gate_up = random_vector(N * 2 * I, rng, 2.0f), r = random_vector(N * I, rng);
  auto loss = [&] {
    std::vector<float> out(N * I);
    cpu::swiglu_forward(out.data(), gate_up.data(), N, I);
    return dot(out, r);
  };
  std::vector<float> grad(N * 2 * I);
  cpu::swiglu_backward(grad.data(), gate_up.data(), r.data(), N, I);
  check_all({&gate_up}, {&grad}, loss, rng, "swiglu");
}
