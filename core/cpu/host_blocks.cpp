#include "core/cpu/host_blocks.h"

#include <sys/mman.h>

#include <cstdlib>

namespace llmft::cpu {

void* allocate_host_block(size_t bytes) {
  const bool huge = bytes >= kHugePageThreshold;
  void* block = nullptr;
  if (posix_memalign(&block, huge ? kHugePageBytes : 64, bytes) != 0) return nullptr;
  // Advice only: a kernel without transparent huge pages refuses it, and 4 KiB pages serve.
  if (huge) madvise(block, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return block;
}

}  // namespace llmft::cpu
