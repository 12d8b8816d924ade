// Host-side conversion of f32 values to a stored dtype's bytes (round to nearest even),
// for uploading weights without a device-side staging buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace llmft {

// REQUIRES: dtype is f32, bf16 or fp16
std::vector<uint8_t> to_dtype_bytes(const float* values, int64_t count, DType dtype);

}  // namespace llmft
