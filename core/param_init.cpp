#include "core/param_init.h"

#include <cmath>

namespace llmft {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Uniform in (0, 1], from the top 53 bits.
double unit_uniform(uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53;
}

}  // namespace

void initial_values(const ParamInfo& p, uint64_t seed, int64_t begin, int64_t count, float* out) {
  if (p.init_std == 0.0f) {
    for (int64_t i = 0; i < count; ++i) out[i] = p.init_value;
    return;
  }
  const uint64_t key = splitmix64(seed ^ fnv1a(p.name));
  constexpr double kTwoPi = 6.283185307179586;
  // Box-Muller turns the uniform pair k into the normals of elements 2k (cos) and 2k + 1
  // (sin), so an element's value depends on its index alone.
  const int64_t first_pair = begin / 2, last_pair = (begin + count - 1) / 2;
#pragma omp parallel for schedule(static)
  for (int64_t pair = first_pair; pair <= last_pair; ++pair) {
    const uint64_t k = static_cast<uint64_t>(pair);
    const double radius = std::sqrt(-2.0 * std::log(unit_uniform(splitmix64(key + 2 * k))));
    const double angle = kTwoPi * unit_uniform(splitmix64(key + 2 * k + 1));
    const int64_t even = 2 * pair, odd = even + 1;
    if (even >= begin && even < begin + count) {
      out[even - begin] = static_cast<float>(radius * std::cos(angle) * p.init_std);
    }
    if (odd >= begin && odd < begin + count) {
      out[odd - begin] = static_cast<float>(radius * std::sin(angle) * p.init_std);
    }
  }
}

}  // namespace llmft
