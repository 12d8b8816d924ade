#include "io/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"

namespace llmft::io {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'F', 'T', 'T', 'O', 'K'};
constexpr uint32_t kVersionWithoutFlags = 1;
constexpr uint32_t kVersionWithFlags = 2;
constexpr uint32_t kHasLossMaskFlag = 1;
constexpr size_t kWriteChunkBytes = size_t{1} << 20;

void store_le(uint64_t value, int bytes, unsigned char* out) {
  for (int b = 0; b < bytes; ++b) out[b] = static_cast<unsigned char>(value >> (8 * b));
}

uint64_t load_le(const unsigned char* in, int bytes) {
  uint64_t value = 0;
  for (int b = 0; b < bytes; ++b) value |= uint64_t{in[b]} << (8 * b);
  return value;
}

// load_le with the width known at compile time, for the token loops.
template <int kBytes>
void load_tokens(const unsigned char* in, size_t count, int32_t* out) {
  for (size_t i = 0; i < count; ++i, in += kBytes) {
    out[i] = static_cast<int32_t>(load_le(in, kBytes));
  }
}

// The validated fields of a token file's header.
struct TokenFileHeader {
  size_t token_count;
  int bytes_per_token;
  int vocab_size;
  bool has_loss_mask;
};

// Checks the header at `header` against the documented format and the file's size.
// REQUIRES: file_bytes >= kTokenFileHeaderBytes.
TokenFileHeader read_header(const std::string& path, const unsigned char* header,
                            size_t file_bytes) {
  LLMFT_REQUIRE(std::memcmp(header, kMagic, sizeof(kMagic)) == 0,
                "'" << path << "' is not an llmft token file (its first bytes are not "
                    << "\"LLMFTTOK\"); create it with `llmft prepare`");
  const uint64_t version = load_le(header + 8, 4);
  LLMFT_REQUIRE(version == kVersionWithoutFlags || version == kVersionWithFlags,
                "token file '" << path << "' has format version " << version
                               << ", but this llmft reads versions " << kVersionWithoutFlags
                               << " and " << kVersionWithFlags
                               << "; re-run `llmft prepare` to recreate it");
  const uint64_t width = load_le(header + 12, 4);
  LLMFT_REQUIRE(width == 2 || width == 4,
                "token file '" << path << "' has " << width
                               << " bytes per token (expected 2 or 4); the file is corrupt, "
                                  "re-run `llmft prepare` to recreate it");
  const uint64_t flags = load_le(header + 28, 4);
  const uint64_t known_flags = version == kVersionWithFlags ? kHasLossMaskFlag : 0;
  LLMFT_REQUIRE((flags & ~known_flags) == 0,
                "token file '" << path << "' (format version " << version << ") has flags " << flags
                               << ", but version 1 has no flags and version 2 only "
                               << "bit 0 (has loss mask); the file is corrupt, re-run "
                               << "`llmft prepare` to recreate it");
  const bool has_loss_mask = (flags & kHasLossMaskFlag) != 0;
  const uint64_t count = load_le(header + 16, 8);
  const uint64_t vocab = load_le(header + 24, 4);
  LLMFT_REQUIRE(vocab > 0 && vocab <= uint64_t{INT32_MAX},
                "token file '" << path << "' has vocab_size " << vocab
                               << "; the file is corrupt, re-run `llmft prepare` to recreate it");
  const uint64_t bytes_per_entry = width + (has_loss_mask ? 1 : 0);
  LLMFT_REQUIRE(count <= (UINT64_MAX - kTokenFileHeaderBytes) / bytes_per_entry,
                "token file '" << path << "' claims " << count
                               << " tokens, more than any file can hold; the file is "
                                  "corrupt, re-run `llmft prepare` to recreate it");
  const uint64_t expected_bytes = kTokenFileHeaderBytes + count * bytes_per_entry;
  LLMFT_REQUIRE(expected_bytes == file_bytes,
                "token file '" << path << "' should be " << expected_bytes << " bytes (header + "
                               << count << " tokens of " << width << " bytes"
                               << (has_loss_mask ? " + a loss mask of 1 byte per token" : "")
                               << ") but is " << file_bytes
                               << " bytes; it is truncated or corrupt, re-run `llmft prepare` "
                                  "to recreate it");
  return {static_cast<size_t>(count), static_cast<int>(width), static_cast<int>(vocab),
          has_loss_mask};
}

// Checks that every byte of the loss mask is 0 or 1 and returns how many are 1.
size_t count_targets(const std::string& path, const unsigned char* loss_mask, size_t count) {
  size_t targets = 0;
  for (size_t i = 0; i < count; ++i) {
    LLMFT_REQUIRE(loss_mask[i] <= 1, "token file '" << path << "' has loss-mask byte "
                                                    << int{loss_mask[i]} << " for token " << i
                                                    << " (expected 0 or 1); the file is corrupt, "
                                                    << "re-run `llmft prepare` to recreate it");
    targets += loss_mask[i];
  }
  return targets;
}

