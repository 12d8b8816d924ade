#include "io/metrics.h"

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
  bool written = std::fwrite(line.data(), 1, line.size(), file_.get()) == line.size() &&
                 std::fflush(file_.get()) == 0;
  LLMFT_REQUIRE(written, "cannot write to metrics file " << path_ << ": " << std::strerror(errno)
                                                         << "; check free disk space");
}

}  // namespace llmft::io
