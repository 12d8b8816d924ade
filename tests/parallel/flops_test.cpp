// The FLOP count and the throughput every report shares (parallel/flops.h), against hand
// computation. Double arithmetic on a few operations: a plain Approx absorbs its rounding.
#include <doctest/doctest.h>

#include "parallel/flops.h"

using namespace llmft;

TEST_CASE("training FLOPs per token are 6 x matrix parameters + 12 x layers x hidden x seq") {
  ModelConfig c = preset_config("llama-7b");  // 32 layers, hidden 4096, MLP 11008, vocab 32000
  // Per block q, k, v, o (4 x 4096^2) and gate, up, down (3 x 11008 x 4096); the head
  // 32000 x 4096.
  const double matrices = 32 * (4.0 * 4096 * 4096 + 3.0 * 11008 * 4096) + 32000.0 * 4096;
  CHECK(training_flops_per_token(c, 2048) ==
        doctest::Approx(6 * matrices + 12.0 * 32 * 4096 * 2048));
}

TEST_CASE("throughput: processed tokens over the step, per device, model FLOP/s and MFU") {
  // 2048 tokens in 0.5 s on 4 devices of 1e12 FLOP/s at 3e9 FLOPs a token.
  const Throughput t = step_throughput(2048, 0.5, 3e9, 4, 1e12);
  CHECK(t.tokens_per_s == doctest::Approx(4096));
  CHECK(t.tokens_per_s_per_device == doctest::Approx(1024));
  CHECK(t.model_flops_per_s == doctest::Approx(4096 * 3e9));
  CHECK(t.mfu == doctest::Approx(4096 * 3e9 / 4e12));
  CHECK(step_throughput(2048, 0.5, 3e9, 4, 0).mfu == 0);  // no peak known: no MFU
}
