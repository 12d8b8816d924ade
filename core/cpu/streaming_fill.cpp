// Streaming fills (see streaming_fill.h): SSE2's 16-byte non-temporal store, which every
// x86-64 CPU has, between element stores up to the first and after the last aligned line.
#include "core/cpu/streaming_fill.h"

#include <emmintrin.h>

#include <cstring>

namespace llmft::cpu {
namespace {

constexpr int64_t kLineBytes = 64;

// Plain stores of `word` over [begin, end), both at element boundaries.
void fill_bytes(char* begin, char* end, uint32_t word) {
  while (end - begin >= 4) {
    std::memcpy(begin, &word, 4);
    begin += 4;
  }
  if (end > begin) std::memcpy(begin, &word, static_cast<size_t>(end - begin));
}

}  // namespace

void streaming_fill(void* x, uint32_t word, int64_t bytes) {
  char* const begin = static_cast<char*>(x);
  char* const end = begin + bytes;
  const auto address = reinterpret_cast<uintptr_t>(begin);
  char* const first_line = begin + (kLineBytes - address % kLineBytes) % kLineBytes;
  if (first_line >= end) {
    fill_bytes(begin, end, word);
    return;
  }
  const int64_t lines = (end - first_line) / kLineBytes;
  fill_bytes(begin, first_line, word);
  fill_bytes(first_line + lines * kLineBytes, end, word);
  const __m128i value = _mm_set1_epi32(static_cast<int>(word));
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int64_t line = 0; line < lines; ++line) {
      auto* out = reinterpret_cast<__m128i*>(first_line + line * kLineBytes);
      _mm_stream_si128(out, value);
      _mm_stream_si128(out + 1, value);
      _mm_stream_si128(out + 2, value);
      _mm_stream_si128(out + 3, value);
    }
    // Streaming stores are weakly ordered: each thread orders its own before the region's
    // closing barrier, after which any thread may read the buffer.
    _mm_sfence();
  }
}

}  // namespace llmft::cpu
