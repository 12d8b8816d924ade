// Next-token sampling: temperature, top-k, top-p, greedy (launch/sampling.h).
#include "launch/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmft {

std::vector<Candidate> sampling_candidates(const std::vector<float>& logits,
                                           const SamplingOptions& options) {
  const int V = static_cast<int>(logits.size());
  std::vector<int> order(V);
  std::iota(order.begin(), order.end(), 0);
  const int k = options.top_k > 0 ? std::min(options.top_k, V) : V;
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<Candidate> kept(k);
  const double top = logits[order[0]];
  double total = 0;
  for (int i = 0; i < k; ++i) {
    kept[i] = {order[i], std::exp((logits[order[i]] - top) / options.temperature)};
    total += kept[i].weight;
  }
  if (options.top_p >= 1.0f) return kept;
  double likelier = 0;  // the probability of the tokens before kept[i]
  size_t count = 0;
  while (count < kept.size() && likelier < options.top_p) likelier += kept[count++].weight / total;
  kept.resize(count);
  return kept;
}

int sample_token(const std::vector<float>& logits, const SamplingOptions& options,
                 std::mt19937_64& rng) {
  if (options.temperature == 0.0f) {
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  const std::vector<Candidate> candidates = sampling_candidates(logits, options);
  double total = 0;
  for (const Candidate& c : candidates) total += c.weight;
  double target = static_cast<double>(rng() >> 11) * 0x1.0p-53 * total;
  for (const Candidate& c : candidates) {
    target -= c.weight;
    if (target < 0) return c.token;
  }
  return candidates.back().token;
}

}  // namespace llmft
