// Checks of option values that several subcommands share: seeds and thread counts.
#pragma once

#include <cstdint>
#include <string>

namespace llmft {

// A seed given as text: a decimal integer in [0, 2^64). Throws llmft::Error naming
// `option` for a sign, a fraction, trailing characters or a value past 2^64 - 1 (which a
// plain unsigned parse would wrap: "-1" would become 18446744073709551615).
uint64_t parse_seed(const std::string& text, const std::string& option);

// Throws llmft::Error naming `option` when `threads` is negative or more than the CPUs
// this machine has online (0 means all of them).
void require_thread_count(int threads, const std::string& option);

}  // namespace llmft
