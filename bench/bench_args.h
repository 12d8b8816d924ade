// What the benchmark programs share: `--name value` arguments over a table of defaults,
// a wall clock, and running a Python peer that prints one JSON line.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/micro_batch.h"
#include "io/json.h"

namespace llmft::bench {

using Args = std::map<std::string, std::string>;
using Clock = std::chrono::steady_clock;

// Wall seconds from `start` to now (benchmarks of host work, or after a synchronize).
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The fastest of `repeats` runs of `work`, each after an untimed `prepare`.
template <typename Prepare, typename Work>
double best_seconds(int repeats, Prepare prepare, Work work) {
  double best = 1e30;
  for (int rep = 0; rep < repeats; ++rep) {
    prepare();
    const Clock::time_point start = Clock::now();
    work();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

// The fastest of `repeats` runs of `work`, with nothing to prepare between them.
template <typename Work>
double best_seconds(int repeats, Work work) {
  const auto nothing = [] {};
  return best_seconds(repeats, nothing, work);
}

// `defaults` names every argument; `source` is the program's file for the error message.
inline Args parse_args(int argc, char** argv, Args defaults, const char* source) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    LLMFT_REQUIRE(key.rfind("--", 0) == 0 && defaults.count(key.substr(2)),
                  "unknown argument " << key << " (see the header of " << source << ")");
    defaults[key.substr(2)] = argv[i + 1];
  }
  return defaults;
}

// Runs `command` and parses the JSON line it prints.
inline io::Json run_peer(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  LLMFT_REQUIRE(pipe != nullptr, "cannot run the peer: " << command);
  std::string output;
  char chunk[4096];
  while (size_t n = fread(chunk, 1, sizeof(chunk), pipe)) output.append(chunk, n);
  LLMFT_REQUIRE(pclose(pipe) == 0, "the peer failed: " << command);
  return io::Json::parse(output);
}

// "1.23x faster" or "0.81x slower (...)": how a peer's step time compares with llmft's.
inline std::string peer_ratio(double peer_ms, double llmft_ms) {
  char text[96];
  std::snprintf(text, sizeof text, "llmft is %.2fx %s", peer_ms / llmft_ms,
                peer_ms > llmft_ms ? "faster" : "slower (ratio = peer / llmft time)");
  return text;
}

// `count` token ids below `vocab`, the same for a seed on every run.
inline std::vector<int32_t> random_tokens(size_t count, int vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> tokens(count);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
  return tokens;
}

// batch x seq random input tokens (seed 1) and targets (seed 2) below `vocab`, and the
// micro-batch that views them (so not copyable).
struct RandomBatch {
  RandomBatch(int batch, int seq, int vocab)
      : inputs(random_tokens(static_cast<size_t>(batch) * seq, vocab, 1)),
        targets(random_tokens(inputs.size(), vocab, 2)),
        micro_batch{batch, seq, inputs.data(), targets.data()} {}
  RandomBatch(const RandomBatch&) = delete;
  RandomBatch& operator=(const RandomBatch&) = delete;

  const std::vector<int32_t> inputs, targets;
  const MicroBatch micro_batch;
};

}  // namespace llmft::bench
