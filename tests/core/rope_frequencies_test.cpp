// The rotary embedding's inverse frequencies (core/rope_frequencies.h): hand-computed
// values for each rope type, and Llama 3.2 1B's table as transformers computes it.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "core/rope_frequencies.h"

namespace llmft {
namespace {

// Each frequency is a handful of float32 operations (a power, a division, for llama3 a
// reciprocal, products and a sum), each within half an ulp: a few 1e-7 relative in all.
constexpr double kFewUlps = 1e-6;
// llama3's blend subtracts low_freq_factor from context / wavelength (1.63 - 1 below),
// which magnifies the float32 rounding before it about 3 times.
constexpr double kBlendUlps = 5e-6;

double relative(double value, double expected) {
  return std::abs(value - expected) / std::abs(expected);
}

TEST_CASE("default frequencies are theta^(-2i/D)") {
  // theta 10000, D 8: 10000^(-i/4) = 10^-i.
  const RopeFrequencies f = rope_frequencies(10000.0f, RopeScaling{}, 8);
  REQUIRE(f.pairs == 4);
  const double expected[] = {1.0, 0.1, 0.01, 0.001};
  for (int i = 0; i < 4; ++i) CHECK(relative(f.inv_freq[i], expected[i]) < kFewUlps);
}

TEST_CASE("linear scaling divides every frequency by the factor") {
  const RopeFrequencies f =
      rope_frequencies(10000.0f, RopeScaling{RopeType::linear, 4.0, 1.0, 4.0, 0}, 8);
  const double expected[] = {0.25, 0.025, 0.0025, 0.00025};
  for (int i = 0; i < 4; ++i) CHECK(relative(f.inv_freq[i], expected[i]) < kFewUlps);
}

TEST_CASE("llama3 scaling keeps short wavelengths, divides long ones and blends between") {
  // Context 1024, low 1, high 4: wavelengths below 256 stay, above 1024 divide by 8.
  // The wavelengths 2 pi 10^i are 6.3, 63, 628 and 6283.
  const RopeFrequencies f =
      rope_frequencies(10000.0f, RopeScaling{RopeType::llama3, 8.0, 1.0, 4.0, 1024}, 8);
  const double smooth = (1024.0 / (2 * M_PI * 100.0) - 1.0) / (4.0 - 1.0);  // 0.2099
  CHECK(relative(f.inv_freq[0], 1.0) < kFewUlps);
  CHECK(relative(f.inv_freq[1], 0.1) < kFewUlps);
  CHECK(relative(f.inv_freq[2], ((1 - smooth) / 8.0 + smooth) * 0.01) < kBlendUlps);
  CHECK(relative(f.inv_freq[3], 0.001 / 8.0) < kFewUlps);
}

TEST_CASE("Llama 3.2 1B's frequencies equal transformers' float32 ones") {
  // _compute_llama3_parameters (transformers 5.24) for head_dim 64, theta 500000, factor
  // 32, low 1, high 4, context 8192, printed with float.hex(). Measured bit-exact; the
  // bound allows one ulp for another libm's powf.
  const float transformers[32] = {
      0x1p0f,          0x1.53c38cp-1f,  0x1.c2ef78p-2f,  0x1.2b3dc6p-2f,  0x1.8d276p-3f,
      0x1.078d4p-3f,   0x1.5dc95ap-4f,  0x1.d03ccep-5f,  0x1.34119p-5f,   0x1.98de92p-6f,
      0x1.0f5386p-6f,  0x1.681adap-7f,  0x1.ddee9ep-8f,  0x1.3d2804p-8f,  0x1.a4ee4p-9f,
      0x1.524f36p-10f, 0x1.c26c4p-12f,  0x1.9731eep-14f, 0x1.46831ap-16f, 0x1.b15902p-17f,
      0x1.1f91fp-17f,  0x1.7da9e8p-18f, 0x1.fa8b86p-19f, 0x1.5024d6p-19f, 0x1.be2188p-20f,
      0x1.280d96p-20f, 0x1.88ec2p-21f,  0x1.04be68p-21f, 0x1.5a0f4ep-22f, 0x1.cb4a9ap-23f,
      0x1.30c94ep-23f, 0x1.94836p-24f};
  const RopeFrequencies f =
      rope_frequencies(500000.0f, RopeScaling{RopeType::llama3, 32.0, 1.0, 4.0, 8192}, 64);
  REQUIRE(f.pairs == 32);
  for (int i = 0; i < 32; ++i) {
    CAPTURE(i);
    CHECK(relative(f.inv_freq[i], transformers[i]) <= std::ldexp(1.0, -23));
  }
}

TEST_CASE("a head size the table cannot hold is refused") {
  CHECK_THROWS_WITH_AS(rope_frequencies(10000.0f, RopeScaling{}, 7),
                       doctest::Contains("head size 7 must be even"), Error);
  CHECK_THROWS_WITH_AS(rope_frequencies(10000.0f, RopeScaling{}, 2 * kMaxRopePairs + 2),
                       doctest::Contains("at most 512"), Error);
}

}  // namespace
}  // namespace llmft
