// Digests that let a checkpoint verify what it restores end to end, whatever layout wrote
// or reads it. A dataset's digest is a sum, modulo 2^64, of one well-mixed term per element
// (its index in the whole tensor and its stored bits), so ranks that each hold a part add
// their parts' sums; the total is then sealed with the dataset's dtype name and shape, so
// that a changed type or shape changes it too. Any changed, lost or moved element changes
// the digest except with probability about 2^-64. Text attributes are digested in order
// with FNV-1a.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "io/flat_blocks.h"

namespace llmft::io {

// The sum of the terms of the elements of `ranges` (sorted, disjoint), whose values lie one
// range after another in `values`, each `width` bytes (4: f32 bits, 2: 16-bit bits).
uint64_t digest_terms(const std::vector<FlatRange>& ranges, const void* values, size_t width);

// The terms of the elements of `verify`, a subset of `ranges` (both sorted, disjoint),
// taken from `values` laid out as `ranges`.
uint64_t digest_terms_of_subset(const std::vector<FlatRange>& ranges,
                                const std::vector<FlatRange>& verify, const void* values,
                                size_t width);

// The dataset's digest: the total of every element's term, sealed with its dtype and shape.
uint64_t seal_digest(uint64_t terms, const std::string& dtype_name, const Shape& shape);

// 64-bit FNV-1a of `size` bytes, continuing from `hash` (kFnvOffset to start), so that a
// file can be hashed a block at a time.
inline constexpr uint64_t kFnvOffset = 14695981039346656037ull;
uint64_t fnv1a_bytes(uint64_t hash, const void* bytes, size_t size);

// A digest of name/value pairs, in their order.
uint64_t digest_text_pairs(const std::vector<std::pair<std::string, std::string>>& pairs);

// 16 lower-case hex digits, and back (false when `text` is not that).
std::string digest_text(uint64_t digest);
bool parse_digest_text(const std::string& text, uint64_t& digest);

}  // namespace llmft::io
