#include "parallel/memory_timeline.h"

namespace llmft {

void MemoryTimeline::take(MemoryCategory category, size_t bytes) {
  if (usage_.add(category, rounded_allocation(bytes))) peak_phase_ = phase_;
}

void MemoryTimeline::give_back(MemoryCategory category, size_t bytes) {
  usage_.remove(category, rounded_allocation(bytes));
}

void MemoryTimeline::clear(MemoryCategory category) {
  usage_.remove(category, usage_.current(category));
}

}  // namespace llmft
