#include "parallel/memory_timeline.h"

namespace llmft {

void MemoryTimeline::take(MemoryCategory category, size_t bytes) {
  const size_t rounded = rounded_allocation(bytes);
  const int i = index_of(category);
  current_[i] += rounded;
  total_ += rounded;
  if (current_[i] > peak_[i]) peak_[i] = current_[i];
  if (total_ > peak_total_) {
    peak_total_ = total_;
    at_peak_ = current_;
    peak_phase_ = phase_;
  }
}

void MemoryTimeline::give_back(MemoryCategory category, size_t bytes) {
  const size_t rounded = rounded_allocation(bytes);
  current_[index_of(category)] -= rounded;
  total_ -= rounded;
}

void MemoryTimeline::clear(MemoryCategory category) {
  total_ -= current_[index_of(category)];
  current_[index_of(category)] = 0;
}

}  // namespace llmft
