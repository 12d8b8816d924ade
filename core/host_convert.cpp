#include "core/host_convert.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"

namespace llmft {

std::vector<uint8_t> to_dtype_bytes(const float* values, int64_t count, DType dtype) {
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * dtype_size(dtype));
  if (dtype == DType::f32) {
    std::memcpy(bytes.data(), values, bytes.size());
    return bytes;
  }
  LLMFT_REQUIRE(dtype == DType::bf16 || dtype == DType::f16,
                "internal: cannot convert weights to " << dtype_name(dtype));
  auto* out = reinterpret_cast<uint16_t*>(bytes.data());
  for (int64_t i = 0; i < count; ++i) {
    out[i] = dtype == DType::bf16 ? float_to_bf16(values[i]) : float_to_fp16(values[i]);
  }
  return bytes;
}

std::vector<float> from_dtype_bytes(const std::vector<uint8_t>& bytes, DType dtype) {
  std::vector<float> values(bytes.size() / dtype_size(dtype));
  if (dtype == DType::f32) {
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  LLMFT_REQUIRE(dtype == DType::bf16 || dtype == DType::f16,
                "internal: cannot read weights stored as " << dtype_name(dtype));
  const auto* in = reinterpret_cast<const uint16_t*>(bytes.data());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = dtype == DType::bf16 ? bf16_to_float(in[i]) : fp16_to_float(in[i]);
  }
  return values;
}

}  // namespace llmft
