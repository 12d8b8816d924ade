// Element types of tensors on a device: stored weights/gradients (f32, bf16, f16)
// and token ids (i32). Compute always accumulates in f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llmft {

enum class DType : uint8_t { f32, bf16, f16, i32 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);
// Parses "fp32" / "f32", "bf16", "fp16" / "f16", "i32"; unknown names are an Error.
DType parse_dtype(const std::string& name);

}  // namespace llmft
