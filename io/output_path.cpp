#include "io/output_path.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace llmft::io {

namespace {

// The path with every existing part resolved (symbolic links, "." and "..") and no
// trailing "/"; the path as given when even that fails.
std::filesystem::path resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return path;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) return path;
  return canonical.has_filename() ? canonical : canonical.parent_path();
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0;
  const bool b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  return resolved(a) == resolved(b);
}

void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<NamedInput>& inputs) {
  if (path.empty()) return;
  for (const NamedInput& input : inputs) {
    if (input.path.empty() || !same_file(path, input.path)) continue;
    LLMFT_FAIL(option << " " << path << " is the same file as " << input.option << " " << input.path
                      << ", which this job reads; writing " << option
                      << " there would destroy it: give " << option << " another path");
  }
}

}  // namespace llmft::io
