// Runs a program as a child process without a shell (posix_spawnp), feeding it bytes on
// stdin and collecting its stdout and stderr through pipes; nothing touches the disk.
// Safe to call from several threads at once.
#pragma once

#include <string>
#include <vector>

namespace llmft::io {

struct SubprocessResult {
  int exit_status = 0;  // the exit code, or 128 + the signal that ended it
  std::string out;      // all it wrote to stdout
  std::string err;      // all it wrote to stderr
};

// Runs argv[0] (looked up in PATH when it has no '/') with arguments argv[1...], writes
// `input` to its stdin and closes it, and waits for it to end. A child that stops reading
// its stdin early is not an error here (its exit status tells).
// Throws llmft::Error naming argv[0] when it cannot be started (not found, not
// executable), on a pipe error, and when it has not ended `timeout_seconds` after it
// started; a child still running when run_subprocess throws is killed and reaped.
// REQUIRES: !argv.empty(), timeout_seconds > 0
SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input,
                                double timeout_seconds);

}  // namespace llmft::io
