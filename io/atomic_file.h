// AtomicFile: writes a file so that readers only ever see the old contents or the
// complete new ones. Bytes go to the hidden temp file ".<name>.partial" beside `path`;
// commit() flushes, fsyncs and renames it over `path`. Destroying an AtomicFile that was
// not committed removes the temp file, so a failed run never leaves a partial output
// behind, and a process killed mid-write leaves one temp file of a fixed name that the next
// write of the same path replaces (and that a directory's writer may sweep: HfModelWriter).
//
// Thread-safety: not thread-safe; one thread writes one AtomicFile, and one process writes
// a given path at a time (llmft writes each output from one rank), except through
// write_shared_file_atomically.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace llmft::io {

// The temp name AtomicFile writes `path` under: ".<filename>.partial" in the same directory.
std::string partial_path(const std::string& path);

// Throws llmft::Error, naming `option` (when not empty) and `path`, when something other
// than a regular file or a symbolic link is at `path` (a device such as /dev/null, a FIFO,
// a socket, a directory): renaming a finished file over it would destroy that node.
void check_replaceable(const std::string& path, const std::string& option = "");

class AtomicFile {
 public:
  // Creates (or truncates) the temp file next to `path`. Throws llmft::Error naming it and
  // errno, or, before creating anything, when `path` is not replaceable (check_replaceable).
  explicit AtomicFile(std::string path);
  // The same, through the temp file `temp_path` (in the directory of `path`).
  AtomicFile(std::string path, std::string temp_path);
  ~AtomicFile();

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Throws llmft::Error naming the temp file and errno.
  // REQUIRES: finish() has not been called
  void write(const void* data, size_t size);

  // Makes the written bytes durable in the temp file and closes it, without publishing
  // them: a writer of several files finishes each as it completes and publishes them all
  // at the end. Throws llmft::Error naming the temp file and errno.
  // REQUIRES: finish() has not been called
  void finish();
  // Renames the finished temp file over `path`. Throws llmft::Error naming both.
  // REQUIRES: finish() has been called, publish() has not
  void publish();
  // finish(), then publish().
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool finished_ = false;
  bool published_ = false;
};

// Replaces the file at `path` with `contents`, atomically as AtomicFile does.
void write_file_atomically(const std::string& path, std::string_view contents);

// The same for a file that several processes may replace at once (the calibration cache in
// a home directory that every job of a cluster shares): the temp file's name also carries
// the host, the process and a count, ".<name>.<host>.<pid>.<n>.partial", so each writer
// renames a complete file of its own and the last rename wins.
void write_shared_file_atomically(const std::string& path, std::string_view contents);

}  // namespace llmft::io
