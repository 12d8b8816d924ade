// Host-side conversion between f32 values and a stored dtype's bytes (round to nearest
// even), for moving weights to and from the device without a device-side staging buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace llmft {

// REQUIRES: dtype is f32, bf16 or fp16
std::vector<uint8_t> to_dtype_bytes(const float* values, int64_t count, DType dtype);
// REQUIRES: bytes.size() is a multiple of dtype's size; dtype is f32, bf16 or fp16
std::vector<float> from_dtype_bytes(const std::vector<uint8_t>& bytes, DType dtype);

}  // namespace llmft
