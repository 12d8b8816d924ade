// CudaMemory: device memory reserved from cudaMalloc once, as one slab, and handed out in
// pieces by a RangeAllocator (core/range_allocator.h). The tracking Allocator above it
// counts the bytes and enforces the budget; the slab only has to find room. Pieces are
// multiples of the Allocator's 512-byte granularity, so every one is 512-byte aligned.
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
  // Reserves `bytes` on the current device. Throws llmft::Error when cudaMalloc cannot.
  explicit CudaMemory(size_t bytes);
  ~CudaMemory() override;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  // Throws llmft::Error when no free range is large enough (the slab is fragmented).
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  size_t reserved() const { return ranges_.size(); }
  size_t in_use() const { return ranges_.size() - ranges_.free_bytes(); }

 private:
  void* base_;
  RangeAllocator ranges_;
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
