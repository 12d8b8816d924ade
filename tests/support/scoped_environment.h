// ScopedEnvironment: sets an environment variable while it lives (the CUDA backend reads
// LLMFT_CUDNN_ATTENTION when it is made), then restores what was there.
#pragma once

#include <cstdlib>
#include <string>

namespace llmft {

class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    const char* before = std::getenv(name);
    had_value_ = before != nullptr;
    if (had_value_) saved_ = before;
    ::setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (had_value_) {
      ::setenv(name_, saved_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  bool had_value_ = false;
  std::string saved_;
};

}  // namespace llmft
