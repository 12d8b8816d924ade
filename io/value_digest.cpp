#include "io/value_digest.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace llmft::io {
namespace {

// SplitMix64's finaliser: every input bit moves about half of the output bits.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t element_bits(const unsigned char* value, size_t width) {
  if (width == 4) {
    uint32_t bits;
    std::memcpy(&bits, value, 4);
    return bits;
  }
  uint16_t bits;
  std::memcpy(&bits, value, 2);
  return bits;
}

uint64_t term(int64_t index, uint64_t bits) {
  return mix(static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ull + bits + 1);
}

uint64_t fnv1a(uint64_t hash, const std::string& text) {
  hash = fnv1a_bytes(hash, text.data(), text.size());
  return (hash ^ 0xffu) * 1099511628211ull;  // a separator no text byte sequence can fake
}

}  // namespace

uint64_t fnv1a_bytes(uint64_t hash, const void* bytes, size_t size) {
  const auto* next = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ next[i]) * 1099511628211ull;
  return hash;
}

uint64_t digest_terms(const std::vector<FlatRange>& ranges, const void* values, size_t width) {
  const auto* next = static_cast<const unsigned char*>(values);
  uint64_t sum = 0;
  for (const FlatRange& r : ranges) {
    for (int64_t i = r.begin; i < r.end; ++i, next += width)
      sum += term(i, element_bits(next, width));
  }
  return sum;
}

uint64_t digest_terms_of_subset(const std::vector<FlatRange>& ranges,
                                const std::vector<FlatRange>& verify, const void* values,
                                size_t width) {
  const auto* base = static_cast<const unsigned char*>(values);
  uint64_t sum = 0;
  size_t r = 0;
  int64_t offset = 0;  // elements of `ranges` before ranges[r]
  for (const FlatRange& v : verify) {
    for (int64_t i = v.begin; i < v.end;) {
      while (r < ranges.size() && ranges[r].end <= i) {
        offset += ranges[r].end - ranges[r].begin;
        ++r;
      }
      LLMFT_REQUIRE(r < ranges.size() && ranges[r].begin <= i,
                    "internal: a digest's element " << i << " lies outside the ranges read");
      const int64_t stop = std::min(v.end, ranges[r].end);
      const unsigned char* value = base + (offset + i - ranges[r].begin) * width;
      for (; i < stop; ++i, value += width) sum += term(i, element_bits(value, width));
    }
  }
  return sum;
}

uint64_t seal_digest(uint64_t terms, const std::string& dtype_name, const Shape& shape) {
  uint64_t seal = fnv1a(kFnvOffset, dtype_name);
  for (const int64_t d : shape) seal = fnv1a(seal, std::to_string(d));
  return mix(terms ^ seal);
}

uint64_t digest_text_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  uint64_t hash = kFnvOffset;
  for (const auto& [name, value] : pairs) hash = fnv1a(fnv1a(hash, name), value);
  return hash;
}

std::string digest_text(uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

bool parse_digest_text(const std::string& text, uint64_t& digest) {
  if (text.size() != 16) return false;
  digest = 0;
  for (const char c : text) {
    const int nibble = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (nibble < 0) return false;
    digest = digest << 4 | static_cast<uint64_t>(nibble);
  }
  return true;
}

}  // namespace llmft::io
