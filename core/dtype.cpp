#include "core/dtype.h"

#include "core/error.h"

namespace llmft {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::bf16:
    case DType::f16:
      return 2;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "fp32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "fp16";
    case DType::i32:
      return "i32";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  if (name == "fp32" || name == "f32" || name == "float32") return DType::f32;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "fp16" || name == "f16" || name == "float16") return DType::f16;
  if (name == "i32" || name == "int32") return DType::i32;
  LLMFT_FAIL("unknown dtype '" << name << "': use fp32, bf16 or fp16");
}

}  // namespace llmft
