// ScratchDir: a private temporary directory for one fuzzing process, removed at exit.
// The readers under fuzz take paths, so each input is written to a file here first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llmft::fuzz {

class ScratchDir {
 public:
  // The process's directory, created under $TMPDIR (or /tmp) on first use.
  static ScratchDir& get();

  // Writes `size` bytes at `data` to the file `name` in the directory, replacing it,
  // and returns its path.
  std::string write(const std::string& name, const uint8_t* data, size_t size) const;
  std::string path(const std::string& name) const;

  ~ScratchDir();

 private:
  ScratchDir();
  std::string dir_;
};

}  // namespace llmft::fuzz
