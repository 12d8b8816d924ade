// The CPU backend's host blocks (core/cpu/host_blocks.h): small ones 64-byte aligned, large
// ones on a 2 MiB boundary with exactly their whole 2 MiB pages advised as huge pages (the
// kernel's own record of the advice, the "hg" flag of the mapping in /proc/self/smaps),
// the tail past them not, and every byte writable.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "core/cpu/host_blocks.h"

using namespace llmft;

namespace {

struct Mapping {
  uintptr_t begin = 0, end = 0;
  bool huge_page_advice = false;
};

// The mapping of this process that holds `address`, from /proc/self/smaps.
std::optional<Mapping> mapping_at(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::optional<Mapping> found;
  std::string line;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    const bool header = dash != std::string::npos && space != std::string::npos && dash < space &&
                        line.find(':') > space;
    if (header) {
      if (found) return found;
      const uintptr_t begin = std::stoull(line.substr(0, dash), nullptr, 16);
      const uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      if (begin <= address && address < end) found = Mapping{begin, end, false};
    } else if (found && line.rfind("VmFlags:", 0) == 0) {
      std::istringstream flags(line.substr(8));
      std::string flag;
      while (flags >> flag) found->huge_page_advice |= flag == "hg";
    }
  }
  return found;
}

bool kernel_has_transparent_huge_pages() {
  return std::filesystem::exists(cpu::kHugePageModeFile);
}

}  // namespace

TEST_CASE("host blocks below the threshold are 64-byte aligned and writable") {
  for (size_t bytes : {size_t{1}, size_t{4096} + 3, cpu::kHugePageThreshold - 64}) {
    void* block = cpu::allocate_host_block(bytes);
    REQUIRE(block != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(block) % 64 == 0);
    std::memset(block, 0x5A, bytes);
    CHECK(static_cast<unsigned char*>(block)[bytes - 1] == 0x5A);
    std::free(block);
  }
}

TEST_CASE("large host blocks advise exactly their whole 2 MiB pages as huge pages") {
  const bool advice_recorded = kernel_has_transparent_huge_pages();
  if (!advice_recorded) MESSAGE("this kernel has no transparent huge pages: advice not checked");
  for (size_t bytes : {cpu::kHugePageThreshold, 3 * cpu::kHugePageBytes + 12345}) {
    CAPTURE(bytes);
    void* block = cpu::allocate_host_block(bytes);
    REQUIRE(block != nullptr);
    const auto begin = reinterpret_cast<uintptr_t>(block);
    CHECK(begin % cpu::kHugePageBytes == 0);
    std::memset(block, 0x5A, bytes);
    CHECK(static_cast<unsigned char*>(block)[bytes - 1] == 0x5A);
    if (advice_recorded) {
      const size_t whole = bytes / cpu::kHugePageBytes * cpu::kHugePageBytes;
      const std::optional<Mapping> advised = mapping_at(begin);
      REQUIRE(advised.has_value());
      CHECK(advised->huge_page_advice);
      CHECK(advised->end >= begin + whole);
      if (whole < bytes) {
        const std::optional<Mapping> tail = mapping_at(begin + whole);
        REQUIRE(tail.has_value());
        CHECK_FALSE(tail->huge_page_advice);
        CHECK(advised->end == begin + whole);
      }
    }
    std::free(block);
  }
}

TEST_CASE("the training log's note on host pages follows the kernel's huge-page mode") {
  CHECK(cpu::huge_page_mode_of("always [madvise] never\n") == "madvise");
  CHECK(cpu::huge_page_mode_of("[always] madvise never") == "always");
  CHECK(cpu::huge_page_mode_of("always madvise [never]") == "never");
  CHECK(cpu::huge_page_mode_of("garbled") == "");
  std::ifstream enabled(cpu::kHugePageModeFile);
  std::string text;
  std::getline(enabled, text);
  const std::string mode = cpu::huge_page_mode_of(text);
  const bool advice_works = mode == "always" || mode == "madvise";
  CAPTURE(text);
  CHECK((cpu::host_pages_description() == "huge pages for large tensors") == advice_works);
}
