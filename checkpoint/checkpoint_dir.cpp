#include "checkpoint/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace llmft {
namespace {

namespace fs = std::filesystem;

std::string step_name(int64_t step) {
  char name[40];
  std::snprintf(name, sizeof(name), "step_%08lld.h5", static_cast<long long>(step));
  return name;
}

// "step_" + 8 to 18 digits (a step that fits int64_t) + ".h5".
bool is_checkpoint_name(const std::string& name) {
  if (name.size() < 16 || name.size() > 26 || name.rfind("step_", 0) != 0) return false;
  if (name.compare(name.size() - 3, 3, ".h5") != 0) return false;
  const std::string digits = name.substr(5, name.size() - 8);
  return std::all_of(digits.begin(), digits.end(), ::isdigit);
}

// fsync on a path opened read-only (a file or a directory).
void sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  LLMFT_REQUIRE(fd >= 0, "cannot open " << path << " to flush it: " << std::strerror(errno));
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  LLMFT_REQUIRE(synced == 0, "cannot flush " << path << " to disk: " << std::strerror(error)
                                             << " (is the disk full?)");
}

}  // namespace

std::string checkpoint_path(const std::string& dir, int64_t step) {
  return (fs::path(dir) / step_name(step)).string();
}

std::string partial_checkpoint_path(const std::string& dir, int64_t step) {
  return (fs::path(dir) / ("." + step_name(step) + ".partial")).string();
}

std::vector<std::string> checkpoints_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code type_error;
    if (entry.is_regular_file(type_error) && is_checkpoint_name(name)) names.push_back(name);
  }
  // Zero-padded steps sort by name; a step beyond 8 digits is longer and sorts after.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back((fs::path(dir) / name).string());
  return paths;
}

void remove_partial_checkpoints(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 9 && name[0] == '.' && name.compare(name.size() - 8, 8, ".partial") == 0 &&
        is_checkpoint_name(name.substr(1, name.size() - 9))) {
      fs::remove(entry.path(), ec);
    }
  }
}

void publish_checkpoint(const std::string& partial, const std::string& final_path) {
  sync_path(partial);
  std::error_code ec;
  fs::rename(partial, final_path, ec);
  LLMFT_REQUIRE(!ec, "cannot rename the checkpoint " << partial << " to " << final_path << ": "
                                                     << ec.message());
  sync_path(fs::path(final_path).parent_path().string());
}

int64_t checkpoint_step(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return std::stoll(name.substr(5, name.size() - 8));
}

void prune_checkpoints(const std::string& dir, int keep, int64_t verified_before) {
  if (keep <= 0) return;
  std::vector<std::string> verified;
  for (const std::string& path : checkpoints_in(dir)) {
    if (checkpoint_step(path) < verified_before) verified.push_back(path);
  }
  std::error_code ec;
  for (size_t i = 0; i + keep < verified.size(); ++i) fs::remove(verified[i], ec);
}

std::vector<std::string> set_aside_checkpoints(const std::string& dir, int64_t from_step) {
  std::vector<std::string> set_aside;
  for (const std::string& path : checkpoints_in(dir)) {
    if (checkpoint_step(path) < from_step) continue;
    const std::string renamed = path + ".diverged";
    std::error_code ec;
    fs::rename(path, renamed, ec);
    LLMFT_REQUIRE(!ec, "cannot set aside the checkpoint " << path << " of a diverged state as "
                                                          << renamed << ": " << ec.message()
                                                          << "; remove it by hand");
    set_aside.push_back(renamed);
  }
  return set_aside;
}

}  // namespace llmft
