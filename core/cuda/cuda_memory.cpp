#include "core/cuda/cuda_memory.h"

#include <cuda_runtime.h>

#include "core/byte_size.h"
#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft {
namespace {

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

CudaMemory::CudaMemory(size_t bytes)
    : base_(reserve(rounded_allocation(bytes))),
      ranges_(reinterpret_cast<uintptr_t>(base_), rounded_allocation(bytes)) {}

CudaMemory::~CudaMemory() {
  // A destructor cannot throw; freeing fails only when the context is already gone.
  cudaFree(base_);
}

void* CudaMemory::allocate(size_t bytes) {
  const size_t rounded = rounded_allocation(bytes);
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
  ranges_.release(reinterpret_cast<uintptr_t>(ptr), rounded_allocation(bytes));
}

void* PinnedHostMemory::allocate(size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t code = cudaHostAlloc(&ptr, rounded_allocation(bytes), cudaHostAllocDefault);
  LLMFT_REQUIRE(code != cudaErrorMemoryAllocation,
                "cuda: could not pin " << format_bytes(rounded_allocation(bytes))
                                       << " of host memory for the offloaded optimizer; lower "
                                          "--host-memory or raise the locked-memory limit "
                                          "(ulimit -l)");
  LLMFT_CUDA_CHECK(code);
  return ptr;
}

void PinnedHostMemory::release(void* ptr, size_t) {
  // A release cannot throw; freeing fails only when the context is already gone.
  cudaFreeHost(ptr);
}

}  // namespace llmft
