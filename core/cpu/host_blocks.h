// The host memory the CPU backend's tensors live in. Blocks of kHugePageThreshold bytes
// and more start on a 2 MiB boundary and their whole 2 MiB pages are advised to the kernel
// as transparent huge pages (madvise MADV_HUGEPAGE, which Debian's default "madvise" THP
// mode waits for): a weight's rows, which the GEMMs' packing reads one after another, then
// share a TLB entry per 2 MiB instead of one per 4 KiB, and the hardware prefetchers,
// which stop at a page's end, run on. A block's tail past its last whole 2 MiB stays in
// 4 KiB pages, so no block takes more memory than it asked for. Where the kernel has no
// THP the advice is ignored.
#pragma once

#include <cstddef>
#include <string>

namespace llmft::cpu {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;
// Where the kernel says its transparent huge pages' mode; absent without them.
constexpr const char* kHugePageModeFile = "/sys/kernel/mm/transparent_hugepage/enabled";

// A block of `bytes`, 64-byte aligned (2 MiB from kHugePageThreshold up), or nullptr when
// the host cannot provide it. Release it with std::free.
void* allocate_host_block(size_t bytes);

// The mode the kernel's transparent huge pages are in, from the text of
// kHugePageModeFile ("always [madvise] never" -> "madvise"), or
// "" for a text without a bracketed mode.
std::string huge_page_mode_of(const std::string& enabled_text);

// What the training log says of this host's pages: "huge pages for large tensors" where
// the advice takes effect (modes "always" and "madvise"), otherwise why not.
std::string host_pages_description();

}  // namespace llmft::cpu
