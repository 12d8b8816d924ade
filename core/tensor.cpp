#include "core/tensor.h"

#include <sstream>

#include "core/error.h"

namespace llmft {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ")";
  return os.str();
}

Tensor Tensor::view(int64_t offset, Shape new_shape) const {
  LLMFT_REQUIRE(offset >= 0 && offset + shape_numel(new_shape) <= numel(),
                "internal: view " << shape_string(new_shape) << " at " << offset
                                  << " exceeds tensor " << shape_string(shape));
  char* base = static_cast<char*>(data) + offset * static_cast<int64_t>(dtype_size(dtype));
  return Tensor(base, dtype, std::move(new_shape));
}

Tensor Tensor::reshaped(Shape new_shape) const {
  LLMFT_REQUIRE(shape_numel(new_shape) == numel(), "internal: cannot reshape "
                                                       << shape_string(shape) << " to "
                                                       << shape_string(new_shape));
  return Tensor(data, dtype, std::move(new_shape));
}

}  // namespace llmft
