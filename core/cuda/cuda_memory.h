// CudaMemory: device memory reserved from cudaMalloc once, as one slab, and handed out in
// pieces by a RangeAllocator (core/range_allocator.h). The tracking Allocator above it
// counts the bytes and enforces the budget; the slab only has to find room. Pieces are
// multiples of the Allocator's 512-byte granularity, so every one is 512-byte aligned.
// For compute-sanitizer, CudaMemory can instead give every piece its own cudaMalloc
// (LLMFT_CUDA_ALLOCATIONS=per-tensor): memcheck sees the bounds of each allocation, and an
// access past a tensor into its neighbour in the slab would be inside one; the budget is
// the same, only fragmentation cannot happen. Slow (cudaMalloc and cudaFree synchronize),
// so for checks only.
// PinnedHostMemory: page-locked host memory (cudaHostAlloc), the host pool that optimizer
// offload keeps its state in, so copies to and from the device run asynchronously at the
// link's full rate. It is pinned in chunks of 64 MiB or more, kept until the pool is
// destroyed and handed out in pieces like the slab's: cudaHostAlloc takes milliseconds and
// cudaFreeHost synchronizes the whole device, which the buffers offload allocates and
// frees per unit would otherwise do every unit (stalling the GPU, and hanging on a
// collective a dead peer never completes). What is pinned can exceed the pool's peak by a
// chunk's unused rest.
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/range_allocator.h"

namespace llmft {

class CudaMemory : public DeviceMemory {
 public:
  enum class Placement { slab, per_tensor };

  // The placement LLMFT_CUDA_ALLOCATIONS asks for ("slab", the default, or "per-tensor");
  // throws llmft::Error naming the variable for any other value.
  static Placement placement_from_environment();

  // Reserves `bytes` on the current device (per_tensor: the budget, nothing reserved).
  // Throws llmft::Error when cudaMalloc cannot.
  CudaMemory(size_t bytes, Placement placement);
  ~CudaMemory() override;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  // Throws llmft::Error when no free range is large enough (the slab is fragmented), or
  // per tensor when the budget or the device has no room.
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  size_t reserved() const { return ranges_.size(); }  // the budget
  // What it holds of the device's memory now: the slab, or the pieces handed out.
  size_t device_bytes() const { return placement_ == Placement::slab ? ranges_.size() : in_use_; }
  size_t in_use() const {
    return placement_ == Placement::slab ? ranges_.size() - ranges_.free_bytes() : in_use_;
  }

 private:
  Placement placement_;
  void* base_;             // the slab; null per tensor
  RangeAllocator ranges_;  // the slab's ranges; per tensor only its size, the budget
  size_t in_use_ = 0;      // per tensor: the bytes handed out
};

class PinnedHostMemory : public DeviceMemory {
 public:
  PinnedHostMemory() = default;
  ~PinnedHostMemory() override;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

  // Throws llmft::Error naming the size when the host cannot lock that much memory.
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;

 private:
  struct Chunk {
    void* base;
    RangeAllocator ranges;
  };
  std::vector<std::unique_ptr<Chunk>> chunks_;
};

}  // namespace llmft
