#include "io/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/positioned_file.h"

namespace llmft::io {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'F', 'T', 'T', 'O', 'K'};
constexpr uint32_t kVersionWithoutFlags = 1;
constexpr uint32_t kVersionWithFlags = 2;
constexpr uint32_t kVersionWithSamples = 3;
constexpr uint32_t kHasLossMaskFlag = 1;
constexpr uint32_t kHasSamplesFlag = 2;
constexpr size_t kWriteChunkBytes = size_t{1} << 20;

void store_le(uint64_t value, int bytes, unsigned char* out) {
  for (int b = 0; b < bytes; ++b) out[b] = static_cast<unsigned char>(value >> (8 * b));
}

uint64_t load_le(const unsigned char* in, int bytes) {
  uint64_t value = 0;
  for (int b = 0; b < bytes; ++b) value |= uint64_t{in[b]} << (8 * b);
  return value;
}

// Widens `count` little-endian tokens of kBytes bytes, stored at the front of `out`, to
// int32 in place, from the last token down so that none is overwritten before it is read.
template <int kBytes>
void widen_in_place(int32_t* out, size_t count) {
  const auto* raw = reinterpret_cast<const unsigned char*>(out);
  for (size_t i = count; i-- > 0;) out[i] = static_cast<int32_t>(load_le(raw + i * kBytes, kBytes));
}

// The validated fields of a token file's header.
struct TokenFileHeader {
  size_t token_count;
  int bytes_per_token;
  int vocab_size;
  bool has_loss_mask;
  bool has_samples;
  uint64_t samples_offset;  // where the sample count begins (with samples)
};

// Checks the header at `header` against the documented format and the file's size.
// REQUIRES: file_bytes >= kTokenFileHeaderBytes.
TokenFileHeader read_header(const std::string& path, const unsigned char* header,
                            size_t file_bytes) {
  LLMFT_REQUIRE(std::memcmp(header, kMagic, sizeof(kMagic)) == 0,
                "'" << path << "' is not an llmft token file (its first bytes are not "
                    << "\"LLMFTTOK\"); create it with `llmft prepare`");
  const uint64_t version = load_le(header + 8, 4);
  LLMFT_REQUIRE(version >= kVersionWithoutFlags && version <= kVersionWithSamples,
                "token file '" << path << "' has format version " << version
                               << ", but this llmft reads versions " << kVersionWithoutFlags
                               << " to " << kVersionWithSamples
                               << "; re-run `llmft prepare` to recreate it");
  const uint64_t width = load_le(header + 12, 4);
  LLMFT_REQUIRE(width == 2 || width == 4,
                "token file '" << path << "' has " << width
                               << " bytes per token (expected 2 or 4); the file is corrupt, "
                                  "re-run `llmft prepare` to recreate it");
  const uint64_t flags = load_le(header + 28, 4);
  const uint64_t known_flags = version == kVersionWithSamples ? kHasLossMaskFlag | kHasSamplesFlag
                               : version == kVersionWithFlags ? kHasLossMaskFlag
                                                              : 0;
  const bool has_samples = (flags & kHasSamplesFlag) != 0;
  LLMFT_REQUIRE((flags & ~known_flags) == 0 && has_samples == (version == kVersionWithSamples),
                "token file '" << path << "' (format version " << version << ") has flags " << flags
                               << ", but version 1 has no flags, version 2 only bit 0 (has loss "
                               << "mask) and version 3 bit 1 (has samples) and maybe bit 0; the "
                               << "file is corrupt, re-run `llmft prepare` to recreate it");
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
  const uint64_t samples_offset = kTokenFileHeaderBytes + count * bytes_per_entry;
  // With samples the count that follows says how long the file is; read_sample_starts checks.
  const bool sized = has_samples ? samples_offset <= file_bytes && file_bytes - samples_offset >= 8
                                 : samples_offset == file_bytes;
  LLMFT_REQUIRE(sized, "token file '"
                           << path << "' should be " << samples_offset
                           << (has_samples ? " + 8 + 8 per sample" : "") << " bytes (header + "
                           << count << " tokens of " << width << " bytes"
                           << (has_loss_mask ? " + a loss mask of 1 byte per token" : "")
                           << ") but is " << file_bytes
                           << " bytes; it is truncated or corrupt, re-run `llmft prepare` "
                              "to recreate it");
  return {static_cast<size_t>(count),
          static_cast<int>(width),
          static_cast<int>(vocab),
          has_loss_mask,
          has_samples,
          samples_offset};
}

