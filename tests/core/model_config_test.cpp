// Presets (their parameter counts are the published models') and the config checks.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/model_config.h"

namespace llmft {
namespace {

TEST_CASE("Llama 3 presets have the published parameter counts") {
  CHECK(parameter_count(preset_config("llama3-8b")) == 8030261248);
  CHECK(parameter_count(preset_config("llama3.2-1b")) == 1235814400);
  CHECK(parameter_count(preset_config("llama3.2-3b")) == 3212749824);
}

TEST_CASE("Llama 3 presets: vocabulary, theta, scaling, tying and special tokens") {
  const ModelConfig l3 = preset_config("llama3-8b");
  CHECK(l3.vocab_size == 128256);
  CHECK(l3.rope_theta == 500000.0f);
  CHECK(l3.max_seq_len == 8192);
  CHECK(l3.rope_scaling.type == RopeType::unscaled);
  CHECK_FALSE(l3.tie_embeddings);
  for (const char* name : {"llama3.2-1b", "llama3.2-3b"}) {
    CAPTURE(name);
    const ModelConfig c = preset_config(name);
    CHECK(c.tie_embeddings);
    CHECK(c.max_seq_len == 131072);
    CHECK(c.rope_scaling.type == RopeType::llama3);
    CHECK(c.rope_scaling.factor == 32.0);
    CHECK(c.rope_scaling.low_freq_factor == 1.0);
    CHECK(c.rope_scaling.high_freq_factor == 4.0);
    CHECK(c.rope_scaling.original_max_positions == 8192);
    CHECK(c.bos_token_id == 128000);
    CHECK(c.eos_token_ids == std::vector<int64_t>{128001});
  }
}

TEST_CASE("presets name their tokenizer's special tokens") {
  CHECK(preset_config("gpt2-tiny").bos_token_id == 256);  // the byte tokenizer's end-of-text
  CHECK(preset_config("llama-tiny").eos_token_ids == std::vector<int64_t>{256});
  CHECK(preset_config("gpt2").eos_token_ids == std::vector<int64_t>{50256});
  CHECK(preset_config("llama2-7b").bos_token_id == 1);
  CHECK(preset_config("tinyllama-1.1b").eos_token_ids == std::vector<int64_t>{2});
}

TEST_CASE("validate refuses rope scalings it cannot compute") {
  ModelConfig c = preset_config("llama-tiny");
  c.rope_scaling = RopeScaling{RopeType::linear, 0.0, 1.0, 4.0, 0};
  CHECK_THROWS_WITH_AS(validate(c), doctest::Contains("factor must be a positive finite number"),
                       Error);
  c.rope_scaling = RopeScaling{RopeType::llama3, 8.0, 4.0, 4.0, 64};
  CHECK_THROWS_WITH_AS(validate(c), doctest::Contains("low_freq_factor < high_freq_factor"), Error);
  c.rope_scaling = RopeScaling{RopeType::llama3, 8.0, 1.0, 4.0, 0};
  CHECK_THROWS_WITH_AS(validate(c), doctest::Contains("original_max_position_embeddings"), Error);
  c.rope_scaling = RopeScaling{RopeType::llama3, 8.0, 1.0, 4.0, 64};
  CHECK_NOTHROW(validate(c));
}

}  // namespace
}  // namespace llmft
