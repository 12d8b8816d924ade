// On a machine with a GPU: element-wise hooks and sums over a tensor of more than 2^31
// elements, as a flat unit of a large model's parameters or the logits of a large
// vocabulary can be. Every index is 64-bit, so the elements past 2^31 are written and
// counted like the first. The values are exact in bf16 and f32 (0.5, 0.25, 0.75 and the
// sum of squares 2^29 + 1024), so the checks are equalities.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/backend_registry.h"
#include "core/host_convert.h"

namespace llmft {
namespace {

constexpr int64_t kElements = (int64_t{1} << 31) + 4096;

// The elements [at, at + 4096) of t, widened to f32.
std::vector<float> read_slice(Backend& be, const Tensor& t, int64_t at) {
  const Tensor slice = t.view(at, {4096});
  std::vector<uint8_t> bytes(slice.bytes());
  be.copy_to_host(bytes.data(), slice);
  return from_dtype_bytes(bytes, t.dtype);
}

TEST_CASE("fill, add, convert and sums of squares reach the elements past 2^31") {
  // Two bf16 tensors (4 GiB each), an f32 one (8 GiB) and the sum.
  const std::unique_ptr<Backend> be = make_backend("cuda", NodePlacement{}, size_t{17} << 30);
  Allocator alloc(be->memory(), 0);
  Buffer x_bytes = alloc.allocate(kElements * 2, MemoryCategory::other, "x");
  Buffer y_bytes = alloc.allocate(kElements * 2, MemoryCategory::other, "y");
  Buffer z_bytes = alloc.allocate(kElements * 4, MemoryCategory::other, "z");
  Buffer sum_bytes = alloc.allocate(4, MemoryCategory::other, "sum");
  const Tensor x = x_bytes.as(DType::bf16, {kElements}), y = y_bytes.as(DType::bf16, {kElements});
  const Tensor z = z_bytes.as(DType::f32, {kElements}), sum = sum_bytes.as(DType::f32, {1});
  be->fill(x, 0.5f);
  be->fill(y, 0.25f);
  be->add_inplace(y, x);
  be->convert(z, y);
  be->fill(sum, 0.0f);
  be->sum_squares(sum, x);
  float sum_of_squares = 0.0f;
  be->copy_to_host(&sum_of_squares, sum);
  CHECK(sum_of_squares == 0.25f * static_cast<float>(kElements));
  // The first elements, those around 2^31, and the last.
  for (const int64_t at : {int64_t{0}, (int64_t{1} << 31) - 2048, kElements - 4096}) {
    CAPTURE(at);
    for (const Tensor& t : {y, z}) {
      const std::vector<float> values = read_slice(*be, t, at);
      int64_t wrong = 0;
      for (float v : values) wrong += v != 0.75f;
      CHECK(wrong == 0);
    }
  }
}

}  // namespace
}  // namespace llmft
