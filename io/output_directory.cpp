#include "io/output_directory.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/byte_size.h"
#include "core/error.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

// The directory itself or, before it is created, its nearest existing ancestor.
fs::path existing_part(const fs::path& dir) {
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  return p;
}

}  // namespace

std::optional<uint64_t> free_bytes(const std::string& dir) {
  struct statvfs space {};
  if (::statvfs(existing_part(dir).c_str(), &space) != 0) return std::nullopt;
  return static_cast<uint64_t>(space.f_bavail) * space.f_frsize;
}

void ensure_directory(const std::string& dir, const std::string& option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  LLMFT_REQUIRE(!ec && fs::is_directory(dir), option << " " << dir
                                                     << ": cannot create the directory ("
                                                     << (ec ? ec.message() : "a file is in the way")
                                                     << "); choose a writable path");
}

void prepare_output_directory(const std::string& dir, const std::string& option,
                              uint64_t bytes_to_write, const std::string& what) {
  // Free space first, so that a filesystem too small is refused before anything is made.
  if (const std::optional<uint64_t> free = free_bytes(dir)) {
    LLMFT_REQUIRE(*free >= bytes_to_write,
                  option << " " << dir << ": its filesystem has " << format_bytes(*free)
                         << " free but " << what << " alone take " << format_bytes(bytes_to_write)
                         << "; free some space or choose another directory");
  }
  ensure_directory(dir, option);
  const std::string probe = (fs::path(dir) / ".llmft_write_probe").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int error = errno;
  LLMFT_REQUIRE(fd >= 0, option << " " << dir << " is not writable (" << std::strerror(error)
                                << "); choose a directory this job can write");
  ::close(fd);
  std::error_code ec;
  fs::remove(probe, ec);
}

}  // namespace llmft::io
