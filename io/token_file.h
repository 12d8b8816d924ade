// The token file that `llmft prepare` writes and training reads: a 32-byte header
// followed by the tokens, all little-endian.
//
//   offset  size  field
//        0     8  magic "LLMFTTOK"
//        8     4  uint32 version = 1
//       12     4  uint32 bytes_per_token: 2 (uint16 tokens) or 4 (uint32 tokens)
//       16     8  uint64 token_count
//       24     4  uint32 vocab_size
//       28     4  uint32 reserved = 0
//       32     .  token_count tokens
//
// write_token_file writes atomically: readers see the old file or the whole new one.
// TokenFile maps a file read-only; after construction it is immutable, so threads may
// read it concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmft::io {

constexpr size_t kTokenFileHeaderBytes = 32;

// Writes `tokens` with 2 bytes per token when vocab_size <= 65536, else 4, through an
// AtomicFile (path + ".tmp.<pid>", fsync, rename over `path`); on failure the temp
// file is removed and llmft::Error thrown, so no partial file is left behind.
// REQUIRES: vocab_size > 0 and every token is in [0, vocab_size).
void write_token_file(const std::string& path, const std::vector<int32_t>& tokens, int vocab_size);

class TokenFile {
 public:
  // Maps `path` and validates its header and size; throws llmft::Error naming the
  // path and what to do when the file is missing, not a token file, or truncated.
  explicit TokenFile(const std::string& path);
  ~TokenFile();

  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const std::string& path() const { return path_; }
  size_t size() const { return size_; }
  int vocab_size() const { return vocab_size_; }

  // REQUIRES: i < size().
  int32_t operator[](size_t i) const;
  // Copies tokens [begin, begin + count) to out.
  // REQUIRES: begin + count <= size().
  void copy(size_t begin, size_t count, int32_t* out) const;

 private:
  void unmap();

  std::string path_;
  void* mapping_ = nullptr;  // whole file; nullptr when moved from
  size_t mapping_bytes_ = 0;
  const unsigned char* tokens_ = nullptr;  // first token, inside mapping_
  size_t size_ = 0;
  int bytes_per_token_ = 0;
  int vocab_size_ = 0;
};

}  // namespace llmft::io
