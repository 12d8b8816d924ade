// config.json as users download it: Llama 2 / 3 / 3.1 / 3.2, TinyLlama and GPT-2 configs
// parse to the model transformers builds, keys that would change the model in ways llmft
// does not implement are refused by name, and the exported config writes back the rope
// scaling and the special tokens.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "io/hf_config.h"
#include "io/json.h"

using namespace llmft;

namespace {

ModelConfig parse(const std::string& text) {
  return io::parse_hf_config(io::Json::parse(text), "config.json");
}

// Llama 3.2 1B's config.json as published (transformers 4.45).
const char* kLlama32 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256})";

// A tiny LLaMA with the given rope_scaling (or rope_parameters) member and extra keys.
std::string tiny_llama(const std::string& rope, const std::string& extra = "") {
  return R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 97, "hidden_size": 48,
    "intermediate_size": 72, "num_hidden_layers": 2, "num_attention_heads": 6,
    "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0)" +
         (rope.empty() ? "" : ", " + rope) + (extra.empty() ? "" : ", " + extra) + "}";
}

std::string tiny_gpt2(const std::string& extra) {
  return R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 101, "n_positions": 16,
    "n_embd": 48, "n_layer": 2, "n_head": 3, "resid_pdrop": 0.1, "embd_pdrop": 0.1,
    "attn_pdrop": 0.1, "summary_type": "cls_index", "n_ctx": 16)" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

TEST_CASE("Llama 3.2 1B's published config is the llama3.2-1b preset") {
  const ModelConfig c = parse(kLlama32);
  const ModelConfig preset = preset_config("llama3.2-1b");
  CHECK(parameter_count(c) == parameter_count(preset));
  CHECK(c.tie_embeddings);
  CHECK(c.rope_theta == 500000.0f);
  CHECK(c.rope_scaling.type == RopeType::llama3);
  CHECK(c.rope_scaling.factor == 32.0);
  CHECK(c.rope_scaling.low_freq_factor == 1.0);
  CHECK(c.rope_scaling.high_freq_factor == 4.0);
  CHECK(c.rope_scaling.original_max_positions == 8192);
  CHECK(c.bos_token_id == 128000);
  CHECK(c.eos_token_ids == std::vector<int64_t>{128001});
}

TEST_CASE("transformers 5's rope_parameters and the older \"type\" key") {
  const ModelConfig v5 = parse(tiny_llama(
      R"("rope_parameters": {"rope_type": "llama3", "rope_theta": 5000.0, "factor": 8.0,
          "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 16})"));
  CHECK(v5.rope_theta == 5000.0f);
  CHECK(v5.rope_scaling.type == RopeType::llama3);
  CHECK(v5.rope_scaling.original_max_positions == 16);
  const ModelConfig linear =
      parse(tiny_llama(R"("rope_scaling": {"type": "linear", "factor": 2.0})"));
  CHECK(linear.rope_scaling.type == RopeType::linear);
  CHECK(linear.rope_scaling.factor == 2.0);
  const ModelConfig plain =
      parse(tiny_llama(R"("rope_parameters": {"rope_type": "default", "rope_theta": 10.0})"));
  CHECK(plain.rope_scaling.type == RopeType::unscaled);
  CHECK(plain.rope_theta == 10.0f);
}

TEST_CASE("llama3 without original_max_position_embeddings uses the context, as transformers") {
  const ModelConfig c = parse(tiny_llama(
      R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0})"));
  CHECK(c.rope_scaling.original_max_positions == 64);
}

TEST_CASE("eos_token_id may be a list (Llama 3.1 instruct)") {
  const ModelConfig c = parse(tiny_llama("", R"("eos_token_id": [128001, 128008, 128009])"));
  CHECK(c.eos_token_ids == std::vector<int64_t>{128001, 128008, 128009});
  CHECK_FALSE(c.bos_token_id.has_value());
}

