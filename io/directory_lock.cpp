#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace llmft::io {
namespace {

std::string holder_of(int fd) {
  char text[1024] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string holder(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "a job that has not yet written its name" : holder;
}

std::string this_job(const std::string& command) {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::time_t now = std::time(nullptr);
  char started[32] = {};
  std::strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + started + ": " +
         command + "\n";
}

}  // namespace

std::string DirectoryLock::lock_path(const std::string& dir) {
  return (std::filesystem::path(dir) / ".llmft.lock").string();
}

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& option,
                             const std::string& command) {
  const std::string path = lock_path(dir);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // Another user's lock file, left by a job that ended: a read-only descriptor locks it as
  // well (the holder's description then stays the old one's).
  const bool read_only = fd_ < 0 && errno == EACCES;
  if (read_only) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int open_error = errno;
  LLMFT_REQUIRE(fd_ >= 0, option << " " << dir << ": cannot create its lock file " << path << " ("
                                 << std::strerror(open_error)
                                 << "); choose a directory this job can write");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      const std::string holder = holder_of(fd_);
      ::close(fd_);
      fd_ = -1;
      LLMFT_FAIL(option << " " << dir << " is in use by another llmft job (" << holder
                        << "): two jobs in one directory would mix their files; wait for that "
                           "job to end, or choose another directory");
    }
    std::fprintf(stderr,
                 "llmft: warning: %s %s cannot be locked (%s: this filesystem has no locks); "
                 "make sure no other job writes to it\n",
                 option.c_str(), dir.c_str(), std::strerror(error));
    return;
  }
  if (read_only) return;
  const std::string job = this_job(command);
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, job.data(), job.size(), 0) < 0) {
    // The lock holds without the description; a refused job then names no holder.
    std::fprintf(stderr, "llmft: warning: cannot describe this job in %s (%s)\n", path.c_str(),
                 std::strerror(errno));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace llmft::io
