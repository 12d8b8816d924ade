// MemoryTimeline: replays a step's allocations and releases by category, as the
// Allocator would see them (each size rounded to its granularity), and keeps each
// category's peak, the total's peak, the breakdown at that moment and the name of the
// phase in which it happened. The memory model drives it from the config alone.
#pragma once

#include <string>

#include "core/allocator.h"
#include "core/memory_usage.h"

namespace llmft {

class MemoryTimeline {
 public:
  void set_phase(std::string phase) { phase_ = std::move(phase); }
  void take(MemoryCategory category, size_t bytes);
  void give_back(MemoryCategory category, size_t bytes);
  // Releases everything held in the category.
  void clear(MemoryCategory category);

  const MemoryUsage& usage() const { return usage_; }
  const std::string& peak_phase() const { return peak_phase_; }

 private:
  MemoryUsage usage_;
  std::string phase_, peak_phase_;
};

}  // namespace llmft
