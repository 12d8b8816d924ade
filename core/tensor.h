// Tensor: a typed, shaped view of device memory. It never owns memory (a Buffer does)
// and model code never dereferences `data`: only a Backend's kernels touch the bytes.
// Views are cheap to copy; slicing is pointer arithmetic.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace llmft {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);

struct Tensor {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;

  Tensor() = default;
  Tensor(void* data_, DType dtype_, Shape shape_)
      : data(data_), dtype(dtype_), shape(std::move(shape_)) {}

  // An absent optional argument (e.g. no bias) is a default-constructed Tensor.
  bool defined() const { return data != nullptr; }
  int64_t numel() const { return shape_numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int64_t dim(int i) const { return shape[i < 0 ? shape.size() + i : i]; }

  // A view of `shape` starting `offset` elements into this tensor.
  // REQUIRES: offset + numel(shape) <= numel()
  Tensor view(int64_t offset, Shape new_shape) const;
  // The same bytes seen with another shape of equal element count.
  Tensor reshaped(Shape new_shape) const;
};

}  // namespace llmft
