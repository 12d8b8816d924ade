// bf16 / fp16 conversions: round to nearest even, overflow, subnormals, inf and NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>

#include "core/half.h"

using namespace llmft;

TEST_CASE("bf16 rounds to nearest even and keeps specials") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(-2.0f) == 0xC000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  CHECK(float_to_bf16(1.00390625f) == 0x3F80);
  CHECK(float_to_bf16(1.01171875f) == 0x3F82);  // 1 + 3 * 2^-8 ties up to 1 + 2^-6
  CHECK(bf16_to_float(float_to_bf16(3.140625f)) == 3.140625f);
  CHECK(std::isinf(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity()))));
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

TEST_CASE("fp16 rounds to nearest even, overflows to inf and keeps subnormals") {
  CHECK(float_to_fp16(1.0f) == 0x3C00);
  CHECK(float_to_fp16(-2.5f) == 0xC100);
  CHECK(float_to_fp16(65504.0f) == 0x7BFF);
  CHECK(float_to_fp16(65519.0f) == 0x7BFF);            // still rounds down to the largest half
  CHECK(float_to_fp16(65520.0f) == 0x7C00);            // rounds to infinity
  CHECK(float_to_fp16(1.0f + 1.0f / 2048) == 0x3C00);  // tie to even
  CHECK(float_to_fp16(1.0f + 3.0f / 2048) == 0x3C02);
  const float smallest_subnormal = 5.9604644775390625e-8f;
  CHECK(float_to_fp16(smallest_subnormal) == 0x0001);
  CHECK(fp16_to_float(0x0001) == smallest_subnormal);
  CHECK(fp16_to_float(float_to_fp16(6.1035156e-05f)) == 6.1035156e-05f);  // smallest normal
  CHECK(float_to_fp16(1e-9f) == 0x0000);
  // Round to nearest: within half a spacing, 2^-11 relative for normal halves and 2^-25
  // (half of 2^-24) for subnormal ones.
  for (float v : {0.1f, -3.75f, 1000.5f}) {
    CHECK(std::fabs(fp16_to_float(float_to_fp16(v)) - v) <= std::ldexp(std::fabs(v), -11));
  }
  CHECK(std::fabs(fp16_to_float(float_to_fp16(1e-5f)) - 1e-5f) <= std::ldexp(1.0f, -25));
  CHECK(std::isinf(fp16_to_float(float_to_fp16(1e6f))));
  CHECK(std::isnan(fp16_to_float(float_to_fp16(std::nanf("")))));
}
