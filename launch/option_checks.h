// Checks of option values that several subcommands share: seeds, checkpointed blocks and
// thread counts.
#pragma once

#include <cstdint>
#include <string>

namespace llmft {

// A seed given as text: a decimal integer in [0, 2^64). Throws llmft::Error naming
// `option` for a sign, a fraction, trailing characters or a value past 2^64 - 1 (which a
// plain unsigned parse would wrap: "-1" would become 18446744073709551615).
uint64_t parse_seed(const std::string& text, const std::string& option);

// The blocks an --activation-checkpointing value checkpoints: "all" (or "on"): every one
// (core/model.h's ModelOptions::kAllBlocks), "none" (or "off"): 0, or a count K >= 0 of
// the first blocks. Throws llmft::Error naming `option` otherwise.
int parse_checkpointed_blocks(const std::string& value, const std::string& option);

// The blocks of a model of `blocks` blocks that an --activation-checkpointing value
// checkpoints: all of them for "all", else the count, which must not exceed `blocks`.
// Throws llmft::Error naming `option`, the model's blocks and the range otherwise.
int checkpointed_blocks_of(const std::string& value, int blocks, const std::string& option);

// Throws llmft::Error naming `option` when `threads` is negative or more than the CPUs
// this machine has online (0 means all of them).
void require_thread_count(int threads, const std::string& option);

}  // namespace llmft
