// PositionedFile: a file opened for reading at given offsets (pread), counting the bytes it
// has read, so that a rank can read only the parts of a checkpoint it needs and a test can
// check that it did.
#pragma once

#include <cstdint>
#include <string>

namespace llmft::io {

// Reads exactly `bytes` bytes at `offset` of the open descriptor `fd` into `out`, retrying
// short and interrupted reads; false when the file ends first or a read fails (errno says
// which). Safe from several threads at once on one descriptor.
bool read_fully_at(int fd, uint64_t offset, uint64_t bytes, void* out);

class PositionedFile {
 public:
  // Throws llmft::Error naming the path when it cannot be opened.
  explicit PositionedFile(const std::string& path);
  ~PositionedFile();
  PositionedFile(const PositionedFile&) = delete;
  PositionedFile& operator=(const PositionedFile&) = delete;

  const std::string& path() const { return path_; }
  // Reads exactly `bytes` bytes at `offset` into `out`; throws naming the file when the file
  // ends first or the read fails.
  void read_at(uint64_t offset, uint64_t bytes, void* out);
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t bytes_read_ = 0;
};

}  // namespace llmft::io
