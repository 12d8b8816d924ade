// The tracking allocator: every byte of device memory is taken through it, under a
// MemoryCategory. It tracks current and peak bytes per category and in total, and
// enforces a budget with an out-of-memory error that prints the breakdown.
//
// DeviceMemory is the raw allocation hook a Backend provides (host memory on CPU,
// cudaMalloc on GPU). Sizes are rounded up to kAllocationGranularity, as the CUDA
// caching allocator does, and the memory model rounds the same way.
//
// Thread-safety: not thread-safe; one Allocator per rank, used from one thread.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "core/memory_category.h"
#include "core/memory_usage.h"
#include "core/tensor.h"

namespace llmft {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr, size_t bytes) = 0;
};

constexpr size_t kAllocationGranularity = 512;

// Bytes an allocation of `bytes` occupies.
size_t rounded_allocation(size_t bytes);

class Buffer;

class Allocator {
 public:
  // budget_bytes == 0 means unlimited.
  Allocator(DeviceMemory& memory, size_t budget_bytes);
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;
  ~Allocator();

  // Throws llmft::Error naming `what` and printing the breakdown when over budget.
  Buffer allocate(size_t bytes, MemoryCategory category, const std::string& what);

  size_t budget() const { return budget_; }
  size_t current(MemoryCategory c) const { return usage_.current(c); }
  size_t peak(MemoryCategory c) const { return usage_.peak(c); }
  size_t total_current() const { return usage_.total_current(); }
  size_t total_peak() const { return usage_.total_peak(); }
  const CategoryBytes& current_by_category() const { return usage_.current_by_category(); }
  const CategoryBytes& peak_by_category() const { return usage_.peak_by_category(); }
  // The per-category bytes at the moment the total peaked.
  const CategoryBytes& at_total_peak() const { return usage_.at_total_peak(); }
  // Starts a new peak window at the current usage.
  void reset_peaks() { usage_.reset_peaks(); }
  // Names what the program is doing from now on (e.g. "backward of block 3"), so that
  // the peak and an out-of-memory error can say where they happened.
  void set_phase(std::string phase) { phase_ = std::move(phase); }
  // The phase during which the total last reached its peak ("" before any phase is set).
  const std::string& peak_phase() const { return peak_phase_; }

 private:
  friend class Buffer;
  void release(void* ptr, size_t rounded_bytes, MemoryCategory category);

  DeviceMemory& memory_;
  size_t budget_;
  MemoryUsage usage_;
  std::string phase_, peak_phase_;
};

// One allocation, released when the Buffer is destroyed or reset. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();
  bool empty() const { return data_ == nullptr; }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  MemoryCategory category() const { return category_; }
  // The whole buffer (or its first numel(shape) elements) as a tensor.
  Tensor as(DType dtype, Shape shape) const;

 private:
  friend class Allocator;
  Buffer(Allocator* owner, void* data, size_t bytes, size_t rounded, MemoryCategory c)
      : owner_(owner), data_(data), bytes_(bytes), rounded_(rounded), category_(c) {}

  Allocator* owner_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t rounded_ = 0;
  MemoryCategory category_ = MemoryCategory::other;
};

}  // namespace llmft
