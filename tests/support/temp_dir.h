// TempDir: a fresh, empty directory for one test under the system temp directory, named
// so that no other TempDir, in this process or another, shares it, and removed with
// everything in it when the TempDir goes out of scope.
// Safe to create from several threads at once.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace llmft::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<unsigned> next_id{0};
    const std::string prefix = "llmft_test_" + std::to_string(::getpid()) + "_";
    do {
      path_ = std::filesystem::temp_directory_path() / (prefix + std::to_string(next_id++));
    } while (!std::filesystem::create_directory(path_));  // false: left by an earlier run
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // The path of the file `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes `contents` to the file `name` inside the directory; returns its path.
  std::string write(const std::string& name, const std::string& contents) const {
    const std::string path = file(name);
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace llmft::testing
