#include "launch/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmft {

int sample_token(const std::vector<float>& logits, float temperature, int top_k,
                 std::mt19937_64& rng) {
  const int V = static_cast<int>(logits.size());
  if (temperature == 0.0f) {
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  std::vector<int> order(V);
  std::iota(order.begin(), order.end(), 0);
  const int k = top_k > 0 ? std::min(top_k, V) : V;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> weights(k);
  const double top = logits[order[0]];
  for (int i = 0; i < k; ++i) weights[i] = std::exp((logits[order[i]] - top) / temperature);
  // The draw uses the raw 64-bit stream so samples do not depend on the standard library.
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double target = static_cast<double>(rng() >> 11) * 0x1.0p-53 * total;
  for (int i = 0; i < k; ++i) {
    target -= weights[i];
    if (target < 0) return order[i];
  }
  return order[k - 1];
}

}  // namespace llmft
