// Decoding with the KV cache gives the logits of a full forward over the whole sequence,
// for both families (learned positions and rotary embeddings), in f32 and bf16 storage;
// the logits of the last positions alone (what generation samples from) are those rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;
using testing::family_config;
using testing::random_tokens;

TEST_CASE("KV-cache decoding matches a full forward at every position") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      CAPTURE(std::string(family_name(family)));
      CAPTURE(std::string(dtype_name(dtype)));
      const ModelConfig c = family_config(family, {41, 24, 24, 2, 4, 0, 40});
      EngineOptions o;
      o.dtype = dtype;
      o.trainable = false;
      testing::TestTrainer t(c, o);
      Engine& engine = *t.engine;
      Model* model = t.model.get();
      std::mt19937_64 rng(4);
      const int B = 2, prompt = 5, total = 11;
      const std::vector<int32_t> tokens = random_tokens(B * total, c.vocab_size, rng);

      // Reference: one full forward over all `total` positions.
      const std::vector<float> full =
          engine.logits(MicroBatch{B, total, tokens.data(), nullptr, 0});
      // Cached: the prompt at once, then one position at a time.
      model->begin_decoding(B, total);
      std::vector<std::vector<float>> steps;
      std::vector<int32_t> chunk(B * prompt);
      for (int b = 0; b < B; ++b) {
        std::copy_n(tokens.begin() + b * total, prompt, chunk.begin() + b * prompt);
      }
      steps.push_back(engine.logits(MicroBatch{B, prompt, chunk.data(), nullptr, 0}));
      for (int pos = prompt; pos < total; ++pos) {
        std::vector<int32_t> one = {tokens[pos], tokens[total + pos]};
        steps.push_back(engine.logits(MicroBatch{B, 1, one.data(), nullptr, pos}));
      }
      model->end_decoding();

      const int V = c.vocab_size;
      double worst = 0;
      for (int b = 0; b < B; ++b) {
        for (int pos = 0; pos < total; ++pos) {
          const float* expected = full.data() + (b * total + pos) * V;
          const float* got = pos < prompt ? steps[0].data() + (b * prompt + pos) * V
                                          : steps[pos - prompt + 1].data() + b * V;
          for (int v = 0; v < V; ++v)
            worst = std::max(worst, double(std::fabs(got[v] - expected[v])));
        }
      }
      // The same sums, but the decoding steps multiply one row at a time, which the BLAS
      // kernel may block (or run as a matrix-vector product) differently from 11 rows:
      // each of the two blocks' sums of 32-64 terms may add in another order, ~1e-7 on
      // logits of size ~1 (tests/support/parity.h); 1e-5 absolute is 100x that.
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("the last positions' logits are the last rows of every position's") {
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    CAPTURE(std::string(family_name(family)));
    const ModelConfig c = family_config(family, {41, 24, 24, 2, 4, 0, 40});
    EngineOptions o;
    o.trainable = false;
    testing::TestTrainer t(c, o);
    Engine& engine = *t.engine;
    std::mt19937_64 rng(5);
    const int B = 2, T = 7, V = c.vocab_size;
    const std::vector<int32_t> tokens = random_tokens(B * T, c.vocab_size, rng);
    const MicroBatch batch{B, T, tokens.data(), nullptr, 0};
    const std::vector<float> every = engine.logits(batch, LogitRows::every);
    const std::vector<float> last = engine.logits(batch, LogitRows::last);
    REQUIRE(every.size() == static_cast<size_t>(B * T * V));
    REQUIRE(last.size() == static_cast<size_t>(B * V));
    double worst = 0;
    for (int b = 0; b < B; ++b) {
      for (int v = 0; v < V; ++v) {
        const float expected = every[static_cast<size_t>((b * T + T - 1) * V + v)];
        worst = std::max(worst, double(std::fabs(last[static_cast<size_t>(b * V + v)] - expected)));
      }
    }
    // The same sums; the LM head's product over 2 rows may block differently from 14
    // (the bound of the test above).
    CHECK(worst < 1e-5);
  }
}