// Whether `loss_mask` marks some token as not a target, after checking that it is
// empty or has one entry, 0 or 1, per token.
bool needs_loss_mask(const std::string& path, size_t token_count,
                     const std::vector<uint8_t>& loss_mask) {
  if (loss_mask.empty()) return false;
  LLMFT_REQUIRE(loss_mask.size() == token_count,
                "cannot write token file '" << path << "': the loss mask has " << loss_mask.size()
                                            << " entries for " << token_count << " tokens");
  bool some_not_target = false;
  for (size_t i = 0; i < loss_mask.size(); ++i) {
    LLMFT_REQUIRE(loss_mask[i] <= 1, "cannot write token file '" << path << "': loss-mask entry "
                                                                 << i << " is " << int{loss_mask[i]}
                                                                 << ", not 0 or 1");
    some_not_target = some_not_target || loss_mask[i] == 0;
  }
  return some_not_target;
}

}  // namespace

void write_token_file(const std::string& path, const std::vector<int32_t>& tokens, int vocab_size,
                      const std::vector<uint8_t>& loss_mask) {
  LLMFT_REQUIRE(vocab_size > 0,
                "cannot write token file '" << path << "': vocab_size is " << vocab_size);
  const int width = vocab_size <= 65536 ? 2 : 4;
  const bool with_loss_mask = needs_loss_mask(path, tokens.size(), loss_mask);

  unsigned char header[kTokenFileHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  store_le(with_loss_mask ? kVersionWithFlags : kVersionWithoutFlags, 4, header + 8);
  store_le(static_cast<uint64_t>(width), 4, header + 12);
  store_le(tokens.size(), 8, header + 16);
  store_le(static_cast<uint64_t>(vocab_size), 4, header + 24);
  store_le(with_loss_mask ? kHasLossMaskFlag : 0, 4, header + 28);

  AtomicFile file(path);
  file.write(header, sizeof(header));
  std::vector<unsigned char> chunk;
  chunk.reserve(kWriteChunkBytes);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t token = tokens[i];
    LLMFT_REQUIRE(token >= 0 && token < vocab_size, "cannot write token file '"
                                                        << path << "': token " << i << " is "
                                                        << token << ", outside the vocabulary [0, "
                                                        << vocab_size << ")");
    chunk.resize(chunk.size() + width);
    store_le(static_cast<uint64_t>(token), width, chunk.data() + chunk.size() - width);
    if (chunk.size() >= kWriteChunkBytes) {
      file.write(chunk.data(), chunk.size());
      chunk.clear();
    }
  }
  file.write(chunk.data(), chunk.size());
  if (with_loss_mask) file.write(loss_mask.data(), loss_mask.size());
  file.commit();
}

TokenFile::TokenFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LLMFT_REQUIRE(fd >= 0, "cannot open token file '" << path << "': " << std::strerror(errno)
                                                    << "; create it with `llmft prepare`");
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    LLMFT_FAIL("cannot stat token file '" << path << "': " << std::strerror(error));
  }
  const size_t file_bytes = static_cast<size_t>(info.st_size);
  if (file_bytes < kTokenFileHeaderBytes) {
    ::close(fd);
    LLMFT_FAIL("token file '" << path << "' is " << file_bytes << " bytes, shorter than the "
                              << kTokenFileHeaderBytes
                              << "-byte header; re-run `llmft prepare` to recreate it");
  }
  void* mapping = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);  // the mapping stays valid without the descriptor
  LLMFT_REQUIRE(mapping != MAP_FAILED,
                "cannot map token file '" << path << "': " << std::strerror(map_error));
  mapping_ = mapping;
  mapping_bytes_ = file_bytes;

  try {
    const TokenFileHeader header =
        read_header(path, static_cast<const unsigned char*>(mapping_), file_bytes);
    tokens_ = static_cast<const unsigned char*>(mapping_) + kTokenFileHeaderBytes;
    size_ = header.token_count;
    bytes_per_token_ = header.bytes_per_token;
    vocab_size_ = header.vocab_size;
    target_count_ = size_;
    if (header.has_loss_mask) {
      loss_mask_ = tokens_ + size_ * bytes_per_token_;
      target_count_ = count_targets(path, loss_mask_, size_);
    }
  } catch (...) {
    unmap();
    throw;
  }
}

TokenFile::~TokenFile() {
  unmap();
}

TokenFile::TokenFile(TokenFile&& other) noexcept {
  *this = std::move(other);
}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this == &other) return *this;
  unmap();
  path_ = std::move(other.path_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
  tokens_ = std::exchange(other.tokens_, nullptr);
  loss_mask_ = std::exchange(other.loss_mask_, nullptr);
  size_ = std::exchange(other.size_, 0);
  target_count_ = std::exchange(other.target_count_, 0);
  bytes_per_token_ = std::exchange(other.bytes_per_token_, 0);
  vocab_size_ = std::exchange(other.vocab_size_, 0);
  return *this;
}

void TokenFile::unmap() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
}

int32_t TokenFile::operator[](size_t i) const {
  return static_cast<int32_t>(load_le(tokens_ + i * bytes_per_token_, bytes_per_token_));
}

void TokenFile::copy(size_t begin, size_t count, int32_t* out) const {
  const unsigned char* in = tokens_ + begin * bytes_per_token_;
  if (bytes_per_token_ == 2) {
    load_tokens<2>(in, count, out);
  } else {
    load_tokens<4>(in, count, out);
  }
}

}  // namespace llmft::io