// Checks that `starts` are sample starts of a file of token_count tokens: empty, or 0
// first, strictly rising, each below token_count; returns the first bad index (or size).
size_t first_bad_sample_start(const std::vector<uint64_t>& starts, size_t token_count) {
  for (size_t i = 0; i < starts.size(); ++i) {
    const bool ok = i == 0 ? starts[0] == 0 : starts[i] > starts[i - 1];
    if (!ok || starts[i] >= token_count) return i;
  }
  return starts.size();
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
                      const std::vector<uint8_t>& loss_mask,
                      const std::vector<uint64_t>& sample_starts) {
  LLMFT_REQUIRE(vocab_size > 0,
                "cannot write token file '" << path << "': vocab_size is " << vocab_size);
  const int width = vocab_size <= 65536 ? 2 : 4;
  const bool with_loss_mask = needs_loss_mask(path, tokens.size(), loss_mask);
  const size_t bad_start = first_bad_sample_start(sample_starts, tokens.size());
  LLMFT_REQUIRE(bad_start == sample_starts.size(), "cannot write token file '"
                                                       << path << "': sample start " << bad_start
                                                       << " is not 0 first, rising and below the "
                                                       << tokens.size() << " tokens");
  const bool with_samples = !sample_starts.empty();
  const uint32_t version = with_samples     ? kVersionWithSamples
                           : with_loss_mask ? kVersionWithFlags
                                            : kVersionWithoutFlags;

  unsigned char header[kTokenFileHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  store_le(version, 4, header + 8);
  store_le(static_cast<uint64_t>(width), 4, header + 12);
  store_le(tokens.size(), 8, header + 16);
  store_le(static_cast<uint64_t>(vocab_size), 4, header + 24);
  store_le((with_loss_mask ? kHasLossMaskFlag : 0) | (with_samples ? kHasSamplesFlag : 0), 4,
           header + 28);

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
  if (with_samples) {
    std::vector<unsigned char> starts(8 * (sample_starts.size() + 1));
    store_le(sample_starts.size(), 8, starts.data());
    for (size_t i = 0; i < sample_starts.size(); ++i) {
      store_le(sample_starts[i], 8, starts.data() + 8 * (i + 1));
    }
    file.write(starts.data(), starts.size());
  }
  file.commit();
}

TokenFile::TokenFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LLMFT_REQUIRE(fd_ >= 0, "cannot open token file '" << path << "': " << std::strerror(errno)
                                                     << "; create it with `llmft prepare`");
  try {
    struct stat info {};
    LLMFT_REQUIRE(::fstat(fd_, &info) == 0,
                  "cannot stat token file '" << path << "': " << std::strerror(errno));
    LLMFT_REQUIRE(S_ISREG(info.st_mode), "token file '" << path
                                                        << "' is not a regular file; "
                                                           "give the path of a `llmft prepare` "
                                                           "output");
    file_bytes_ = static_cast<uint64_t>(info.st_size);
    LLMFT_REQUIRE(file_bytes_ >= kTokenFileHeaderBytes,
                  "token file '" << path << "' is " << file_bytes_ << " bytes, shorter than the "
                                 << kTokenFileHeaderBytes
                                 << "-byte header; re-run `llmft prepare` to recreate it");
    unsigned char header_bytes[kTokenFileHeaderBytes];
    if (!read_at(0, sizeof(header_bytes), header_bytes)) fail_changed("its header");
    const TokenFileHeader header = read_header(path, header_bytes, file_bytes_);
    size_ = header.token_count;
    bytes_per_token_ = header.bytes_per_token;
    vocab_size_ = header.vocab_size;
    has_loss_mask_ = header.has_loss_mask;
    if (header.has_samples) read_sample_starts(header.samples_offset);
    validate_contents();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

void TokenFile::validate_contents() {
  // Chunks of whole tokens, read once each; the ids are decoded in place (copy).
  constexpr size_t kChunkTokens = size_t{1} << 18;
  std::vector<int32_t> ids(std::min(size_, kChunkTokens));
  for (size_t begin = 0; begin < size_; begin += ids.size()) {
    const size_t count = std::min(ids.size(), size_ - begin);
    copy_unchecked(begin, count, ids.data());
    const auto bad = std::find_if(ids.begin(), ids.begin() + count,
                                  [&](int32_t id) { return id < 0 || id >= vocab_size_; });
    if (bad == ids.begin() + count) continue;
    const size_t index = begin + static_cast<size_t>(bad - ids.begin());
    const uint64_t raw = static_cast<uint32_t>(*bad);
    LLMFT_FAIL("token file '" << path_ << "' holds token id " << raw << " at token " << index
                              << " (byte offset "
                              << kTokenFileHeaderBytes + index * bytes_per_token_
                              << "), outside its vocabulary of " << vocab_size_ << " ids [0, "
                              << vocab_size_ << "); the file is corrupt or was written for "
                              << "another tokenizer: re-run `llmft prepare` to recreate it");
  }
  target_count_ = size_;
  if (!has_loss_mask_) return;
  std::vector<uint8_t> mask(std::min(size_, kChunkTokens));
  target_count_ = 0;
  for (size_t begin = 0; begin < size_; begin += mask.size()) {
    const size_t count = std::min(mask.size(), size_ - begin);
    if (!read_at(mask_offset() + begin, count, mask.data())) fail_changed("its loss mask");
    for (size_t i = 0; i < count; ++i) {
      LLMFT_REQUIRE(mask[i] <= 1, "token file '" << path_ << "' has loss-mask byte " << int{mask[i]}
                                                 << " for token " << begin + i
                                                 << " (expected 0 or 1); the file is corrupt, "
                                                 << "re-run `llmft prepare` to recreate it");
      target_count_ += mask[i];
    }
  }
}

void TokenFile::read_sample_starts(uint64_t samples_offset) {
  unsigned char count_bytes[8];
  if (!read_at(samples_offset, sizeof(count_bytes), count_bytes)) fail_changed("its sample count");
  const uint64_t count = load_le(count_bytes, 8);
  const uint64_t room = (file_bytes_ - samples_offset - 8) / 8;
  LLMFT_REQUIRE(count >= 1 && count == room && file_bytes_ == samples_offset + 8 + 8 * count,
                "token file '" << path_ << "' claims " << count << " samples, but "
                               << file_bytes_ - samples_offset - 8
                               << " bytes follow the count (8 per sample); it is truncated or "
                                  "corrupt, re-run `llmft prepare` to recreate it");
  std::vector<unsigned char> raw(8 * count);
  if (!read_at(samples_offset + 8, raw.size(), raw.data())) fail_changed("its sample starts");
  sample_starts_.resize(count);
  for (size_t i = 0; i < count; ++i) sample_starts_[i] = load_le(raw.data() + 8 * i, 8);
  const size_t bad = first_bad_sample_start(sample_starts_, size_);
  LLMFT_REQUIRE(bad == sample_starts_.size(),
                "token file '" << path_ << "' has sample start " << bad << " = "
                               << sample_starts_[bad] << ", but starts must be 0 first, rise and "
                               << "stay below the " << size_ << " tokens; the file is corrupt, "
                               << "re-run `llmft prepare` to recreate it");
}

TokenFile::~TokenFile() {
  if (fd_ >= 0) ::close(fd_);
}

TokenFile::TokenFile(TokenFile&& other) noexcept {
  *this = std::move(other);
}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(other.path_);
  sample_starts_ = std::move(other.sample_starts_);
  fd_ = std::exchange(other.fd_, -1);
  file_bytes_ = std::exchange(other.file_bytes_, 0);
  has_loss_mask_ = std::exchange(other.has_loss_mask_, false);
  size_ = std::exchange(other.size_, 0);
  target_count_ = std::exchange(other.target_count_, 0);
  bytes_per_token_ = std::exchange(other.bytes_per_token_, 0);
  vocab_size_ = std::exchange(other.vocab_size_, 0);
  return *this;
}

bool TokenFile::read_at(uint64_t offset, size_t bytes, void* out) const {
  return read_fully_at(fd_, offset, bytes, out);
}

void TokenFile::fail_changed(const std::string& what) const {
  struct stat info {};
  const bool sized = ::fstat(fd_, &info) == 0;
  LLMFT_FAIL("token file '" << path_ << "' changed while this job was reading it: reading " << what
                            << " found less or other than at startup (the file was " << file_bytes_
                            << " bytes, now "
                            << (sized ? std::to_string(info.st_size) : std::string("unknown"))
                            << "); do not rewrite a data file a job is reading: write a new "
                            << "file (`llmft prepare` replaces one atomically) and restart");
}

void TokenFile::copy_unchecked(size_t begin, size_t count, int32_t* out) const {
  const uint64_t offset = kTokenFileHeaderBytes + begin * bytes_per_token_;
  if (!read_at(offset, count * bytes_per_token_, out)) fail_changed("its tokens");
  if (bytes_per_token_ == 2) {
    widen_in_place<2>(out, count);
  } else {
    widen_in_place<4>(out, count);
  }
}

void TokenFile::copy(size_t begin, size_t count, int32_t* out) const {
  copy_unchecked(begin, count, out);
  for (size_t i = 0; i < count; ++i) {
    if (out[i] < 0 || out[i] >= vocab_size_) fail_changed("its tokens");
  }
}

int32_t TokenFile::operator[](size_t i) const {
  int32_t id = 0;
  copy(i, 1, &id);
  return id;
}

void TokenFile::copy_loss_mask(size_t begin, size_t count, uint8_t* out) const {
  if (!has_loss_mask_) {
    std::fill(out, out + count, uint8_t{1});
    return;
  }
  if (!read_at(mask_offset() + begin, count, out)) fail_changed("its loss mask");
  for (size_t i = 0; i < count; ++i) {
    if (out[i] > 1) fail_changed("its loss mask");
  }
}

bool TokenFile::is_target(size_t i) const {
  uint8_t target = 1;
  copy_loss_mask(i, 1, &target);
  return target != 0;
}

}  // namespace llmft::io
