// Storage traits of the float dtypes on the host (load to f32, store from f32) and a
// dispatcher that runs a templated loop for a tensor's dtype.
#pragma once

#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"

namespace llmft {

struct F32 {
  using Storage = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct BF16 {
  using Storage = uint16_t;
  static float load(uint16_t v) { return bf16_to_float(v); }
  static uint16_t store(float v) { return float_to_bf16(v); }
};
struct FP16 {
  using Storage = uint16_t;
  static float load(uint16_t v) { return fp16_to_float(v); }
  static uint16_t store(float v) { return float_to_fp16(v); }
};

// Calls f with the storage traits of a float dtype.
template <typename F>
void with_float_type(DType type, F&& f) {
  switch (type) {
    case DType::f32:
      return f(F32{});
    case DType::bf16:
      return f(BF16{});
    case DType::f16:
      return f(FP16{});
    case DType::i32:
      break;
  }
  LLMFT_FAIL("internal: expected a floating-point tensor, got " << dtype_name(type));
}

}  // namespace llmft
