#include "io/metrics.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace llmft::io {

MetricsWriter::MetricsWriter(const std::string& path) : path_(path) {
  if (path_.empty()) return;
  file_.reset(std::fopen(path_.c_str(), "a"));
  LLMFT_REQUIRE(file_ != nullptr, "cannot open metrics file " << path_ << ": "
                                                              << std::strerror(errno)
                                                              << "; check that the directory "
                                                                 "exists and is writable");
}

void MetricsWriter::write(const Json& object) {
  LLMFT_REQUIRE(object.is_object(), "metrics line for " << path_ << " must be a JSON object, got "
                                                        << Json::kind_name(object.kind()));
  if (!enabled()) return;
  std::string line = object.dump();
  line.push_back('\n');
  // Every earlier line was flushed, so the file's size is where this line starts.
  struct stat before {};
  const bool sized = ::fstat(::fileno(file_.get()), &before) == 0;
  const bool written = std::fwrite(line.data(), 1, line.size(), file_.get()) == line.size() &&
                       std::fflush(file_.get()) == 0;
  if (written) return;
  const int error = errno;
  std::fprintf(stderr,
               "warning: cannot write to metrics file %s: %s; training goes on without "
               "metrics (free disk space for the next run)\n",
               path_.c_str(), std::strerror(error));
  file_.reset();
  if (sized) ::truncate(path_.c_str(), before.st_size);
}

}  // namespace llmft::io
