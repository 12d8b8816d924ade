// AtomicFile: writes a file so that readers only ever see the old contents or the
// complete new ones. Bytes go to "<path>.tmp.<pid>"; commit() flushes, fsyncs and
// renames it over `path`. Destroying an AtomicFile that was not committed removes the
// temp file, so a failed run never leaves a partial output behind.
//
// Thread-safety: not thread-safe; one thread writes one AtomicFile. Different
// processes (MPI ranks) may write the same path: their temp names differ by pid.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace llmft::io {

class AtomicFile {
 public:
  // Creates the temp file next to `path`. Throws llmft::Error naming it and errno.
  explicit AtomicFile(std::string path);
  ~AtomicFile();

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Throws llmft::Error naming the temp file and errno.
  // REQUIRES: commit() has not been called
  void write(const void* data, size_t size);

  // Makes the written bytes visible at `path`. Throws llmft::Error naming the path
  // and errno; the temp file is then removed by the destructor.
  // REQUIRES: commit() has not been called
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// Replaces the file at `path` with `contents`, atomically as AtomicFile does.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace llmft::io
