// Parallel sums whose result depends neither on the number of OpenMP threads nor on how
// the work is scheduled: [0, n) is cut into chunks of a fixed length, any thread computes
// a chunk's partial sum, and the partials are added in chunk order. (An OpenMP
// `reduction` clause adds its per-thread partials in an unspecified order, so its result
// changes with the thread count and can change from run to run.)
#pragma once

#include <cstdint>
#include <vector>

namespace llmft::cpu {

// The sum over chunks [b, min(b + chunk, n)), b = 0, chunk, 2 chunk, ..., of
// partial(b, e), added in that order to a value-initialised Value (any type with +=).
// REQUIRES: chunk > 0; partial is safe to call from several threads at once.
template <typename Value, typename Partial>
Value ordered_sum(int64_t n, int64_t chunk, Partial partial) {
  const int64_t chunks = n > 0 ? (n + chunk - 1) / chunk : 0;
  std::vector<Value> partials(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * chunk;
    partials[c] = partial(begin, begin + chunk < n ? begin + chunk : n);
  }
  Value total{};
  for (const Value& p : partials) total += p;
  return total;
}

}  // namespace llmft::cpu
