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
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t index = static_cast<uint64_t>(begin + i);
    double u1 = unit_uniform(splitmix64(key + 2 * index));
    double u2 = unit_uniform(splitmix64(key + 2 * index + 1));
    double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    out[i] = static_cast<float>(normal * p.init_std);
  }
}

}  // namespace llmft
