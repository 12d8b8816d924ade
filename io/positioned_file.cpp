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

void PositionedFile::read_at(uint64_t offset, uint64_t bytes, void* out) {
  auto* to = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, to, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    LLMFT_REQUIRE(
        got > 0,
        "cannot read " << bytes << " bytes at offset " << offset << " of " << path_ << ": "
                       << (got == 0 ? "the file ends first (truncated?)" : std::strerror(errno)));
    to += got;
    offset += got;
    bytes -= got;
    bytes_read_ += got;
  }
}

}  // namespace llmft::io
