// What the benchmark programs share: `--name value` arguments over a table of defaults,
// and running a Python peer that prints one JSON line.
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "core/error.h"
#include "io/json.h"

namespace llmft::bench {

using Args = std::map<std::string, std::string>;

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

}  // namespace llmft::bench
