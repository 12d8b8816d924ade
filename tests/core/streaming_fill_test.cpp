// cpu::fill of buffers large enough for streaming stores (core/cpu/streaming_fill.h):
// every element holds the value, in each dtype, whatever the buffer's alignment and
// length, and the bytes just before and after the buffer are untouched.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/cpu/dtype_kernels.h"
#include "core/cpu/streaming_fill.h"
#include "core/dtype.h"
#include "core/half.h"

using namespace llmft;

namespace {

constexpr unsigned char kGuard = 0xA5;

// Fills `n` elements of `type` starting `offset` bytes into a guarded byte array, and
// returns the array.
std::vector<unsigned char> filled(DType type, float value, int64_t n, int64_t offset) {
  const auto size = static_cast<int64_t>(dtype_size(type));
  std::vector<unsigned char> bytes(static_cast<size_t>(n * size + offset + 64), kGuard);
  cpu::fill(bytes.data() + offset, type, value, n);
  return bytes;
}

// The number of elements at [offset, offset + n * sizeof(Element)) that differ from
// `element`, plus the guard bytes around them that changed.
template <typename Element>
int64_t wrong_bytes(const std::vector<unsigned char>& bytes, Element element, int64_t n,
                    int64_t offset) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < offset; ++i) wrong += bytes[i] != kGuard;
  for (int64_t i = 0; i < n; ++i) {
    Element got;
    std::memcpy(&got, bytes.data() + offset + i * sizeof(Element), sizeof(Element));
    wrong += got != element;
  }
  const auto end = static_cast<size_t>(offset + n * static_cast<int64_t>(sizeof(Element)));
  for (size_t i = end; i < bytes.size(); ++i) wrong += bytes[i] != kGuard;
  return wrong;
}

}  // namespace

TEST_CASE("a fill large enough to stream writes every element and nothing around them") {
  // Offsets off a 64-byte line and lengths off a whole line, so that the element stores
  // before the first line and after the last one run too.
  for (int64_t offset : {0, 4, 60}) {
    const int64_t n = cpu::kStreamingFillBytes / 4 + 7;
    CAPTURE(offset);
    CHECK(wrong_bytes(filled(DType::f32, -1.5f, n, offset), -1.5f, n, offset) == 0);
    CHECK(wrong_bytes(filled(DType::f32, 0.0f, n, offset), 0.0f, n, offset) == 0);
  }
  for (int64_t offset : {0, 2, 62}) {
    const int64_t n = cpu::kStreamingFillBytes / 2 + 5;
    CAPTURE(offset);
    CHECK(wrong_bytes(filled(DType::bf16, 3.0f, n, offset), float_to_bf16(3.0f), n, offset) == 0);
    CHECK(wrong_bytes(filled(DType::f16, -0.25f, n, offset), float_to_fp16(-0.25f), n, offset) ==
          0);
  }
}

TEST_CASE("a fill just under the streaming size writes the same values") {
  const int64_t n = cpu::kStreamingFillBytes / 4 - 1;
  CHECK(wrong_bytes(filled(DType::f32, 2.0f, n, 8), 2.0f, n, 8) == 0);
}
