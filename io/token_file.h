// The token file that `llmft prepare` writes and training reads: a 32-byte header,
// the tokens and, optionally, a loss mask saying which tokens are training targets;
// all little-endian.
//
//   offset  size  field
//        0     8  magic "LLMFTTOK"
//        8     4  uint32 version: 1 (no flags), 2 (flags) or 3 (flags, with samples)
//       12     4  uint32 bytes_per_token: 2 (uint16 tokens) or 4 (uint32 tokens)
//       16     8  uint64 token_count
//       24     4  uint32 vocab_size
//       28     4  uint32 flags (versions 2 and 3; reserved = 0 in version 1):
//                 bit 0 = has loss mask, bit 1 = has samples (version 3 only), others 0
//       32     .  token_count tokens
//        .     .  with a loss mask: token_count bytes, byte i = 1 when token i is a
//                 training target (the loss counts predicting it), 0 when it is not
//        .     8  with samples: uint64 sample_count S >= 1
//        .   8 S  the index of each sample's first token: 0 first, strictly rising, each
//                 below token_count; sample i runs to the next one's start (the last to
//                 the end of the file)
//
// Samples are the rows of a JSONL dataset (a prompt/response pair, a conversation):
// training packs whole samples into windows and no token attends across a sample's edge
// (io/data_loader.h). A file without samples is one continuous stream (plain text).
//
// A file without a loss mask (version 1, or version 2 with flags 0) trains on every
// token. write_token_file writes version 1 when every token is a target and there are no
// samples, so such files are byte for byte what earlier releases wrote, version 2 with a
// mask and no samples, and version 3 with samples.
//
// write_token_file writes atomically: readers see the old file or the whole new one.
// TokenFile reads through its own descriptor with positioned reads (pread), never a
// memory map, so a file cut short under a running job is an error naming it, not SIGBUS;
// a file replaced by rename (as write_token_file does) keeps being read from the old one.
// After construction it is immutable, so threads may read it concurrently.
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
// `loss_mask[i]` is 1 when token i is a training target and 0 when it is not; an empty
// mask means every token is one. The mask is written only when some entry is 0.
// `sample_starts` are the first token of each sample (empty: a continuous stream).
// REQUIRES: vocab_size > 0, every token is in [0, vocab_size), loss_mask is empty
// or has one entry, 0 or 1, per token, and sample_starts is empty or starts at 0 and
// rises strictly below tokens.size().
void write_token_file(const std::string& path, const std::vector<int32_t>& tokens, int vocab_size,
                      const std::vector<uint8_t>& loss_mask = {},
                      const std::vector<uint64_t>& sample_starts = {});

class TokenFile {
 public:
  // Opens `path` and validates it in one sequential pass: the header, the size, every
  // token id (below the header's vocabulary) and every loss-mask byte (0 or 1). Throws
  // llmft::Error naming the path and what to do when the file is missing, not a token
  // file, truncated, holds an id outside its vocabulary (the message names the id, its
  // token index and byte offset), or has a mask byte other than 0 or 1.
  explicit TokenFile(const std::string& path);
  ~TokenFile();

  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const std::string& path() const { return path_; }
  size_t size() const { return size_; }
  int vocab_size() const { return vocab_size_; }

  // The reads below throw llmft::Error naming the file when it no longer holds what was
  // validated (cut short, or rewritten in place with other ids) while the job runs.
  // REQUIRES: i < size().
  int32_t operator[](size_t i) const;
  // Copies tokens [begin, begin + count) to out.
  // REQUIRES: begin + count <= size().
  void copy(size_t begin, size_t count, int32_t* out) const;

  // Whether the file carries a loss mask; without one every token is a target.
  bool has_loss_mask() const { return has_loss_mask_; }
  // Whether token i is a training target: the loss counts the prediction of it.
  // REQUIRES: i < size().
  bool is_target(size_t i) const;
  // Copies the loss mask of tokens [begin, begin + count) to out: 1 for a target, 0 for
  // a token the loss does not count (all 1 without a mask).
  // REQUIRES: begin + count <= size().
  void copy_loss_mask(size_t begin, size_t count, uint8_t* out) const;
  // How many tokens are training targets (size() without a loss mask).
  size_t target_count() const { return target_count_; }
  // The first token of each sample, validated as the format says; empty for a stream.
  const std::vector<uint64_t>& sample_starts() const { return sample_starts_; }

 private:
  // Checks every id against the vocabulary and every mask byte, counting the targets.
  void validate_contents();
  // Reads and checks the sample starts after the mask; `samples_offset` is where they begin.
  void read_sample_starts(uint64_t samples_offset);
  // copy() without the id check.
  void copy_unchecked(size_t begin, size_t count, int32_t* out) const;
  // Reads `bytes` bytes at `offset` of the file; false when the file ends first.
  bool read_at(uint64_t offset, size_t bytes, void* out) const;
  // The error for a file that no longer holds what the constructor validated.
  [[noreturn]] void fail_changed(const std::string& what) const;
  uint64_t mask_offset() const { return kTokenFileHeaderBytes + size_ * bytes_per_token_; }

  std::string path_;
  std::vector<uint64_t> sample_starts_;
  int fd_ = -1;  // -1 when moved from
  uint64_t file_bytes_ = 0;
  bool has_loss_mask_ = false;
  size_t size_ = 0;
  size_t target_count_ = 0;
  int bytes_per_token_ = 0;
  int vocab_size_ = 0;
};

}  // namespace llmft::io
