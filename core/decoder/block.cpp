#include "core/decoder/block.h"

namespace llmft {

Tensor BlockContext::take(Buffer& buffer, Shape shape, MemoryCategory category,
                          const std::string& what) const {
  buffer = alloc.allocate(static_cast<size_t>(shape_numel(shape)) * sizeof(float), category, what);
  return buffer.as(DType::f32, std::move(shape));
}

}  // namespace llmft
