#include "core/memory_usage.h"

namespace llmft {

bool MemoryUsage::add(MemoryCategory category, size_t bytes) {
  const int i = index_of(category);
  current_[i] += bytes;
  total_current_ += bytes;
  if (current_[i] > peak_[i]) peak_[i] = current_[i];
  if (total_current_ <= total_peak_) return false;
  total_peak_ = total_current_;
  at_total_peak_ = current_;
  return true;
}

void MemoryUsage::remove(MemoryCategory category, size_t bytes) {
  current_[index_of(category)] -= bytes;
  total_current_ -= bytes;
}

void MemoryUsage::reset_peaks() {
  peak_ = current_;
  total_peak_ = total_current_;
  at_total_peak_ = current_;
}

}  // namespace llmft
