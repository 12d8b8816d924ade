// Next-token sampling from logits as transformers' sampling does it: temperature, then
// top-k, then top-p (nucleus) over what top-k kept; greedy when the temperature is 0.
#pragma once

#include <random>
#include <vector>

namespace llmft {

struct SamplingOptions {
  float temperature = 0.8f;  // 0 = greedy (the first likeliest token)
  int top_k = 40;            // the k likeliest (0 = the whole vocabulary)
  float top_p = 1.0f;        // the fewest likeliest whose probability reaches p (1 = all)
};

// A token the sampler may draw and its unnormalised weight exp((logit - max) / temperature).
struct Candidate {
  int token = 0;
  double weight = 0;
};

// The tokens sampling may draw, likeliest first (ties: the lower id first), with their
// weights. Top-p keeps a token while the probability of the likelier ones (renormalised
// over top-k's) is below p, so it always keeps the likeliest, as transformers'
// TopPLogitsWarper does.
// REQUIRES: !logits.empty(), temperature finite and > 0, top_k >= 0, 0 < top_p <= 1
std::vector<Candidate> sampling_candidates(const std::vector<float>& logits,
                                           const SamplingOptions& options);

// One token: the greedy choice at temperature 0, else a draw from sampling_candidates.
// The draw uses the raw 64-bit stream, so a seed gives the same tokens with any
// standard library.
// REQUIRES: as sampling_candidates, with temperature >= 0
int sample_token(const std::vector<float>& logits, const SamplingOptions& options,
                 std::mt19937_64& rng);

}  // namespace llmft
