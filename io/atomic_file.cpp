#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.h"

namespace llmft::io {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Makes the rename itself durable. Best effort: some file systems cannot fsync a
// directory, and the data is already safe in the renamed file.
void sync_parent_directory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// ".<filename>.<host>.<pid>.<n>.partial": n counts this process's shared writes.
std::string shared_partial_path(const std::string& path) {
  static std::atomic<unsigned long> writes{0};
  char host[HOST_NAME_MAX + 1] = "host";
  ::gethostname(host, sizeof host);
  host[HOST_NAME_MAX] = '\0';
  const std::filesystem::path p(path);
  const std::string name = "." + p.filename().string() + "." + host + "." +
                           std::to_string(::getpid()) + "." + std::to_string(writes++) + ".partial";
  return (p.parent_path() / name).string();
}

// What the node of mode `mode` is, for messages; "" for what a rename may replace.
const char* special_node_kind(mode_t mode) {
  if (S_ISREG(mode) || S_ISLNK(mode)) return "";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

void write_through(AtomicFile& file, std::string_view contents) {
  file.write(contents.data(), contents.size());
  file.commit();
}

}  // namespace

std::string partial_path(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".partial")).string();
}

void check_replaceable(const std::string& path, const std::string& option) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;  // nothing there yet, or unreadable: open says
  const std::string kind = special_node_kind(info.st_mode);
  LLMFT_REQUIRE(kind.empty(),
                (option.empty() ? "" : option + " ")
                    << path << " is " << kind
                    << "; llmft replaces an output by renaming a finished file over "
                       "it, which would destroy that node: give a regular file's path");
}

AtomicFile::AtomicFile(std::string path) : AtomicFile(path, partial_path(path)) {}

AtomicFile::AtomicFile(std::string path, std::string temp_path)
    : path_(std::move(path)), temp_path_(std::move(temp_path)) {
  LLMFT_REQUIRE(!path_.empty(), "cannot write a file with an empty path");
  check_replaceable(path_);
  file_ = std::fopen(temp_path_.c_str(), "wb");
  LLMFT_REQUIRE(file_ != nullptr, "cannot create " << temp_path_ << " (to write " << path_
                                                   << "): " << errno_text()
                                                   << "; check that the directory exists and is "
                                                      "writable");
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!published_) std::remove(temp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t size) {
  LLMFT_REQUIRE(!finished_, "cannot write to " << path_ << ": it was already finished");
  if (size == 0) return;
  LLMFT_REQUIRE(std::fwrite(data, 1, size, file_) == size,
                "cannot write " << size << " bytes to " << temp_path_ << ": " << errno_text()
                                << "; check free disk space");
}

void AtomicFile::finish() {
  LLMFT_REQUIRE(!finished_, "cannot finish " << path_ << " twice");
  finished_ = true;
  bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  std::string flush_error = flushed ? "" : errno_text();
  bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  LLMFT_REQUIRE(flushed, "cannot flush " << temp_path_ << " to disk: " << flush_error
                                         << "; check free disk space");
  LLMFT_REQUIRE(closed, "cannot close " << temp_path_ << ": " << errno_text());
}

void AtomicFile::publish() {
  LLMFT_REQUIRE(finished_ && !published_,
                "cannot publish " << path_ << ": it is unfinished or already published");
  LLMFT_REQUIRE(std::rename(temp_path_.c_str(), path_.c_str()) == 0,
                "cannot rename " << temp_path_ << " to " << path_ << ": " << errno_text());
  published_ = true;
  sync_parent_directory(path_);
}

void AtomicFile::commit() {
  finish();
  publish();
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  write_through(file, contents);
}

void write_shared_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path, shared_partial_path(path));
  write_through(file, contents);
}

}  // namespace llmft::io
