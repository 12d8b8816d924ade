#include "launch/option_checks.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "core/error.h"
#include "core/model.h"

namespace llmft {

uint64_t parse_seed(const std::string& text, const std::string& option) {
  const bool digits = !text.empty() && text.size() <= 20 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  uint64_t value = 0;
  bool in_range = digits;
  for (size_t i = 0; in_range && i < text.size(); ++i) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    in_range = value <= (UINT64_MAX - digit) / 10;
    value = value * 10 + digit;
  }
  LLMFT_REQUIRE(in_range, option << " " << text << ": a seed is a whole number from 0 to "
                                 << UINT64_MAX << ", without a sign");
  return value;
}

int parse_checkpointed_blocks(const std::string& value, const std::string& option) {
  if (value == "all" || value == "on") return ModelOptions::kAllBlocks;
  if (value == "none" || value == "off") return 0;
  const bool digits = !value.empty() && value.size() <= 9 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  LLMFT_REQUIRE(digits, option << " " << value
                               << ": give all, none, or how many of the first blocks to "
                                  "checkpoint (a whole number from 0 to the model's blocks)");
  return std::stoi(value);
}

int checkpointed_blocks_of(const std::string& value, int blocks, const std::string& option) {
  const int checkpointed = parse_checkpointed_blocks(value, option);
  LLMFT_REQUIRE(checkpointed == ModelOptions::kAllBlocks || checkpointed <= blocks,
                option << " " << value << ": the model has " << blocks << " blocks; give 0 to "
                       << blocks << ", or all");
  return std::min(checkpointed, blocks);
}

void require_thread_count(int threads, const std::string& option) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  LLMFT_REQUIRE(threads >= 0 && static_cast<unsigned>(threads) <= cpus,
                option << " " << threads << ": this machine has " << cpus
                       << " CPUs online; use 1 to " << cpus << ", or 0 for all of them");
}

}  // namespace llmft
