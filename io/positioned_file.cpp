#include "io/positioned_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace llmft::io {

PositionedFile::PositionedFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LLMFT_REQUIRE(fd_ >= 0,
                "cannot open " << path << ": " << std::strerror(errno) << "; check the path");
}

PositionedFile::~PositionedFile() {
  ::close(fd_);
}

bool read_fully_at(int fd, uint64_t offset, uint64_t bytes, void* out) {
  auto* to = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd, to, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) {
      errno = 0;  // the file ended first
      return false;
    }
    to += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
  return true;
}

void PositionedFile::read_at(uint64_t offset, uint64_t bytes, void* out) {
  LLMFT_REQUIRE(
      read_fully_at(fd_, offset, bytes, out),
      "cannot read " << bytes << " bytes at offset " << offset << " of " << path_ << ": "
                     << (errno == 0 ? "the file ends first (truncated?)" : std::strerror(errno)));
  bytes_read_ += bytes;
}

}  // namespace llmft::io
