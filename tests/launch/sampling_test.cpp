// Sampling (launch/sampling.h): the tokens top-k and top-p keep, after temperature, on a
// known distribution, against transformers' TemperatureLogitsWarper, TopKLogitsWarper and
// TopPLogitsWarper (their kept sets, computed once with transformers and by hand:
// probabilities 0.15, 0.5, 0.1, 0.25; at temperature 2 they are 0.203, 0.370, 0.166, 0.262).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "launch/sampling.h"

namespace llmft {
namespace {

std::vector<float> known_logits() {
  return {std::log(0.15f), std::log(0.5f), std::log(0.1f), std::log(0.25f)};
}

std::vector<int> kept(float temperature, int top_k, float top_p) {
  std::vector<int> tokens;
  for (const Candidate& c : sampling_candidates(known_logits(), {temperature, top_k, top_p})) {
    tokens.push_back(c.token);
  }
  return tokens;
}

TEST_CASE("top-p keeps the fewest likeliest tokens whose probability reaches p") {
  CHECK(kept(1, 0, 0.3f) == std::vector<int>{1});
  CHECK(kept(1, 0, 0.6f) == std::vector<int>{1, 3});
  CHECK(kept(1, 0, 0.8f) == std::vector<int>{1, 3, 0});
  CHECK(kept(1, 0, 0.95f) == std::vector<int>{1, 3, 0, 2});
  CHECK(kept(1, 0, 1.0f) == std::vector<int>{1, 3, 0, 2});
}

TEST_CASE("top-p applies after temperature and over what top-k kept, renormalised") {
  // Top-k 2 leaves 0.5 and 0.25, i.e. 2/3 and 1/3: p = 0.6 keeps the first alone.
  CHECK(kept(1, 2, 0.6f) == std::vector<int>{1});
  // Temperature 2 flattens: 0.370 + 0.262 = 0.632 is below 0.65 but not below 0.6.
  CHECK(kept(2, 0, 0.6f) == std::vector<int>{1, 3});
  CHECK(kept(2, 0, 0.65f) == std::vector<int>{1, 3, 0});
}

TEST_CASE("candidate weights are exp((logit - max) / temperature)") {
  const std::vector<Candidate> c = sampling_candidates(known_logits(), {2.0f, 0, 1.0f});
  REQUIRE(c.size() == 4);
  // float logits of log(p) are off by at most half an ulp (~6e-8 relative): 1e-6 covers it.
  CHECK(c[0].weight == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(c[1].weight == doctest::Approx(std::sqrt(0.25 / 0.5)).epsilon(1e-6));
  CHECK(c[3].weight == doctest::Approx(std::sqrt(0.1 / 0.5)).epsilon(1e-6));
}

TEST_CASE("sampling draws only kept tokens; temperature 0 is greedy") {
  std::mt19937_64 rng(7);
  std::set<int> drawn;
  for (int i = 0; i < 2000; ++i) drawn.insert(sample_token(known_logits(), {1.0f, 0, 0.6f}, rng));
  CHECK(drawn == std::set<int>{1, 3});  // 2000 draws of 2/3 and 1/3 miss one with p < 1e-350
  CHECK(sample_token(known_logits(), {0.0f, 0, 0.3f}, rng) == 1);
}

}  // namespace
}  // namespace llmft
