// Fills of buffers larger than a core's cache with non-temporal (streaming) stores, which
// write whole cache lines to memory without reading them first: a plain store reads each
// line in before overwriting it, so a plain fill of a buffer that no cache keeps moves
// twice its bytes. About 2.4x the plain fill's rate on the 2-core development VMs (both
// threads writing). The written lines leave the caches: right for the gradients zeroed
// at a step's start (a layer's are 28 MB in gpt2, read back only in the backward), wrong
// for a buffer read right after its fill that a cache would have kept (the residual
// gradient, 6 MB for gpt2 at 2048 tokens), hence the size from which fills stream.
#pragma once

#include <cstdint>
#include <cstring>

namespace llmft::cpu {

// Buffers of at least this many bytes are filled by streaming stores.
constexpr int64_t kStreamingFillBytes = int64_t{16} << 20;

// x's first `bytes` bytes = `word` repeated, by streaming stores in parallel. x is aligned to
// the size of the element the word repeats, and `word` reads the same from any such offset
// (a 4-byte element, or a 2-byte one written twice).
void streaming_fill(void* x, uint32_t word, int64_t bytes);

// The word of `element` (4 bytes) or of it twice (2 bytes), for streaming_fill.
template <typename Element>
uint32_t repeated_word(Element element) {
  static_assert(sizeof(Element) == 4 || sizeof(Element) == 2, "elements of 2 or 4 bytes");
  if constexpr (sizeof(Element) == 4) {
    uint32_t word;
    std::memcpy(&word, &element, sizeof(word));
    return word;
  } else {
    uint16_t half;
    std::memcpy(&half, &element, sizeof(half));
    return half | uint32_t{half} << 16;
  }
}

}  // namespace llmft::cpu
