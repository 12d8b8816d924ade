// Next-token sampling from logits: temperature, top-k, and greedy when temperature is 0.
#pragma once

#include <random>
#include <vector>

namespace llmft {

// REQUIRES: !logits.empty(), temperature finite and >= 0, top_k >= 0 (0 = whole vocabulary)
int sample_token(const std::vector<float>& logits, float temperature, int top_k,
                 std::mt19937_64& rng);

}  // namespace llmft
