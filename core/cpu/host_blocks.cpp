#include "core/cpu/host_blocks.h"

#include <sys/mman.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace llmft::cpu {

void* allocate_host_block(size_t bytes) {
  const bool huge = bytes >= kHugePageThreshold;
  void* block = nullptr;
  if (posix_memalign(&block, huge ? kHugePageBytes : 64, bytes) != 0) return nullptr;
  // Advice only: a kernel without transparent huge pages refuses it, and 4 KiB pages serve.
  if (huge) madvise(block, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return block;
}

std::string huge_page_mode_of(const std::string& enabled_text) {
  const size_t open = enabled_text.find('[');
  const size_t close = enabled_text.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return enabled_text.substr(open + 1, close - open - 1);
}

std::string host_pages_description() {
  std::ifstream file(kHugePageModeFile);
  if (!file) return "4 KiB pages (this kernel has no transparent huge pages)";
  std::stringstream text;
  text << file.rdbuf();
  const std::string mode = huge_page_mode_of(text.str());
  if (mode == "always" || mode == "madvise") return "huge pages for large tensors";
  return "4 KiB pages (transparent huge pages are '" + mode + "' on this host)";
}

}  // namespace llmft::cpu
