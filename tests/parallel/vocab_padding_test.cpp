// A rank's vocabulary rows (token embedding, LM head) are padded to a multiple of
// DecoderModel::kVocabRowMultiple, with one rank too (core/tp_slice.h vocab_split): the
// padding belongs to no run of the whole tensor, every optimizer leaves it zero, and the
// logits a caller reads hold the real vocabulary only.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "core/decoder/decoder_model.h"
#include "core/tp_slice.h"
#include "tests/support/test_models.h"
#include "tests/support/test_trainer.h"

using namespace llmft;

TEST_CASE("a rank's vocabulary rows are its share padded to the row multiple") {
  constexpr int64_t kMultiple = DecoderModel::kVocabRowMultiple;
  const ModelConfig gpt2 = preset_config("gpt2");  // 50257 entries, hidden 768
  struct Case {
    int ranks;
    int64_t rows;  // a rank's: ceil(50257 / ranks) up to a multiple of 64
  };
  for (const Case& k : {Case{1, 50304}, Case{2, 25152}, Case{8, 6336}}) {
    CAPTURE(k.ranks);
    int64_t real = 0;
    for (int rank = 0; rank < k.ranks; ++rank) {
      const TpSlice slice{rank, k.ranks};
      const ParamInfo p = unit_layouts(gpt2, slice, kMultiple)[0].params[0];
      CHECK(p.shape == Shape{k.rows, 768});
      CHECK(p.full_shape == Shape{50257, 768});
      for (const TpRun& run : tp_runs(p, slice)) {
        CHECK(run.full == rank * k.rows * 768);  // the rank's rows start its share
        real += run.count;
      }
    }
    CHECK(real == 50257 * 768);  // every real row once, no padding row
  }
  // The whole model's layout (Hugging Face shapes) has none.
  CHECK(unit_layouts(gpt2)[0].params[0].shape == Shape{50257, 768});
}

TEST_CASE("training leaves the vocabulary's padding rows zero and logits unpadded") {
  // 61 entries: 3 padding rows on one rank. GPT-2 ties the head to the embedding; LLaMA
  // has its own head, the head unit's last parameter.
  for (const ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    for (const OptimizerKind kind :
         {OptimizerKind::adamw, OptimizerKind::sgd, OptimizerKind::lomo, OptimizerKind::adalomo}) {
      CAPTURE(std::string(family_name(family)));
      CAPTURE(std::string(optimizer_kind_name(kind)));
      const ModelConfig c = testing::family_config(family, {61, 16, 16, 2, 2, 0, 32});
      testing::TestTrainer t(c, testing::parity_options(kind, 4));
      std::mt19937_64 rng(3);
      const int B = 2, T = 12;
      for (int step = 1; step <= 3; ++step) {
        const auto inputs = testing::random_tokens(B * T, c.vocab_size, rng);
        const auto targets = testing::random_tokens(B * T, c.vocab_size, rng);
        t.engine->train_step({MicroBatch{B, T, inputs.data(), targets.data()}}, step);
      }
      const auto& units = t.model->units();
      std::vector<std::pair<int, int>> vocabulary_params = {{0, 0}};
      if (family == ModelFamily::llama) {
        const int head = static_cast<int>(units.size()) - 1;
        vocabulary_params.push_back({head, static_cast<int>(units[head].params.size()) - 1});
      }
      for (const auto& [unit, index] : vocabulary_params) {
        const ParamInfo& p = units[unit].params[index];
        REQUIRE(p.shape[0] == 64);
        const std::vector<float> values = t.engine->read_params(unit);
        // LOMO and AdaLomo keep no gradients between steps.
        const bool fused = kind == OptimizerKind::lomo || kind == OptimizerKind::adalomo;
        std::vector<float> grads = fused ? std::vector<float>() : t.engine->read_grads(unit);
        grads.resize(values.size(), 0.0f);
        int64_t nonzero = 0;
        for (int64_t i = p.offset + c.vocab_size * c.hidden; i < p.offset + p.numel(); ++i) {
          nonzero += values[i] != 0.0f || grads[i] != 0.0f;
        }
        CHECK(nonzero == 0);
      }
      // The logits read back are (B, T, V): their log-softmax at the targets gives the
      // engine's own loss (f32 sums of 61 terms in another order: 1e-5 relative).
      const auto inputs = testing::random_tokens(B * T, c.vocab_size, rng);
      const auto targets = testing::random_tokens(B * T, c.vocab_size, rng);
      const std::vector<float> logits = t.engine->logits(MicroBatch{B, T, inputs.data(), nullptr});
      REQUIRE(logits.size() == static_cast<size_t>(B * T * c.vocab_size));
      double loss = 0;
      for (int n = 0; n < B * T; ++n) {
        const float* row = logits.data() + n * c.vocab_size;
        double largest = row[0], sum = 0;
        for (int v = 1; v < c.vocab_size; ++v) largest = std::max<double>(largest, row[v]);
        for (int v = 0; v < c.vocab_size; ++v) sum += std::exp(row[v] - largest);
        loss += std::log(sum) + largest - row[targets[n]];
      }
      loss /= B * T;
      const double engine_loss =
          t.engine->evaluate({MicroBatch{B, T, inputs.data(), targets.data()}});
      CHECK(std::fabs(loss - engine_loss) < 1e-5 * std::fabs(engine_loss));
    }
  }
}