TEST_CASE("rope types llmft does not compute are refused by name") {
  for (const char* type : {"dynamic", "yarn", "longrope"}) {
    CAPTURE(type);
    const std::string rope =
        std::string(R"("rope_scaling": {"rope_type": ")") + type + R"(", "factor": 2.0})";
    const std::string refusal = std::string("rope type \"") + type +
                                "\" is not supported; supported: default, linear, llama3";
    CHECK_THROWS_WITH_AS(parse(tiny_llama(rope)), doctest::Contains(refusal.c_str()), Error);
  }
  CHECK_THROWS_WITH_AS(parse(tiny_llama(R"("rope_scaling": {"rope_type": "linear", "factor": 2.0,
                           "partial_rotary_factor": 0.5})")),
                       doctest::Contains("partial_rotary_factor 0.5 is not supported"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_llama("", R"("partial_rotary_factor": 0.25)")),
                       doctest::Contains("partial_rotary_factor 0.25 is not supported"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_llama(R"("rope_scaling": {"rope_type": "llama3"})")),
                       doctest::Contains("\"factor\" must be a finite number"), Error);
}

TEST_CASE("LLaMA keys that change the model llmft builds are refused by name") {
  CHECK_THROWS_WITH_AS(parse(tiny_llama("", R"("attention_bias": true)")),
                       doctest::Contains("attention_bias and mlp_bias are not supported"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_llama("", R"("mlp_bias": true)")),
                       doctest::Contains("attention_bias and mlp_bias are not supported"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_llama("", R"("head_dim": 16)")),
                       doctest::Contains("head_dim must equal hidden_size / num_attention_heads"),
                       Error);
  CHECK_THROWS_WITH_AS(parse(tiny_llama("", R"("pad_token_id": 0)")),
                       doctest::Contains("pad_token_id 0 is not supported"), Error);
  CHECK_NOTHROW(parse(tiny_llama("", R"("pad_token_id": null, "head_dim": 8)")));
}

TEST_CASE("GPT-2 attention flags llmft does not implement are refused by name") {
  CHECK_NOTHROW(parse(tiny_gpt2(R"("scale_attn_weights": true, "reorder_and_upcast_attn": true,
                                  "scale_attn_by_inverse_layer_idx": false)")));
  CHECK_THROWS_WITH_AS(parse(tiny_gpt2(R"("scale_attn_weights": false)")),
                       doctest::Contains("scale_attn_weights false"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_gpt2(R"("scale_attn_by_inverse_layer_idx": true)")),
                       doctest::Contains("scale_attn_by_inverse_layer_idx true"), Error);
  CHECK_THROWS_WITH_AS(parse(tiny_gpt2(R"("add_cross_attention": true)")),
                       doctest::Contains("add_cross_attention true"), Error);
}

TEST_CASE("the exported config writes back the rope scaling and the special tokens") {
  const ModelConfig original = parse(kLlama32);
  const io::Json exported = io::hf_config_json(original);
  const io::Json& rope = exported.at("rope_scaling");
  CHECK(rope.at("rope_type").as_string() == "llama3");
  CHECK(rope.at("factor").as_number() == 32.0);
  CHECK(rope.at("original_max_position_embeddings").as_int() == 8192);
  CHECK(exported.at("bos_token_id").as_int() == 128000);
  CHECK(exported.at("eos_token_id").as_int() == 128001);
  const ModelConfig again = io::parse_hf_config(exported, "exported");
  CHECK(again.rope_scaling.type == RopeType::llama3);
  CHECK(again.rope_scaling.low_freq_factor == 1.0);
  CHECK(again.rope_scaling.high_freq_factor == 4.0);
  CHECK(again.rope_scaling.original_max_positions == 8192);
  CHECK(again.tie_embeddings);
  CHECK(again.eos_token_ids == original.eos_token_ids);

  const io::Json byte_gpt2 = io::hf_config_json(preset_config("gpt2-tiny"));
  CHECK(byte_gpt2.at("bos_token_id").as_int() == 256);
  CHECK(byte_gpt2.at("eos_token_id").as_int() == 256);
  CHECK(io::hf_config_json(preset_config("llama-tiny")).find("rope_scaling") == nullptr);
  const ModelConfig list = parse(tiny_llama("", R"("eos_token_id": [5, 6])"));
  CHECK(io::hf_config_json(list).at("eos_token_id").as_array().size() == 2);
}

}  // namespace
