// The categories every byte of device memory is accounted under (docs/ARCHITECTURE.md,
// "The pieces of a step"). The memory model predicts the same categories.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace llmft {

enum class MemoryCategory : int {
  params,
  master_params,
  grads,
  optimizer_state,
  activations,
  workspace,
  comm_buffers,
  other,
};

constexpr int kMemoryCategoryCount = 8;

const char* memory_category_name(MemoryCategory c);

inline int index_of(MemoryCategory c) {
  return static_cast<int>(c);
}

// Bytes per category, indexed by index_of(category).
using CategoryBytes = std::array<size_t, kMemoryCategoryCount>;

size_t total_bytes(const CategoryBytes& bytes);

// "params 1.00 MiB, grads 1.00 MiB, ..." listing the non-zero categories.
std::string describe_bytes(const CategoryBytes& bytes);

}  // namespace llmft
