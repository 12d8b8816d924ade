#include "core/cuda/cuda_memory.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/byte_size.h"
#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft {
namespace {

// Where the per-tensor budget's bookkeeping range starts: any page-aligned non-zero address
// (RangeAllocator reads 0 as "no room").
constexpr uintptr_t kPageBytes = 4096;

void* reserve(size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t code = cudaMalloc(&ptr, bytes);
  LLMFT_REQUIRE(code != cudaErrorMemoryAllocation,
                "cuda: could not reserve " << format_bytes(bytes)
                                           << " of device memory; lower --device-memory");
  LLMFT_CUDA_CHECK(code);
  return ptr;
}

}  // namespace

CudaMemory::Placement CudaMemory::placement_from_environment() {
  const char* value = std::getenv("LLMFT_CUDA_ALLOCATIONS");
  const std::string text = value != nullptr ? value : "";
  if (text.empty() || text == "slab") return Placement::slab;
  LLMFT_REQUIRE(text == "per-tensor",
                "LLMFT_CUDA_ALLOCATIONS=" << text << ": use slab (the default) or per-tensor");
  return Placement::per_tensor;
}

CudaMemory::CudaMemory(size_t bytes, Placement placement)
    : placement_(placement),
      base_(placement == Placement::slab ? reserve(rounded_allocation(bytes)) : nullptr),
      // Per tensor the ranges only keep the budget's size: any non-zero start will do.
      ranges_(placement == Placement::slab ? reinterpret_cast<uintptr_t>(base_) : kPageBytes,
              rounded_allocation(bytes)) {}

CudaMemory::~CudaMemory() {
  // A destructor cannot throw; freeing fails only when the context is already gone.
  if (base_ != nullptr) cudaFree(base_);
}

void* CudaMemory::allocate(size_t bytes) {
  const size_t rounded = rounded_allocation(bytes);
  if (placement_ == Placement::per_tensor) {
    LLMFT_REQUIRE(in_use_ + rounded <= ranges_.size(),
                  "cuda: " << format_bytes(rounded) << " more would pass the "
                           << format_bytes(ranges_.size()) << " budget; raise --device-memory");
    void* ptr = reserve(rounded);
    in_use_ += rounded;
    return ptr;
  }
  const uintptr_t start = ranges_.allocate(rounded);
  LLMFT_REQUIRE(start != 0, "cuda: no free range of "
                                << format_bytes(rounded) << " in the reserved "
                                << format_bytes(ranges_.size()) << " (largest free range "
                                << format_bytes(ranges_.largest_free())
                                << "): the device memory is fragmented; lower --micro-batch "
                                   "or raise --device-memory");
  return reinterpret_cast<void*>(start);
}

void CudaMemory::release(void* ptr, size_t bytes) {
  if (placement_ == Placement::per_tensor) {
    cudaFree(ptr);  // fails only when the context is already gone
    in_use_ -= rounded_allocation(bytes);
    return;
  }
  ranges_.release(reinterpret_cast<uintptr_t>(ptr), rounded_allocation(bytes));
}

PinnedHostMemory::~PinnedHostMemory() {
  // A destructor cannot throw; freeing fails only when the context is already gone.
  for (const auto& chunk : chunks_) cudaFreeHost(chunk->base);
}

void* PinnedHostMemory::allocate(size_t bytes) {
  constexpr size_t kChunkBytes = size_t{64} << 20;
  const size_t rounded = rounded_allocation(bytes);
  for (const auto& chunk : chunks_) {
    if (const uintptr_t start = chunk->ranges.allocate(rounded)) {
      return reinterpret_cast<void*>(start);
    }
  }
  const size_t size = std::max(rounded, kChunkBytes);
  void* base = nullptr;
  const cudaError_t code = cudaHostAlloc(&base, size, cudaHostAllocDefault);
  LLMFT_REQUIRE(code != cudaErrorMemoryAllocation,
                "cuda: could not pin " << format_bytes(size)
                                       << " of host memory for the offloaded optimizer; lower "
                                          "--host-memory or raise the locked-memory limit "
                                          "(ulimit -l)");
  LLMFT_CUDA_CHECK(code);
  const uintptr_t start = reinterpret_cast<uintptr_t>(base);
  chunks_.push_back(std::make_unique<Chunk>(Chunk{base, RangeAllocator(start, size)}));
  return reinterpret_cast<void*>(chunks_.back()->ranges.allocate(rounded));
}

void PinnedHostMemory::release(void* ptr, size_t bytes) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
  for (const auto& chunk : chunks_) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(chunk->base);
    if (start >= base && start < base + chunk->ranges.size()) {
      chunk->ranges.release(start, rounded_allocation(bytes));
      return;
    }
  }
}

}  // namespace llmft
