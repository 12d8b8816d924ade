// MetricsWriter: appends one JSON object per line (JSONL) to a metrics file, e.g.
//   {"step":10,"loss":2.31,"lr":0.0003,"tokens_per_s":5120}
// Each line is flushed as it is written, so a crash loses at most the line being
// written. An existing file is appended to, so a resumed run continues its log.
// A writer made with an empty path is disabled and write() does nothing.
//
// Thread-safety: not thread-safe; one thread (usually rank 0's) writes.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "io/json.h"

namespace llmft::io {

class MetricsWriter {
 public:
  // Opens `path` for appending; an empty path makes a disabled writer.
  // Throws llmft::Error naming the path and errno if it cannot be opened.
  explicit MetricsWriter(const std::string& path);

  bool enabled() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }

  // Appends object.dump() and a newline, then flushes. Metrics are not worth a run: when
  // the write fails (a full disk), it prints one warning naming the path and errno to
  // stderr, cuts the file back to its last whole line, and disables the writer; training
  // goes on.
  // REQUIRES: object.is_object()
  void write(const Json& object);

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace llmft::io
