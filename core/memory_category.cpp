#include "core/memory_category.h"

#include <sstream>

#include "core/byte_size.h"

namespace llmft {

const char* memory_category_name(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::params:
      return "params";
    case MemoryCategory::master_params:
      return "master_params";
    case MemoryCategory::grads:
      return "grads";
    case MemoryCategory::optimizer_state:
      return "optimizer_state";
    case MemoryCategory::activations:
      return "activations";
    case MemoryCategory::workspace:
      return "workspace";
    case MemoryCategory::comm_buffers:
      return "comm_buffers";
    case MemoryCategory::other:
      return "other";
  }
  return "?";
}

size_t total_bytes(const CategoryBytes& bytes) {
  size_t sum = 0;
  for (size_t b : bytes) sum += b;
  return sum;
}

std::string describe_bytes(const CategoryBytes& bytes) {
  std::ostringstream os;
  bool first = true;
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    if (bytes[i] == 0) continue;
    os << (first ? "" : ", ") << memory_category_name(static_cast<MemoryCategory>(i)) << " "
       << format_bytes(static_cast<double>(bytes[i]));
    first = false;
  }
  if (first) os << "nothing";
  return os.str();
}

}  // namespace llmft
