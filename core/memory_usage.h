// MemoryUsage: bytes in use per MemoryCategory and in total, with each category's peak,
// the total's peak and the breakdown at that moment. The Allocator keeps one for what it
// hands out.
#pragma once

#include <cstddef>

#include "core/memory_category.h"

namespace llmft {

class MemoryUsage {
 public:
  // Returns whether this made a new peak of the total.
  bool add(MemoryCategory category, size_t bytes);
  void remove(MemoryCategory category, size_t bytes);
  // Starts a new peak window at the current usage.
  void reset_peaks();

  size_t current(MemoryCategory c) const { return current_[index_of(c)]; }
  size_t peak(MemoryCategory c) const { return peak_[index_of(c)]; }
  size_t total_current() const { return total_current_; }
  size_t total_peak() const { return total_peak_; }
  const CategoryBytes& current_by_category() const { return current_; }
  const CategoryBytes& peak_by_category() const { return peak_; }
  const CategoryBytes& at_total_peak() const { return at_total_peak_; }

 private:
  CategoryBytes current_{};
  CategoryBytes peak_{};
  CategoryBytes at_total_peak_{};
  size_t total_current_ = 0;
  size_t total_peak_ = 0;
};

}  // namespace llmft
