// io/subprocess.h with real programs: a child that echoes more than a pipe holds while it
// is still being fed (the exchange must not deadlock), exit codes and stderr, a program
// that cannot start, and a child stopped at its timeout.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "core/error.h"
#include "io/subprocess.h"

using llmft::Error;
using llmft::io::run_subprocess;

TEST_CASE("a child echoing 8 MiB while it is fed gets all of it back") {
  // Far beyond a pipe's 64 KiB: cat writes its output back while we still write its input.
  std::string input(8u << 20, '\0');
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>('a' + i % 26);
  const auto result = run_subprocess({"cat"}, input, 60);
  CHECK(result.exit_status == 0);
  CHECK(result.out == input);
  CHECK(result.err.empty());
}

TEST_CASE("a child's exit code and stderr are returned") {
  const auto result = run_subprocess({"sh", "-c", "echo to-err >&2; echo to-out; exit 3"}, "", 60);
  CHECK(result.exit_status == 3);
  CHECK(result.out == "to-out\n");
  CHECK(result.err == "to-err\n");
}

TEST_CASE("a program that cannot start is an error naming it") {
  CHECK_THROWS_WITH_AS(run_subprocess({"llmft-no-such-program"}, "", 60),
                       doctest::Contains("llmft-no-such-program"), Error);
}

TEST_CASE("a child past its timeout is stopped and named") {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(run_subprocess({"sleep", "30"}, "", 0.3),
                       doctest::Contains("'sleep' did not finish within 0.3 s"), Error);
  // Stopped, not waited for: well under the 30 s it would sleep.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}
